/**
 * `npm run bench:filters [-- --embedded]`: the most expensive legal filters we know of, timed through the real server on
 * the large demo org (20,966 fields), on PostgreSQL (a throwaway database on BENCH_DATABASE_URL or the local server)
 * or on the embedded database. Prints the median of three runs of each. The RQL limits (docs/rql.md "Limits") are
 * chosen so that every one stays well under a few hundred milliseconds; the fairness test runs the worst of them.
 */
import { randomBytes } from 'node:crypto'
import postgres from 'postgres'
import { prompts, registry } from '../../resources/index.ts'
import { seedDemo } from '../../demo/seed.ts'
import { loadConfig } from '../../runtime/config.ts'
import { startService } from '../../runtime/service.ts'
import { createKey, updateAccount } from '../../runtime/admin.ts'
import { createLogger } from '../../runtime/log.ts'
import { WORST_FILTERS } from './worst-filter-set.ts'

const embedded = process.argv.includes('--embedded')
const adminUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const name = `orgscan_filters_${randomBytes(3).toString('hex')}`
const admin = embedded ? undefined : postgres(adminUrl, { max: 1, onnotice: () => undefined })
if (admin) await admin.unsafe(`CREATE DATABASE ${name}`)
try {
  let seed: Awaited<ReturnType<typeof seedDemo>> | undefined
  const config = loadConfig({}, { port: 0, dataDir: 'memory://', databaseUrl: admin ? adminUrl.replace(/\/[^/?]+(\?|$)/, `/${name}$1`) : undefined, pepper: 'p'.repeat(40), seedDemo: false })
  process.stderr.write(`seeding the large demo org (${embedded ? 'embedded' : 'PostgreSQL'})…\n`)
  const svc = await startService(config, {
    registry,
    prompts,
    log: createLogger(() => undefined),
    onEmptyDatabase: async ({ db, resources }) => {
      seed = await seedDemo(db.sql, resources, { scale: 1 })
    },
  })
  const org = seed!.orgs.find((o) => o.large)!
  await updateAccount(svc.db.sql, org.accountId, { dailyLimit: 1_000_000, monthlyLimit: 1_000_000 })
  svc.ctx.quota.invalidate?.()
  const key = await createKey(svc.db.sql, svc.pepper, org.accountId)
  const authorization = 'Basic ' + Buffer.from(`${key.keyId}:${key.secret}`).toString('base64')
  for (const w of WORST_FILTERS) {
    const url = `${svc.url}/v1/orgs/${org.salesforceId}/${w.path}`
    const times: number[] = []
    let status = 0
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now()
      const r = await fetch(url, { headers: { authorization } })
      await r.arrayBuffer()
      status = r.status
      times.push(performance.now() - t0)
    }
    times.sort((a, b) => a - b)
    process.stdout.write(`${times[1].toFixed(0).padStart(6)} ms  ${status}  ${w.name}\n`)
  }
  await svc.close()
} finally {
  if (admin) {
    await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await admin.end()
  }
}
