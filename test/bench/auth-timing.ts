/**
 * `npm run bench:auth`: do an unknown key id and a wrong secret for a real key take the same time? Through the real
 * server (embedded database, the default key cache, no failed-authentication limit so every attempt is answered), in
 * three cases: a repeated attempt (the id is in the process's key cache, from the attempt before); a first attempt (the
 * id is forgotten before each request); and a first attempt while the real key is cached because its owner just used
 * it (a valid request before each attempt of either kind; the unknown id is forgotten). Each round sends one request of
 * each kind in a random order on one keep-alive connection (a fixed order would charge one kind for whatever the other
 * leaves behind); prints the median and p99 of each, how far the medians are apart, and the database lookups.
 */
import { request, Agent } from 'node:http'
import { randomInt } from 'node:crypto'
import { prompts, registry } from '../../resources/index.ts'
import { loadConfig } from '../../runtime/platform/config.ts'
import { startService } from '../../runtime/service/service.ts'
import { createAccount, createKey } from '../../runtime/platform/admin.ts'
import { createLogger } from '../../runtime/core/log.ts'

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
const valid = basic(key.keyId, key.secret)
const once = (authorization: string, expected = 401) =>
  new Promise<number>((resolve, reject) => {
    const t0 = process.hrtime.bigint()
    const req = request({ host: '127.0.0.1', port, path: '/v1/account/quota', agent, headers: { authorization } }, (res) => {
      if (res.statusCode !== expected) reject(new Error(`expected ${expected}, got ${res.statusCode}`))
      res.resume()
      res.on('end', () => resolve(Number(process.hrtime.bigint() - t0) / 1e6))
    })
    req.on('error', reject)
    req.end()
  })

const median = (xs: number[]) => pct(xs, 0.5)
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * p)]

type Case = 'repeated' | 'first' | 'owner'

/** One case: N rounds (after a warm-up), each kind once per round in a random order. */
async function measure(title: string, c: Case): Promise<void> {
  const times: number[][] = kinds.map(() => [])
  const lookups = svc.auth.lookups
  for (let round = 0; round < N + 200; round++) {
    const first = randomInt(2)
    for (const i of [first, 1 - first]) {
      if (c !== 'repeated') svc.auth.forget(kinds[i].keyId)
      if (c === 'owner') {
        svc.auth.forget(key.keyId)
        await once(valid, 200)
      }
      const ms = await once(kinds[i].authorization)
      if (round >= 200) times[i].push(ms)
    }
  }
  process.stdout.write(`${title}\n`)
  for (const [i, k] of kinds.entries()) process.stdout.write(`  ${k.name.padEnd(13)} median ${median(times[i]).toFixed(3)} ms  p99 ${pct(times[i], 0.99).toFixed(3)} ms  (${times[i].length} requests)\n`)
  const [a, b] = times.map(median)
  process.stdout.write(`  medians ${((Math.abs(a - b) / Math.min(a, b)) * 100).toFixed(1)} % apart; ${svc.auth.lookups - lookups} database lookups (${c === 'owner' ? 'the valid requests\' included' : 'both kinds'})\n`)
}

await measure('repeated attempt: the id is in the key cache', 'repeated')
await measure('first attempt: the id is not cached (one database lookup each)', 'first')
await measure("first attempt while the real key is cached (its owner's request just before each attempt)", 'owner')
agent.destroy()
await svc.close()
