/**
 * `npm run bench:filters [-- --embedded]`: the most expensive legal list requests we know of (worst-filter-set.ts), timed
 * through the served command (`npm start`'s, response cache off, so every request reads the database) on the large demo
 * org (20,966 fields), on PostgreSQL (a throwaway database on BENCH_DATABASE_URL or the local server, vacuumed and
 * analysed after the seed as autovacuum would soon do) or on the embedded database (a throwaway folder, as the seed left
 * it): each shape's median and slowest of five runs, offset 20,000 under every sort, and a load of distinct deep pages
 * (worst-filter-times.ts).
 *
 * Writes test/bench/results/worst-filters-<postgres|embedded>.json. When worst-filters-<…>-before.json is there (the
 * same bench run on the code before docs/adr/0105-cheap-worst-filters.md), each line shows that figure too.
 *
 * Env: BENCH_DATABASE_URL, BENCH_FILTERS_OUT (another file to write, e.g. the "before" one), BENCH_COMMIT (the code's
 * name in the file, default `git rev-parse --short HEAD`), BENCH_SECONDS (10: the load).
 */
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { registry } from '../../resources/index.ts'
import { seedDemo } from '../../demo/seed.ts'
import { compileRegistry } from '../../runtime/core/registry.ts'
import { migrate } from '../../runtime/platform/db/migrate.ts'
import { openDatabase } from '../../runtime/platform/db/connect.ts'
import { createKey, updateAccount } from '../../runtime/platform/admin.ts'
import { spawnServer, SERVE_ARGS, SERVE_ENV } from './load.ts'
import { timeWorstFilters, type WorstFilterTimes } from './worst-filter-times.ts'

const embedded = process.argv.includes('--embedded')
const kind = embedded ? 'embedded' : 'postgres'
const adminUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const results = new URL('results/', import.meta.url)
const log = (s: string) => process.stdout.write(s + '\n')

const name = `orgscan_filters_${randomBytes(3).toString('hex')}`
const dataDir = embedded ? mkdtempSync(join(tmpdir(), 'orgscan-filters-')) : undefined
const dbUrl = embedded ? undefined : adminUrl.replace(/\/[^/?]+(\?|$)/, `/${name}$1`)
const admin = embedded ? undefined : postgres(adminUrl, { max: 1, onnotice: () => undefined })
if (admin) await admin.unsafe(`CREATE DATABASE ${name}`)
const serverLog = join(tmpdir(), `orgscan-filters-${process.pid}.log`)
let child: Awaited<ReturnType<typeof spawnServer>>['child'] | undefined
try {
  process.stderr.write(`seeding the large demo org (${kind})…\n`)
  const db = await openDatabase({ databaseUrl: dbUrl, dataDir })
  await migrate(db.sql)
  const seed = await seedDemo(db.sql, compileRegistry(registry), { scale: 1 })
  const org = seed.orgs.find((o) => o.large)!
  await updateAccount(db.sql, org.accountId, { dailyLimit: 1_000_000_000, monthlyLimit: 1_000_000_000 })
  const pepper = randomBytes(32).toString('base64url')
  const key = await createKey(db.sql, pepper, org.accountId)
  if (!embedded) await db.sql.unsafe('VACUUM (ANALYZE)')
  await db.close()

  const env = { ORGSCAN_PEPPER: pepper, PORT: '0', ORGSCAN_SEED_DEMO: 'false', ORGSCAN_CACHE_MB: '0', ...(dbUrl ? { DATABASE_URL: dbUrl } : { ORGSCAN_DATA_DIR: dataDir! }) }
  const started = await spawnServer(SERVE_ARGS, { ...SERVE_ENV, ...env }, openSync(serverLog, 'w'))
  child = started.child
  const authorization = 'Basic ' + Buffer.from(`${key.keyId}:${key.secret}`).toString('base64')
  const before = readJson(new URL(`worst-filters-${kind}-before.json`, results))
  const times = await timeWorstFilters({ url: started.url, orgId: org.salesforceId, authorization, loadSeconds: Number(process.env.BENCH_SECONDS ?? 10), log })
  const out = { date: new Date().toISOString(), commit: process.env.BENCH_COMMIT ?? commit(), database: kind, ...times }
  writeFileSync(new URL(`worst-filters-${kind}.json`, results), JSON.stringify(out, null, 2) + '\n')
  if (process.env.BENCH_FILTERS_OUT) writeFileSync(process.env.BENCH_FILTERS_OUT, JSON.stringify(out, null, 2) + '\n')
  if (before) report(before, times)
} finally {
  if (child && child.exitCode === null) child.kill('SIGKILL')
  rmSync(serverLog, { force: true })
  if (dataDir) rmSync(dataDir, { recursive: true, force: true })
  if (admin) {
    await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await admin.end()
  }
}

function readJson(u: URL): (WorstFilterTimes & { commit?: string }) | undefined {
  return existsSync(u) ? JSON.parse(readFileSync(u, 'utf8')) : undefined
}

function commit(): string | undefined {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
  } catch {
    return undefined
  }
}

/** Before and now, side by side (medians, ms; the load in req/s and its p99). */
function report(before: WorstFilterTimes & { commit?: string }, now: WorstFilterTimes): void {
  log(`\nbefore (${before.commit ?? 'the previous code'}, worst-filters-${kind}-before.json) and now, median ms:`)
  for (const s of now.shapes) {
    const b = before.shapes.find((x) => x.name === s.name)
    log(`${(b ? b.medianMs.toFixed(0) : '-').padStart(7)} → ${s.medianMs.toFixed(0).padStart(5)}  ${s.name}`)
  }
  log(`${before.deepSorts.medianMs.toFixed(0).padStart(7)} → ${now.deepSorts.medianMs.toFixed(0).padStart(5)}  offset 20,000 under each sort (slowest: ${before.deepSorts.maxMs.toFixed(0)} → ${now.deepSorts.maxMs.toFixed(0)} ms)`)
  log(`${before.deepLoad.rps.toFixed(0).padStart(7)} → ${now.deepLoad.rps.toFixed(0).padStart(5)}  req/s of distinct pages at offsets 0-20,000 (p99 ${before.deepLoad.p99} → ${now.deepLoad.p99} ms)`)
}
