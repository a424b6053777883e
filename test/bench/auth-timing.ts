/**
 * `npm run bench:auth`: do an unknown key id and a wrong secret take the same time? Through the real server (embedded
 * database, default key cache, no failed-authentication limit so every attempt is answered), interleaving requests
 * with an unknown id, a wrong secret for a real key, and the right secret; prints median and p99 of each.
 */
import { request, Agent } from 'node:http'
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
const kinds = {
  'unknown id': basic('osk_qqqqqqqqqqqqqqqqqqqq', key.secret),
  'wrong secret': basic(key.keyId, 'W'.repeat(43)),
  'valid key': basic(key.keyId, key.secret),
}
const agent = new Agent({ keepAlive: true, maxSockets: 1 })
const { port } = new URL(svc.url)
const once = (authorization: string) =>
  new Promise<number>((resolve, reject) => {
    const t0 = process.hrtime.bigint()
    const req = request({ host: '127.0.0.1', port, path: '/v1/account/quota', agent, headers: { authorization } }, (res) => {
      res.resume()
      res.on('end', () => resolve(Number(process.hrtime.bigint() - t0) / 1e6))
    })
    req.on('error', reject)
    req.end()
  })
const times: Record<string, number[]> = Object.fromEntries(Object.keys(kinds).map((k) => [k, []]))
for (let i = 0; i < 200; i++) for (const a of Object.values(kinds)) await once(a) // warm-up
for (let i = 0; i < N; i++) for (const [k, a] of Object.entries(kinds)) times[k].push(await once(a))
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * p)]
for (const [k, xs] of Object.entries(times)) process.stdout.write(`${k.padEnd(13)} median ${pct(xs, 0.5).toFixed(3)} ms  p99 ${pct(xs, 0.99).toFixed(3)} ms  (${xs.length} requests)\n`)
agent.destroy()
await svc.close()
