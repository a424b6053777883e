/**
 * `npm run bench:auth`: do an unknown key id and a wrong secret for a real key take the same time? Through the real
 * server (embedded database, the default key cache, no failed-authentication limit so every attempt is answered), in
 * two cases: the key id is in the process's key cache (a second attempt within ORGSCAN_AUTH_CACHE_MS), and it is not
 * (a first attempt: the id is forgotten before each request, so each one looks it up in the database). Each round sends
 * one request of each kind in a random order on one keep-alive connection (a fixed order would charge one kind for
 * whatever the other leaves behind); prints the median and p99 of each and how far the medians are apart.
 */
import { request, Agent } from 'node:http'
import { randomInt } from 'node:crypto'
import { prompts, registry } from '../../resources/index.ts'
import { loadConfig } from '../../runtime/config.ts'
import { startService } from '../../runtime/service.ts'
import { createAccount, createKey } from '../../runtime/admin.ts'
import { createLogger } from '../../runtime/log.ts'

const N = Number(process.env.BENCH_REQUESTS ?? 3000)
const svc = await startService(loadConfig({}, { port: 0, dataDir: 'memory://', pepper: 'p'.repeat(40), seedDemo: false, authFailures: { ratePerSecond: 0, burst: 1 } }), { registry, prompts, log: createLogger(() => undefined) })
const account = await createAccount(svc.db.sql, { name: 'Timing', dailyLimit: 1_000_000, monthlyLimit: 1_000_000 })
const key = await createKey(svc.db.sql, svc.pepper, account.id)
const basic = (id: string, secret: string) => 'Basic ' + Buffer.from(`${id}:${secret}`).toString('base64')
const UNKNOWN = 'osk_qqqqqqqqqqqqqqqqqqqq'
const kinds = [
  { name: 'unknown id', keyId: UNKNOWN, authorization: basic(UNKNOWN, key.secret) },
  { name: 'wrong secret', keyId: key.keyId, authorization: basic(key.keyId, 'W'.repeat(43)) },
]
const agent = new Agent({ keepAlive: true, maxSockets: 1 })
const { port } = new URL(svc.url)
const once = (authorization: string) =>
  new Promise<number>((resolve, reject) => {
    const t0 = process.hrtime.bigint()
    const req = request({ host: '127.0.0.1', port, path: '/v1/account/quota', agent, headers: { authorization } }, (res) => {
      if (res.statusCode !== 401) reject(new Error(`expected 401, got ${res.statusCode}`))
      res.resume()
      res.on('end', () => resolve(Number(process.hrtime.bigint() - t0) / 1e6))
    })
    req.on('error', reject)
    req.end()
  })

const median = (xs: number[]) => pct(xs, 0.5)
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * p)]

/** One case: N rounds (after a warm-up), each kind once per round in a random order. */
async function measure(caseName: string, cached: boolean): Promise<void> {
  const times: number[][] = kinds.map(() => [])
  for (let round = 0; round < N + 200; round++) {
    const first = randomInt(2)
    for (const i of [first, 1 - first]) {
      if (!cached) svc.auth.forget(kinds[i].keyId)
      const ms = await once(kinds[i].authorization)
      if (round >= 200) times[i].push(ms)
    }
  }
  process.stdout.write(`${caseName}\n`)
  for (const [i, k] of kinds.entries()) process.stdout.write(`  ${k.name.padEnd(13)} median ${median(times[i]).toFixed(3)} ms  p99 ${pct(times[i], 0.99).toFixed(3)} ms  (${times[i].length} requests)\n`)
  const [a, b] = times.map(median)
  process.stdout.write(`  medians ${((Math.abs(a - b) / Math.min(a, b)) * 100).toFixed(1)} % apart\n`)
}

const lookups0 = svc.auth.lookups
await measure('key id cached (a repeated attempt)', true)
const lookups1 = svc.auth.lookups
await measure('key id not cached (a first attempt: one database lookup each)', false)
process.stdout.write(`database lookups: ${lookups1 - lookups0} in the cached case, ${svc.auth.lookups - lookups1} in the other\n`)
agent.destroy()
await svc.close()
