/**
 * `npm run bench:soak`: does a busy process slow down or grow with age? One served process (`npm start`'s command,
 * PostgreSQL, the response cache off so every request reads the database through the pool) answers the benchmark's
 * authenticated fields list without a pause for BENCH_SOAK_SECONDS (300), in turns of 10 s; each turn's throughput and
 * the process's resident memory are printed, then the last third of the turns against the first third (after the
 * first turn, which warms up). A structure that grows with every request served — postgres.js's pool queues did, by a
 * slot a query, until postgres.js was patched (patches/README.md, docs/adr/0013-postgres-js-patches.md) — shows as a
 * falling ratio and a rising memory; this machine's noise moves single turns by ±15 %, so read the trend, not one turn.
 *
 * Env: BENCH_DATABASE_URL (default TEST_DATABASE_URL or postgres://postgres@127.0.0.1:5432/test), BENCH_SOAK_SECONDS.
 */
import type { ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { openSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { registry } from '../../resources/index.ts'
import { seedDemo } from '../../demo/seed.ts'
import { compileRegistry } from '../../runtime/core/registry.ts'
import { migrate } from '../../runtime/platform/db/migrate.ts'
import { createKey, updateAccount } from '../../runtime/platform/admin.ts'
import { cpuTimes, median, processCpuUs, runLoad, spawnServer, SERVE_ARGS, SERVE_ENV } from './load.ts'

const root = new URL('../../', import.meta.url).pathname
const adminUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const seconds = Number(process.env.BENCH_SOAK_SECONDS ?? 300)
const TURN = 10
const log = (s: string) => process.stdout.write(s + '\n')

const rssMb = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024

/** The service's stderr (its access log): a file, as a log collector would take it; removed at the end. */
const accessLogFile = join(tmpdir(), `orgscan-soak-${process.pid}.log`)

function start(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  return spawnServer(SERVE_ARGS, { ...SERVE_ENV, ...env }, openSync(accessLogFile, 'w'))
}

const dbName = `orgscan_soak_${process.pid}_${randomBytes(3).toString('hex')}`
const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined })
await admin.unsafe(`CREATE DATABASE ${dbName}`)
const dbUrl = adminUrl.replace(/\/[^/?]+(\?|$)/, `/${dbName}$1`)
let child: ChildProcess | undefined
try {
  const sql = postgres(dbUrl, { max: 4, onnotice: () => undefined })
  await migrate(sql)
  log(`seeding ${dbName}…`)
  const seed = await seedDemo(sql, compileRegistry(registry), { scale: 1 })
  const org = seed.orgs.find((o) => o.large)!
  // A quota large enough for the whole run: the counting work is measured, never a 429.
  await updateAccount(sql, org.accountId, { dailyLimit: 1_000_000_000, monthlyLimit: 1_000_000_000 })
  const pepper = randomBytes(32).toString('base64url')
  const key = await createKey(sql, pepper, org.accountId)
  await sql.unsafe('VACUUM (ANALYZE)')
  await sql.end()
  const started = await start({ DATABASE_URL: dbUrl, ORGSCAN_PEPPER: pepper, PORT: '0', ORGSCAN_SEED_DEMO: 'false', ORGSCAN_CACHE_MB: '0' })
  child = started.child
  const load = { url: `${started.url}/v1/orgs/${org.salesforceId}/fields?limit=50`, headers: { authorization: 'Basic ' + Buffer.from(`${key.keyId}:${key.secret}`).toString('base64') } }
  // Per turn, the service's CPU per request and the whole machine's (PostgreSQL's and wrk's included): a process that
  // ages spends more of its own per request; a noisy machine moves the throughput with the CPU per request unchanged.
  const turns: Array<{ rps: number; rssMb: number; serverUs: number; machineUs: number }> = []
  const count = Math.max(4, Math.round(seconds / TURN))
  log(`${count} turns of ${TURN} s, 32 connections, the response cache off (every request reads the database):`)
  for (let i = 0; i < count; i++) {
    const own0 = processCpuUs(child.pid!)
    const m0 = cpuTimes()
    const r = await runLoad(load, 32, TURN)
    const own1 = processCpuUs(child.pid!)
    const m1 = cpuTimes()
    if (r.non2xx || r.errors) throw new Error(`turn ${i + 1}: ${r.non2xx} answers other than 200, ${r.errors} errors`)
    const requests = Math.max(1, r.rps * TURN)
    // /proc/stat counts jiffies of 10 ms.
    turns.push({ rps: r.rps, rssMb: rssMb(child.pid!), serverUs: (own1 - own0) / requests, machineUs: ((m1.busy - m0.busy) * 10_000) / requests })
    const t = turns[i]
    log(`  turn ${String(i + 1).padStart(2)}  ${r.rps.toFixed(0).padStart(6)} req/s  CPU per request: service ${t.serverUs.toFixed(0)} µs, machine ${t.machineUs.toFixed(0)} µs  rss ${t.rssMb.toFixed(0)} MB`)
  }
  const measured = turns.slice(1)
  const third = Math.max(1, Math.floor(measured.length / 3))
  const first = measured.slice(0, third)
  const last = measured.slice(-third)
  const served = turns.reduce((n, t) => n + t.rps * TURN, 0)
  const ratio = (f: (t: (typeof turns)[number]) => number) => (median(last.map(f)) / median(first.map(f))).toFixed(2)
  log(`about ${Math.round(served).toLocaleString('en')} requests; the last third of the turns against the first (medians): throughput ${ratio((t) => t.rps)}, the service's CPU per request ${ratio((t) => t.serverUs)}, the machine's ${ratio((t) => t.machineUs)}; resident memory ${median(first.map((t) => t.rssMb)).toFixed(0)} → ${median(last.map((t) => t.rssMb)).toFixed(0)} MB`)
} finally {
  if (child) {
    const c = child
    await new Promise<void>((r) => {
      c.removeAllListeners('exit')
      c.once('exit', () => r())
      c.kill('SIGTERM')
      setTimeout(() => c.kill('SIGKILL'), 5000).unref()
    })
  }
  await admin.unsafe(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`)
  await admin.end()
  rmSync(accessLogFile, { force: true })
}
