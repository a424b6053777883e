/**
 * `npm run bench:compare`: builds or settings of the service against each other and against the bare stack, in one
 * run, in rotating short turns on new processes (a slow process or a noisy minute is one turn's outlier, which the
 * median passes over). Per turn: requests/s, p99, the server's CPU per request and PostgreSQL's (every `postgres`
 * process on the machine), so a gap can be told apart as the service's CPU, the database's, or time neither spends.
 *
 * Loads (`BENCH_LOADS`, comma-separated), each on the fields list of the large demo org, limit 50:
 * - `repeated` and `pages`: the same page again and distinct pages, with the response cache off (every request reads
 *   the database);
 * - `hit`, `304` and `mcp`: the same page from the response cache, with If-None-Match, and as the MCP tool call.
 * Every ratio is to the bare stack's `repeated` in the same turns (as in `npm run bench`).
 *
 * Variants (`BENCH_VARIANTS`, JSON): `[{ "name", "env"?, "node"?, "dir"?, "bare"?, "loads"? }]`: the service with `env` added and
 * `node` flags before its command; `dir`: another checkout's command (for example the commit before a change, in a git
 * worktree with its own `npm ci` and build), which migrates and seeds a database of its own through its command line,
 * so that two builds are compared in one run whatever their schemas; `bare`: the bare stack with `env` (see
 * baseline-server.ts); `loads`: its own list instead of `BENCH_LOADS`. Default: this checkout's service.
 *
 * Env: BENCH_DATABASE_URL, BENCH_SECONDS (5), BENCH_CONNECTIONS (32), BENCH_PAIRS (6), BENCH_SCALE (1),
 * BENCH_OUT (a results file name, default compare-latest.json).
 */
import { execFileSync } from 'node:child_process'
import { openSync, readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import postgres from 'postgres'
import { distinctPages, mcpLoad, median, processCpuUs, runLoad, spawnServer, stopServer as stop, SERVE_ARGS, SERVE_ENV, generator, type Load } from './load.ts'

interface Variant { name: string; env?: Record<string, string>; node?: string[]; dir?: string; bare?: boolean; loads?: LoadKind[] }
type LoadKind = 'repeated' | 'pages' | 'hit' | '304' | 'mcp'

const adminUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const seconds = Number(process.env.BENCH_SECONDS ?? 5)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32)
const pairs = Number(process.env.BENCH_PAIRS ?? 6)
const scale = Number(process.env.BENCH_SCALE ?? 1)
const variants: Variant[] = JSON.parse(process.env.BENCH_VARIANTS ?? '[{"name":"service"}]')
const loads = (process.env.BENCH_LOADS ?? 'repeated').split(',') as LoadKind[]
for (const l of loads) if (!['repeated', 'pages', 'hit', '304', 'mcp'].includes(l)) throw new Error(`BENCH_LOADS: unknown load ${l}`)
const pepper = randomBytes(32).toString('base64url')
const log = (s: string) => process.stderr.write(s + '\n')
mkdirSync(new URL('results/', import.meta.url), { recursive: true })
const serverLog = openSync(new URL('results/server-stderr.tmp', import.meta.url), 'w')
const here = new URL('../../', import.meta.url).pathname

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

interface Prepared { orgId: string; accountId: string; authorization: string; dbUrl: string; dbName: string }

/**
 * A database of its own, migrated and seeded by the command of the checkout `dir`, with a quota that never runs out
 * and a key. Only the command line and two tables every version has (orgs, fields) are used, so any build can be
 * compared.
 */
async function prepare(dir: string): Promise<Prepared> {
  const dbName = `orgscan_compare_${process.pid}_${randomBytes(3).toString('hex')}`
  const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined })
  await admin.unsafe(`CREATE DATABASE ${dbName}`)
  const u = new URL(adminUrl)
  u.pathname = `/${dbName}`
  const dbUrl = u.toString()
  const env = { ...process.env, DATABASE_URL: dbUrl, ORGSCAN_PEPPER: pepper }
  const cli = (...args: string[]) => execFileSync(process.execPath, ['bin/orgscan.js', ...args], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] }).toString()
  log(`seeding scale ${scale} with ${dir}…`)
  cli('migrate')
  cli('seed', '--scale', String(scale))
  const db = postgres(dbUrl, { max: 1, onnotice: () => undefined })
  const [org] = await db<{ org: string; account: string }[]>`SELECT o.salesforce_id AS org, o.account_id::text AS account FROM orgs o JOIN fields f ON f.scan_id = o.latest_scan_id GROUP BY 1, 2 ORDER BY count(*) DESC LIMIT 1`
  cli('accounts', 'update', org.account, '--daily-limit', '1000000000', '--monthly-limit', '1000000000')
  const key = JSON.parse(cli('keys', 'create', '--account', org.account, '--json')) as { keyId: string; secret: string }
  // Written just now: vacuumed and analyzed, dirty pages out, so that neither autovacuum nor the checkpointer takes the first turns' CPU.
  await db.unsafe('VACUUM (ANALYZE)')
  await db.unsafe('CHECKPOINT').catch(() => undefined)
  await db.end()
  await admin.end()
  return { orgId: org.org, accountId: org.account, authorization: 'Basic ' + Buffer.from(`${key.keyId}:${key.secret}`).toString('base64'), dbUrl, dbName }
}

const stats = postgres(adminUrl, { max: 1, onnotice: () => undefined })
/** Transactions committed in a database so far (each statement outside a transaction is one). */
async function transactions(db: string): Promise<number> {
  const [r] = await stats<{ n: string }[]>`SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = ${db}`
  return Number(r?.n ?? 0)
}

const prepared = new Map<string, Prepared>()
try {
  prepared.set(here, await prepare(here))
  for (const v of variants) if (!v.bare && v.dir && !prepared.has(v.dir)) prepared.set(v.dir, await prepare(v.dir))

  interface Row { name: string; args: string[]; env: Record<string, string>; dir?: string; db: Prepared; bare: boolean; loads?: LoadKind[] }
  const bareArgs = ['--import', 'tsx', 'test/bench/baseline-server.ts']
  const rows: Row[] = [
    { name: 'baseline', args: bareArgs, env: {}, db: prepared.get(here)!, bare: true },
    ...variants.map((v) =>
      v.bare
        ? { name: v.name, args: [...(v.node ?? []), ...bareArgs], env: v.env ?? {}, db: prepared.get(here)!, bare: true }
        : { name: v.name, args: [...(v.node ?? []), ...SERVE_ARGS], env: { ...SERVE_ENV, ...v.env }, dir: v.dir, db: prepared.get(v.dir ?? here)!, bare: false, loads: v.loads },
    ),
  ]

  interface Turn { rps: number; p99: number; cpuUs: number; pgUs: number; xacts: number }
  const table = new Map<string, Turn[]>()
  /** One turn of `kind` on a new process of `row`. */
  const turn = async (row: Row, kind: LoadKind): Promise<Turn> => {
    const cacheOff = kind === 'repeated' || kind === 'pages'
    const env = { DATABASE_URL: row.db.dbUrl, ORGSCAN_PEPPER: pepper, BENCH_ACCOUNT_ID: row.db.accountId, PORT: '0', ORGSCAN_SEED_DEMO: 'false', ...(cacheOff ? { ORGSCAN_CACHE_MB: '0' } : {}), ...row.env }
    const { child, url } = await spawnServer(row.args, env, serverLog, row.dir)
    try {
      const headers: Record<string, string> = row.bare ? {} : { authorization: row.db.authorization }
      const path = `/v1/orgs/${row.db.orgId}/fields?limit=50`
      let load: Load = { url: url + path, headers, paths: kind === 'pages' ? distinctPages(row.db.orgId) : undefined }
      if (kind === '304') {
        const etag = (await fetch(url + path, { headers })).headers.get('etag')!
        load = { ...load, headers: { ...headers, 'if-none-match': etag }, expect: 304 }
      }
      if (kind === 'mcp') load = await mcpLoad(url, headers, row.db.orgId)
      const check = await fetch(load.url, { method: load.method ?? 'GET', headers: load.headers, body: load.body })
      if (check.status !== (load.expect ?? 200)) throw new Error(`${row.name} ${kind} answered ${check.status}: ${await check.text()}`)
      await runLoad(load, connections, 2) // warm-up
      const x0 = await transactions(row.db.dbName)
      const [c0, p0] = [processCpuUs(child.pid!), postgresCpuUs()]
      const m = await runLoad(load, connections, seconds)
      const [c1, p1] = [processCpuUs(child.pid!), postgresCpuUs()]
      if (m.non2xx > 0 && kind !== '304') log(`  (${row.name} ${kind}: ${m.non2xx} answers not 2xx)`)
      // Statistics reach pg_stat_database when a backend goes idle, at most a second late.
      await new Promise((r) => setTimeout(r, 1500))
      const n = Math.max(1, m.rps * seconds)
      return { rps: m.rps, p99: m.p99, cpuUs: (c1 - c0) / n, pgUs: (p1 - p0) / n, xacts: ((await transactions(row.db.dbName)) - x0) / n }
    } finally {
      await stop(child)
    }
  }

  const jobs: Array<[Row, LoadKind]> = rows.flatMap((row) => (row.bare ? [[row, 'repeated' as LoadKind]] : (row.loads ?? loads).map((k) => [row, k] as [Row, LoadKind])))
  log(`${pairs} rounds of ${jobs.length} turns of ${seconds} s, ${connections} connections, load generator ${generator}`)
  for (let i = 0; i < pairs; i++) {
    // The order rotates every round, so no turn always follows the same one.
    for (let k = 0; k < jobs.length; k++) {
      const [row, kind] = jobs[(k + i) % jobs.length]
      const t = await turn(row, kind)
      const key = `${row.name} · ${kind}`
      ;(table.get(key) ?? table.set(key, []).get(key)!).push(t)
      log(`round ${i + 1} ${key.padEnd(36)} ${t.rps.toFixed(0).padStart(6)} req/s  p99 ${t.p99} ms  server ${t.cpuUs.toFixed(0)} µs  postgres ${t.pgUs.toFixed(0)} µs  statements ${t.xacts.toFixed(2)} a request`)
    }
  }
  const base = median(table.get('baseline · repeated')!.map((t) => t.rps))
  log(`\nmedians of ${pairs} rounds; ratio: to the bare stack's repeated list (${base.toFixed(0)} req/s)`)
  const results: Record<string, unknown> = {}
  for (const [row, kind] of jobs) {
    const key = `${row.name} · ${kind}`
    const ts = table.get(key)!
    const s = { rps: median(ts.map((t) => t.rps)), p99: median(ts.map((t) => t.p99)), serverUs: median(ts.map((t) => t.cpuUs)), postgresUs: median(ts.map((t) => t.pgUs)), statements: median(ts.map((t) => t.xacts)) }
    results[key] = { ...s, ratio: s.rps / base, turns: ts }
    log(`  ${key.padEnd(36)} ${s.rps.toFixed(0).padStart(6)} req/s  ratio ${(s.rps / base).toFixed(2)}  p99 ${s.p99} ms  server ${s.serverUs.toFixed(0)} µs  postgres ${s.postgresUs.toFixed(0)} µs a request`)
  }
  const out = process.env.BENCH_OUT ?? 'compare-latest.json'
  writeFileSync(new URL(`results/${out}`, import.meta.url), JSON.stringify({ at: new Date().toISOString(), generator, seconds, connections, rounds: pairs, scale, variants, loads, results }, null, 2) + '\n')
  log(`written: test/bench/results/${out}`)
} finally {
  await stats.end()
  const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined })
  for (const p of prepared.values()) await admin.unsafe(`DROP DATABASE IF EXISTS ${p.dbName} WITH (FORCE)`)
  await admin.end()
}
