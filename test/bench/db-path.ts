/**
 * `npm run bench:db`: the list that reads the database (response cache off), against the bare stack, in rotating
 * short turns on new processes: the part of `npm run bench` where the service's own work between the client and
 * PostgreSQL shows most. Per turn: requests/s, the server's CPU per request and PostgreSQL's (every `postgres`
 * process on the machine), so a gap can be told apart as the service's CPU, the database's or time neither spends.
 *
 * Variants (`BENCH_VARIANTS`, JSON): `[{ "name", "env"?, "dir"? }]`, each a served process with `env` added; `dir` serves
 * another checkout's built command (for example the commit before a change, in a git worktree with its own
 * `npm ci`) against its own database seeded by that checkout, so two builds are compared in one run. Default: the
 * service with the cache off. Loads (`BENCH_LOADS`, comma-separated): `repeated` (default), `pages`.
 *
 * Env: BENCH_DATABASE_URL, BENCH_SECONDS (5), BENCH_CONNECTIONS (32), BENCH_PAIRS (6), BENCH_SCALE (1).
 */
import type { ChildProcess } from 'node:child_process'
import { execFileSync } from 'node:child_process'
import { openSync, readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import postgres from 'postgres'
import { distinctPages, median, processCpuUs, runLoad, spawnServer, SERVE_ARGS, SERVE_ENV, generator, type Load } from './load.ts'
import { registry } from '../../resources/index.ts'
import { seedDemo } from '../../demo/seed.ts'
import { compileRegistry } from '../../runtime/core/registry.ts'
import { migrate } from '../../runtime/platform/db/migrate.ts'
import { createKey, updateAccount } from '../../runtime/platform/admin.ts'

interface Variant { name: string; env?: Record<string, string>; dir?: string; /** Node flags put before the served command's (for example --cpu-prof). */ node?: string[]; /** The bare stack with `env` (for example BENCH_BASELINE_INFLIGHT) rather than the service. */ bare?: boolean }

const adminUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const seconds = Number(process.env.BENCH_SECONDS ?? 5)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32)
const pairs = Number(process.env.BENCH_PAIRS ?? 6)
const scale = Number(process.env.BENCH_SCALE ?? 1)
const variants: Variant[] = JSON.parse(process.env.BENCH_VARIANTS ?? '[{"name":"service, cache off"}]')
const loads = (process.env.BENCH_LOADS ?? 'repeated').split(',')
const pepper = randomBytes(32).toString('base64url')
const log = (s: string) => process.stderr.write(s + '\n')
mkdirSync(new URL('results/', import.meta.url), { recursive: true })
const serverLog = openSync(new URL('results/server-stderr.tmp', import.meta.url), 'w')

/** CPU time of every `postgres` process so far, µs. */
function postgresCpuUs(): number {
  let us = 0
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      if (!stat.includes('(postgres)')) continue
      const f = stat.split(') ')[1].split(' ')
      us += (Number(f[11]) + Number(f[12])) * 10_000
    } catch {
      // gone meanwhile
    }
  }
  return us
}

const stats = postgres(adminUrl, { max: 1, onnotice: () => undefined })
/** Transactions committed in a database so far (each statement outside a transaction is one). */
async function transactions(db: string): Promise<number> {
  const [r] = await stats<{ n: string }[]>`SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = ${db}`
  return Number(r?.n ?? 0)
}

async function stop(child: ChildProcess): Promise<void> {
  await new Promise<void>((r) => {
    child.removeAllListeners('exit')
    child.once('exit', () => r())
    child.kill('SIGTERM')
    setTimeout(() => child.kill('SIGKILL'), 5000).unref()
  })
}

interface Prepared { orgId: string; accountId: string; authorization: string; dbUrl: string; dbName: string }

/** A database of its own, migrated and seeded by the checkout `dir` (this one when undefined), with a bench key. */
async function prepare(dir: string | undefined): Promise<Prepared> {
  const dbName = `orgscan_benchdb_${process.pid}_${randomBytes(3).toString('hex')}`
  const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined })
  await admin.unsafe(`CREATE DATABASE ${dbName}`)
  await admin.end()
  const dbUrl = adminUrl.replace(/\/[^/]*$/, '/' + dbName)
  if (dir) {
    // The other checkout seeds with its own code: its migrations, its demo data, its key format.
    const out = execFileSync(process.execPath, ['--import', 'tsx', new URL('db-path-seed.ts', import.meta.url).pathname], { cwd: dir, env: { ...process.env, DATABASE_URL: dbUrl, ORGSCAN_PEPPER: pepper, BENCH_SCALE: String(scale) }, stdio: ['ignore', 'pipe', 'inherit'] })
    return { ...JSON.parse(out.toString()), dbUrl, dbName }
  }
  const sql = postgres(dbUrl, { max: 4, onnotice: () => undefined })
  await migrate(sql)
  const seed = await seedDemo(sql, compileRegistry(registry), { scale })
  const org = seed.orgs.find((o) => o.large)!
  await updateAccount(sql, org.accountId, { dailyLimit: 1_000_000_000, monthlyLimit: 1_000_000_000 })
  const key = await createKey(sql, pepper, org.accountId)
  await sql.unsafe('VACUUM (ANALYZE)')
  await sql.unsafe('CHECKPOINT').catch(() => undefined)
  await sql.end()
  return { orgId: org.salesforceId, accountId: org.accountId, authorization: 'Basic ' + Buffer.from(`${key.keyId}:${key.secret}`).toString('base64'), dbUrl, dbName }
}

const here = await prepare(undefined)
const prepared = new Map<string | undefined, Prepared>([[undefined, here]])
for (const v of variants) if (!v.bare && !prepared.has(v.dir)) prepared.set(v.dir, await prepare(v.dir))

interface Turn { rps: number; cpuUs: number; pgUs: number; p99: number; xacts: number }
const table = new Map<string, Turn[]>()
const rows: Array<{ name: string; args: string[]; env: Record<string, string>; dir?: string; db: Prepared; baseline: boolean }> = [
  { name: 'baseline', args: ['--import', 'tsx', 'test/bench/baseline-server.ts'], env: {}, db: here, baseline: true },
  ...variants.map((v) =>
    v.bare
      ? { name: v.name, args: [...(v.node ?? []), '--import', 'tsx', 'test/bench/baseline-server.ts'], env: v.env ?? {}, db: here, baseline: true }
      : { name: v.name, args: [...(v.node ?? []), ...SERVE_ARGS], env: { ...SERVE_ENV, ORGSCAN_CACHE_MB: '0', ...v.env }, dir: v.dir, db: prepared.get(v.dir)!, baseline: false },
  ),
]
try {
  for (let i = 0; i < pairs; i++) {
    // The order rotates every turn set, so no variant always follows the same one.
    const order = rows.map((_, k) => rows[(k + i) % rows.length])
    for (const row of order) {
      const env = { DATABASE_URL: row.db.dbUrl, ORGSCAN_PEPPER: pepper, BENCH_ACCOUNT_ID: row.db.accountId, PORT: '0', ORGSCAN_SEED_DEMO: 'false', ...row.env }
      const { child, url } = await spawnServer(row.args, env, serverLog, row.dir)
      try {
        const headers: Record<string, string> = row.baseline ? {} : { authorization: row.db.authorization }
        for (const kind of loads) {
          const path = `/v1/orgs/${row.db.orgId}/fields?limit=50`
          const load: Load = { url: url + path, headers, paths: kind === 'pages' ? distinctPages(row.db.orgId) : undefined }
          const check = await fetch(load.url, { headers })
          if (check.status !== 200) throw new Error(`${row.name} answered ${check.status}: ${await check.text()}`)
          await runLoad(load, connections, 2)
          const x0 = await transactions(row.db.dbName)
          const c0 = processCpuUs(child.pid!)
          const p0 = postgresCpuUs()
          const m = await runLoad(load, connections, seconds)
          const n = Math.max(1, m.rps * seconds)
          const [c1, p1] = [processCpuUs(child.pid!), postgresCpuUs()]
          // The statistics reach pg_stat_database when a backend is idle, at most a second late.
          await new Promise((r) => setTimeout(r, 1500))
          const turn = { rps: m.rps, cpuUs: (c1 - c0) / n, pgUs: (p1 - p0) / n, p99: m.p99, xacts: ((await transactions(row.db.dbName)) - x0) / n }
          const key = `${row.name} · ${kind}`
          ;(table.get(key) ?? table.set(key, []).get(key)!).push(turn)
          log(`turn ${i + 1} ${key.padEnd(40)} ${m.rps.toFixed(0).padStart(6)} req/s  p99 ${m.p99} ms  server ${turn.cpuUs.toFixed(0)} µs  postgres ${turn.pgUs.toFixed(0)} µs  transactions ${turn.xacts.toFixed(2)} a request${m.non2xx ? `  non-2xx ${m.non2xx}` : ''}`)
        }
      } finally {
        await stop(child)
      }
    }
  }
  log(`\nmedians over ${pairs} turns of ${seconds} s, ${connections} connections, load generator ${generator}:`)
  const out: Record<string, unknown> = {}
  for (const kind of loads) {
    const base = median(table.get(`baseline · ${kind}`)!.map((t) => t.rps))
    for (const row of rows) {
      const ts = table.get(`${row.name} · ${kind}`)!
      const s = { rps: median(ts.map((t) => t.rps)), ratio: median(ts.map((t) => t.rps)) / base, serverUs: median(ts.map((t) => t.cpuUs)), postgresUs: median(ts.map((t) => t.pgUs)), p99: median(ts.map((t) => t.p99)) }
      out[`${row.name} · ${kind}`] = { ...s, turns: ts }
      log(`  ${`${row.name} · ${kind}`.padEnd(40)} ${s.rps.toFixed(0).padStart(6)} req/s  ratio to baseline ${s.ratio.toFixed(2)}  server ${s.serverUs.toFixed(0)} µs  postgres ${s.postgresUs.toFixed(0)} µs a request  p99 ${s.p99} ms`)
    }
  }
  writeFileSync(new URL('results/db-path-latest.json', import.meta.url), JSON.stringify({ at: new Date().toISOString(), generator, seconds, connections, pairs, variants, results: out }, null, 2) + '\n')
} finally {
  await stats.end()
  const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined })
  for (const p of prepared.values()) await admin.unsafe(`DROP DATABASE IF EXISTS ${p.dbName} WITH (FORCE)`)
  await admin.end()
}
