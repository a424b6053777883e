/**
 * `npm run bench:import` (also a section of `npm run bench`): the speed and memory of bundles on PostgreSQL. Generates
 * the demo model of a large org with 100,000 fields and 5,000 objects (about 280,000 records in all), writes it as
 * NDJSON and JSON, and measures, each in a process of its own (time of the work, and the process's peak resident
 * memory): the import of the NDJSON bundle (large tables with COPY), the same with INSERTs only (the path of the
 * embedded database, and of imports before COPY), the JSON bundle, the export of the scan in both formats, and the
 * whole `orgscan import` command (process start included). Each import goes into a fresh database. Target: the
 * import under 10 s.
 *
 * Env: BENCH_DATABASE_URL (default TEST_DATABASE_URL or postgres://postgres@127.0.0.1:5432/test);
 * BENCH_IMPORT_FIELDS (100000; objects are a twentieth of it), to see memory stay flat as the bundle grows;
 * BENCH_IMPORT_EMBEDDED=1 adds the NDJSON import into an in-memory embedded database.
 */
import { spawn } from 'node:child_process'
import { createWriteStream, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import postgres from 'postgres'
import { registry } from '../../resources/index.ts'
import { compileRegistry } from '../../runtime/core/registry.ts'
import { migrate } from '../../runtime/platform/db/migrate.ts'
import { openDatabase } from '../../runtime/platform/db/connect.ts'
import { createAccount } from '../../runtime/platform/admin.ts'
import { importFile, type ScanBundle } from '../../runtime/platform/import.ts'
import { exportScan } from '../../runtime/platform/bundle/export-scan.ts'
import { ndjsonLines } from '../../runtime/platform/bundle/wire.ts'
import { DEMO_ORG_DEFS, demoBundle } from '../../demo/seed.ts'

const root = new URL('../../', import.meta.url).pathname
const self = fileURLToPath(import.meta.url)
const FIELDS = Number(process.env.BENCH_IMPORT_FIELDS ?? 100_000)
const OBJECTS = Math.round(FIELDS / 20)

export interface SpeedRow {
  seconds: number
  rssPeakMb: number
  records?: number
}

/** The large demo org grown to FIELDS fields and OBJECTS objects (generated a little larger, then cut to size). */
function benchBundle(): ScanBundle {
  const large = DEMO_ORG_DEFS.find((d) => d.large)!
  // About 2 % of generated fields and objects are gone by the latest scan (demo/context.ts lifeOf).
  const def = { ...large, key: 'bench-import', size: { ...large.size, fields: Math.ceil(FIELDS * 1.03), objects: Math.ceil(OBJECTS * 1.03) } }
  const b = demoBundle(def, def.scans.length - 1, { scale: 1 })
  for (const [name, n] of [['fields', FIELDS], ['objects', OBJECTS], ['objectUsages', OBJECTS]] as const) {
    const list = b.data[name] as unknown[]
    if (list.length < n) throw new Error(`the generator made ${list.length} ${name}, fewer than ${n}`)
    list.length = n
  }
  return b
}

async function writeFiles(b: ScanBundle, dir: string): Promise<{ ndjson: string; json: string; records: number }> {
  const ndjson = join(dir, 'bench.ndjson')
  const out = createWriteStream(ndjson)
  let records = -2 // the header and end lines
  for (const line of ndjsonLines(b)) {
    records++
    if (!out.write(line + '\n')) await new Promise<void>((r) => out.once('drain', () => r()))
  }
  await new Promise<void>((r) => out.end(() => r()))
  const json = join(dir, 'bench.json')
  const jout = createWriteStream(json)
  await new Promise<void>((r) => jout.end(JSON.stringify(b), () => r()))
  return { ndjson, json, records }
}

/** Peak resident memory of a process, MB (Linux: VmHWM), polled until it exits. */
function run(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string; ms: number; rssPeakMb: number }> {
  return new Promise((resolve) => {
    const t0 = performance.now()
    const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, ...env } })
    let stdout = ''
    let stderr = ''
    let peak = 0
    const poll = setInterval(() => {
      try {
        peak = Math.max(peak, Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024)
      } catch {
        // exited
      }
    }, 20)
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('exit', (code) => {
      clearInterval(poll)
      resolve({ code: code ?? -1, stdout, stderr, ms: performance.now() - t0, rssPeakMb: peak })
    })
  })
}

/** One measured operation in a child process: prints {ms, rssPeakMb, records}. */
async function child(op: string, target: string, file: string, account: string): Promise<void> {
  const resources = compileRegistry(registry)
  const embedded = target === 'embedded'
  const db = await openDatabase(embedded ? { dataDir: 'memory://' } : { databaseUrl: target, poolSize: 2 })
  try {
    if (embedded) {
      await migrate(db.sql)
      account = (await createAccount(db.sql, { name: 'Bench', dailyLimit: 1e9, monthlyLimit: 1e9 })).id
    }
    const t0 = performance.now()
    let records = 0
    if (op === 'export-ndjson' || op === 'export-json') {
      const out = createWriteStream(file)
      const r = await exportScan(db.sql, resources, { orgId: account, format: op === 'export-json' ? 'json' : 'ndjson' }, (c) =>
        out.write(c) ? undefined : new Promise<void>((ok) => out.once('drain', () => ok())),
      )
      await new Promise<void>((ok) => out.end(() => ok()))
      records = Object.values(r.counts).reduce((x, y) => x + y, 0)
    } else {
      const r = await importFile(db.sql, resources, account, file, { copy: op === 'import-copy' })
      records = Object.values(r.counts).reduce((x, y) => x + y, 0)
    }
    const ms = performance.now() - t0
    process.stdout.write(JSON.stringify({ ms, rssPeakMb: process.resourceUsage().maxRSS / 1024, records }) + '\n')
  } finally {
    await db.close()
  }
}

/** Runs the measurements; returns a row per measurement. `log` gets progress and the table. */
export async function measureImportSpeed(adminUrl: string, log: (s: string) => void): Promise<Record<string, SpeedRow>> {
  const dir = mkdtempSync(join(tmpdir(), 'orgscan-bench-import-'))
  const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined })
  const tag = `${process.pid}_${randomBytes(3).toString('hex')}`
  const template = `orgscan_bench_imp_${tag}`
  const dbs: string[] = []
  const urlOf = (name: string) => adminUrl.replace(/\/[^/?]+(\?|$)/, `/${name}$1`)
  try {
    log(`import speed: generating a bundle of ${FIELDS.toLocaleString('en-US')} fields and ${OBJECTS.toLocaleString('en-US')} objects…`)
    const files = await writeFiles(benchBundle(), dir)
    log(`  ${files.records.toLocaleString('en-US')} records; NDJSON ${(statSync(files.ndjson).size / 1e6).toFixed(0)} MB, JSON ${(statSync(files.json).size / 1e6).toFixed(0)} MB`)
    await admin.unsafe(`CREATE DATABASE ${template}`)
    dbs.push(template)
    const tsql = postgres(urlOf(template), { max: 1, onnotice: () => undefined })
    await migrate(tsql)
    const account = (await createAccount(tsql, { name: 'Bench', dailyLimit: 1e9, monthlyLimit: 1e9 })).id
    await tsql.end()
    let n = 0
    const fresh = async () => {
      const name = `orgscan_bench_imp_${tag}_${++n}`
      await admin.unsafe(`CREATE DATABASE ${name} TEMPLATE ${template}`)
      dbs.push(name)
      return urlOf(name)
    }
    const rows: Record<string, SpeedRow> = {}
    const measure = async (name: string, op: string, target: string, file: string, orgOrAccount = account) => {
      const r = await run(['--import', 'tsx', self, '--child', op, target, file, orgOrAccount], {})
      if (r.code !== 0) throw new Error(`${name} failed: ${r.stderr.trim().split('\n').slice(-3).join(' ')}`)
      const m = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { ms: number; rssPeakMb: number; records: number }
      rows[name] = { seconds: m.ms / 1000, rssPeakMb: m.rssPeakMb, records: m.records }
      log(`  ${name.padEnd(28)} ${(m.ms / 1000).toFixed(1).padStart(6)} s  ${((m.records / m.ms) * 1000).toFixed(0).padStart(7)} records/s  peak rss ${m.rssPeakMb.toFixed(0)} MB`)
    }
    const copyDb = await fresh()
    await measure('import ndjson (COPY)', 'import-copy', copyDb, files.ndjson)
    await measure('import ndjson (INSERT)', 'import-insert', await fresh(), files.ndjson)
    await measure('import json (COPY)', 'import-copy', await fresh(), files.json)
    const orgId = JSON.parse(readFileSync(files.ndjson, 'utf8').slice(0, 2000).split('\n')[0]).org.salesforceId as string
    await measure('export ndjson', 'export-ndjson', copyDb, join(dir, 'out.ndjson'), orgId)
    await measure('export json', 'export-json', copyDb, join(dir, 'out.json'), orgId)
    const cli = await run(['bin/orgscan.js', 'import', '--account', account, files.ndjson, '--json'], { DATABASE_URL: await fresh(), ORGSCAN_PEPPER: randomBytes(32).toString('base64url') })
    if (cli.code !== 0) throw new Error(`orgscan import failed: ${cli.stderr.trim().split('\n').at(-1)}`)
    rows['orgscan import ndjson (command)'] = { seconds: cli.ms / 1000, rssPeakMb: cli.rssPeakMb, records: files.records }
    log(`  ${'orgscan import (command)'.padEnd(28)} ${(cli.ms / 1000).toFixed(1).padStart(6)} s  (process start included)  peak rss ${cli.rssPeakMb.toFixed(0)} MB`)
    if (process.env.BENCH_IMPORT_EMBEDDED === '1') await measure('import ndjson (embedded)', 'import-insert', 'embedded', files.ndjson)
    const target = rows['import ndjson (COPY)'].seconds
    log(`  import under 10 s: ${target < 10 ? 'yes' : 'NO'} (${target.toFixed(1)} s)`)
    return rows
  } finally {
    for (const d of dbs.reverse()) await admin.unsafe(`DROP DATABASE IF EXISTS ${d} WITH (FORCE)`)
    await admin.end()
    rmSync(dir, { recursive: true, force: true })
  }
}

const argv = process.argv.slice(2)
if (process.argv[1] === self) {
  if (argv[0] === '--child') await child(argv[1], argv[2], argv[3], argv[4])
  else {
    const adminUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
    await measureImportSpeed(adminUrl, (s) => process.stderr.write(s + '\n'))
  }
}
