/**
 * The tenant-starvation attack: account A keeps `concurrency` of the most expensive legal requests in flight (each
 * one distinct, so no response cache can answer it; the tester's shapes first: test/bench/worst-filter-set.ts) while
 * account B sends ordinary requests one after the other, at most one every `victimIntervalMs` (the tester read a small
 * list every 100 ms); reports what B saw. B's requests are the same few lists (which a response cache answers), or with
 * `victimMisses` each one a page never asked before (every one reads the database). Used by
 * test/alone/fairness.test.ts and `npm run bench`; also runnable against any server:
 *
 *   node --import tsx test/attack/tenant-starvation.ts URL A_KEY_ID:A_SECRET A_ORG_ID B_KEY_ID:B_SECRET B_ORG_ID [SECONDS]
 */
import { Agent, request } from 'node:http'
import { WORST_FILTERS } from '../bench/worst-filter-set.ts'

export interface Party {
  /** `Basic …` header. */
  authorization: string
  orgId: string
}

export interface AttackReport {
  victim: { latenciesMs: number[]; statuses: Record<number, number> }
  attacker: { statuses: Record<number, number> }
}

/** The victim's ordinary requests: default pages of common lists. */
export const PLAIN = ['fields?limit=50', 'objects?limit=50', 'issues', 'connectedApps']

/** B's pages asked so far (on any server): the next one is never one asked before, in this attack or an earlier one. */
let pages = 0

/** The `i`-th of B's requests: a plain list, or (misses) a page of fields or objects never asked before. */
function victimPath(i: number, misses: boolean): string {
  if (!misses) return PLAIN[i % PLAIN.length]
  const k = pages++
  const n = Math.floor(k / 2)
  return `${k % 2 ? 'objects' : 'fields'}?limit=${10 + (n % 30)}&offset=${Math.floor(n / 30)}`
}

function get(agent: Agent, base: URL, path: string, authorization: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request({ host: base.hostname, port: base.port, path, agent, headers: { authorization } }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode ?? 0))
    })
    req.on('error', () => resolve(0))
    req.end()
  })
}

const count = (m: Record<number, number>, s: number) => (m[s] = (m[s] ?? 0) + 1)

/** Makes A's requests distinct across attacks on one server too (a second attack's would be the first's again). */
let nonce = 0

/**
 * The same expensive request made unique (`and(F, not(eq(field,nonce-k)))`, on a field the filter already reads: the
 * cost of the filter is unchanged), so a server's response cache cannot answer it — as an attacker would.
 */
function distinct(path: string, k: number): string {
  const filter = decodeURIComponent(/filter=([^&]*)/.exec(path)?.[1] ?? '')
  // A filter already at the length limit (4,096) stays as it is; its page varies instead (the filter's cost is the same).
  if (filter.length > 4000) {
    const offset = Number(/offset=(\d+)/.exec(path)?.[1] ?? 0) + Math.floor(k / 150)
    return path.replace(/limit=200/, `limit=${200 - (k % 150)}`).replace(/&offset=\d+/, '') + `&offset=${offset}`
  }
  const field = /\((\w+),/.exec(filter)?.[1] ?? 'id'
  return path.replace(/filter=[^&]*/, `filter=${encodeURIComponent(`and(${filter},not(eq(${field},nonce-${k})))`)}`)
}

export interface AttackOptions {
  url: string
  attacker: Party
  victim: Party
  seconds: number
  /** A's requests in flight. */
  concurrency: number
  /** B starts a request at most this often (ms); 0: each as soon as the previous one is answered. */
  victimIntervalMs?: number
  /** Every B request a page never asked before, so no response cache answers it. */
  victimMisses?: boolean
  /** Send B's requests only, A not at all: B alone, for the same measure without the attack. */
  alone?: boolean
}

export async function starvationAttack(o: AttackOptions): Promise<AttackReport> {
  const base = new URL(o.url)
  const until = Date.now() + o.seconds * 1000
  const report: AttackReport = { victim: { latenciesMs: [], statuses: {} }, attacker: { statuses: {} } }
  const attackerAgent = new Agent({ keepAlive: true, maxSockets: o.concurrency })
  const victimAgent = new Agent({ keepAlive: true, maxSockets: 1 })
  const attacker = async (n: number) => {
    for (let i = n; Date.now() < until; i++) {
      const w = WORST_FILTERS[i % WORST_FILTERS.length]
      count(report.attacker.statuses, await get(attackerAgent, base, `/v1/orgs/${o.attacker.orgId}/${distinct(w.path, nonce++)}`, o.attacker.authorization))
    }
  }
  const victim = async () => {
    for (let i = 0; Date.now() < until; i++) {
      const t0 = performance.now()
      const status = await get(victimAgent, base, `/v1/orgs/${o.victim.orgId}/${victimPath(i, o.victimMisses === true)}`, o.victim.authorization)
      const took = performance.now() - t0
      report.victim.latenciesMs.push(took)
      count(report.victim.statuses, status)
      const rest = (o.victimIntervalMs ?? 0) - took
      if (rest > 0) await new Promise((r) => setTimeout(r, rest))
    }
  }
  // The attacker starts first and is in full swing before the victim's first request.
  const attackers = o.alone ? [] : Array.from({ length: o.concurrency }, (_, n) => attacker(n))
  await new Promise((r) => setTimeout(r, o.alone ? 0 : 300))
  await Promise.all([...attackers, victim()])
  attackerAgent.destroy()
  victimAgent.destroy()
  return report
}

export function percentile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(s.length * p))]
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [url, a, aOrg, b, bOrg, seconds = '10'] = process.argv.slice(2)
  const basic = (kv: string) => 'Basic ' + Buffer.from(kv).toString('base64')
  const r = await starvationAttack({ url, attacker: { authorization: basic(a), orgId: aOrg }, victim: { authorization: basic(b), orgId: bOrg }, seconds: Number(seconds), concurrency: 16, victimIntervalMs: 100 })
  const lat = r.victim.latenciesMs
  process.stdout.write(`victim: ${lat.length} requests, statuses ${JSON.stringify(r.victim.statuses)}, p50 ${percentile(lat, 0.5).toFixed(0)} ms, p99 ${percentile(lat, 0.99).toFixed(0)} ms, max ${Math.max(...lat).toFixed(0)} ms\n`)
  process.stdout.write(`attacker: statuses ${JSON.stringify(r.attacker.statuses)}\n`)
}
