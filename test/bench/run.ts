/**
 * `npm run bench`: seeds the demo data (one large org) into a throwaway PostgreSQL database, then measures with wrk
 * (autocannon where wrk is not installed: load.ts), alternating in one run, (a) the bare-stack baseline, (b) the authenticated, quota-counted REST list
 * GET /v1/orgs/{orgId}/fields?limit=50 repeated (a response-cache hit), (c) a stream of distinct pages of it (cache
 * misses), (d) the same request with If-None-Match (304) and (e) the MCP tool call it mirrors (tools/call
 * list_org_fields, limit 50, in a session), with the server's resident memory during and after each load, and (f) the
 * distinct pages read from a streaming replica (replica-reads.ts). With the response cache off: the repeated list and
 * the distinct pages, lists under distinct filters whose meta.total is counted on every request against filters
 * whose totals are known (what meta.total costs, in one run), and a grouped count of the large org's fields. Prints
 * req/s, p50/p99, memory and ratios; writes results/latest.json.
 *
 * Then `--workers 2` against one process (workers.ts), the access log's cost in alternating turns
 * (access-log-cost.ts), MCP against REST in alternating turns on one server (mcp-vs-rest.ts), the worst legal filters
 * and deep pages with the cache off (worst-filter-times.ts, about 30 s), the fairness pair (one account's reads alone
 * and under another's attack of the most expensive filters: fairness.ts), the characters of tool results each MCP
 * prompt's job costs along its plan (prompt-jobs.ts), and the import and export speed of a large bundle
 * (import-speed.ts).
 *
 * Env: BENCH_DATABASE_URL (default TEST_DATABASE_URL or postgres://postgres@127.0.0.1:5432/test), BENCH_SECONDS (10),
 * BENCH_CONNECTIONS (32), BENCH_ROUNDS (2), BENCH_SCALE (1), BENCH_IMPORT (0: without the import speed),
 * BENCH_LOAD (autocannon: that generator even where wrk is installed).
 */
import type { ChildProcess } from 'node:child_process'
import { readFileSync, writeFileSync, mkdirSync, openSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { distinctFilters, distinctPages, generator, mcpLoad, runLoad, spawnServer, stopServer as stop, type Load, median, SERVE_ARGS, SERVE_ENV } from './load.ts'
import postgres from 'postgres'
import { registry } from '../../resources/index.ts'
import { seedDemo } from '../../demo/seed.ts'
import { compileRegistry } from '../../runtime/core/registry.ts'
import { migrate } from '../../runtime/platform/db/migrate.ts'
import { createKey, updateAccount } from '../../runtime/platform/admin.ts'
import { replicaBench, type ReplicaBench } from './replica-reads.ts'
import { measureImportSpeed } from './import-speed.ts'
import { benchWorkers } from './workers.ts'
import { benchAccessLog } from './access-log-cost.ts'
import { benchMcpVsRest } from './mcp-vs-rest.ts'
import { timeWorstFilters } from './worst-filter-times.ts'
import { benchFairness, fairnessParties, fairnessReport } from './fairness.ts'
import { measurePromptJobs, PROMPT_BUDGET } from './prompt-jobs.ts'

const adminUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const seconds = Number(process.env.BENCH_SECONDS ?? 10)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32)
const rounds = Number(process.env.BENCH_ROUNDS ?? 2)
const scale = Number(process.env.BENCH_SCALE ?? 1)
const pepper = randomBytes(32).toString('base64url')
const log = (s: string) => process.stderr.write(s + '\n')

mkdirSync(new URL('results/', import.meta.url), { recursive: true })
const serverLog = openSync(new URL('results/server-stderr.tmp', import.meta.url), 'w')

function startChild(args: string[], env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  // stderr (the access log) goes to a file, as it would to a log collector, not into this process.
  // The service with `npm start`'s environment (the C allocator's tunables); the bare-stack baseline without it.
  const served = args.includes('bin/orgscan.js') ? SERVE_ENV : {}
  return spawnServer(args, { ...served, ...env }, serverLog)
}

interface Measure { rps: number; p50: number; p99: number; non2xx: number; errors: number; rssPeakMb?: number; rssAfterMb?: number }

/** Resident memory of a process, MB (Linux). */
function rssMb(pid: number | undefined): number | undefined {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024
  } catch {
    return undefined
  }
}

async function measure(load: Load, duration: number, pid?: number): Promise<Measure> {
  let peak = 0
  const timer = setInterval(() => (peak = Math.max(peak, rssMb(pid) ?? 0)), 250)
  const r = await runLoad(load, connections, duration)
  clearInterval(timer)
  return { ...r, rssPeakMb: peak || undefined }
}

/** Filters ne(id,-1) to ne(id,-400), each asked once so that the server knows their totals. */
async function knownFilters(url: string, headers: Record<string, string>, orgId: string) {
  const count = 400
  const warm = distinctFilters(orgId, 1, count)
  for (let i = 0; i < count; i++) {
    const r = await fetch(url + warm.next(), { headers })
    if (r.status !== 200) throw new Error(`a filter to warm answered ${r.status}`)
    await r.arrayBuffer()
  }
  return distinctFilters(orgId, 1, count)
}

const dbName = `orgscan_bench_${process.pid}_${randomBytes(3).toString('hex')}`
const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined })
await admin.unsafe(`CREATE DATABASE ${dbName}`)
const dbUrl = adminUrl.replace(/\/[^/?]+(\?|$)/, `/${dbName}$1`)
const children: ChildProcess[] = []
let replica: ReplicaBench | undefined
try {
  const sql = postgres(dbUrl, { max: 4, onnotice: () => undefined })
  await migrate(sql)
  log(`seeding scale ${scale} into ${dbName}…`)
  const t0 = Date.now()
  const seed = await seedDemo(sql, compileRegistry(registry), { scale, progress: (l) => log(`  ${l}`) })
  log(`seeded in ${((Date.now() - t0) / 1000).toFixed(1)} s`)
  const org = seed.orgs.find((o) => o.large)!
  // A quota large enough for the whole run: the counting work is measured, never a 429.
  await updateAccount(sql, org.accountId, { dailyLimit: 1_000_000_000, monthlyLimit: 1_000_000_000 })
  const key = await createKey(sql, pepper, org.accountId)
  const parties = await fairnessParties(sql, pepper, seed)
  const [{ n }] = await sql`SELECT count(*)::int AS n FROM fields f JOIN orgs o ON o.latest_scan_id = f.scan_id WHERE o.salesforce_id = ${org.salesforceId}`
  // The tables were just written: vacuum and analyze them now and write the dirty pages out, so that autovacuum and the
  // checkpointer do not take the first round's CPU (seen: every first-round row 20–30 % below the second round's).
  const t1 = Date.now()
  await sql.unsafe('VACUUM (ANALYZE)')
  await sql.unsafe('CHECKPOINT').catch((e: Error) => log(`  (no CHECKPOINT: ${e.message})`))
  log(`vacuumed and analyzed in ${((Date.now() - t1) / 1000).toFixed(1)} s`)
  await sql.end()
  const path = `/v1/orgs/${org.salesforceId}/fields?limit=50`
  const auth = { authorization: 'Basic ' + Buffer.from(`${key.keyId}:${key.secret}`).toString('base64') }
  const env = { DATABASE_URL: dbUrl, ORGSCAN_PEPPER: pepper, BENCH_ACCOUNT_ID: org.accountId, PORT: '0', ORGSCAN_SEED_DEMO: 'false' }

  // Each target is a process; its loads are measured one after the other on it (REST and MCP on the same server).
  const targets: Array<{ name: string; args: string[]; env?: Record<string, string>; loads: (url: string) => Promise<Array<[string, Load]>> }> = [
    { name: 'baseline', args: ['--import', 'tsx', 'test/bench/baseline-server.ts'], loads: async (url) => [['baseline', { url: url + path, headers: {} }]] },
    {
      name: 'service',
      // As deployed: the command with the Node flags of `npm start`.
      args: SERVE_ARGS,
      loads: async (url) => {
        const etag = (await fetch(url + path, { headers: auth })).headers.get('etag')!
        return [
          ['rest', { url: url + path, headers: auth }],
          ['rest-miss', { url: url + path, headers: auth, paths: distinctPages(org.salesforceId) }],
          ['rest-304', { url: url + path, headers: { ...auth, 'if-none-match': etag }, expect: 304 }],
          ['mcp', await mcpLoad(url, auth, org.salesforceId)],
        ]
      },
    },
    {
      // The same command without the access log: what logging every request costs at cache-hit rates.
      name: 'service without the access log',
      args: SERVE_ARGS,
      env: { ORGSCAN_ACCESS_LOG: 'off' },
      loads: async (url) => [['rest-nolog', { url: url + path, headers: auth }]],
    },
    {
      // The same command with the response cache off: the misses of today's service, for the cost of a miss.
      name: 'service without the cache',
      args: SERVE_ARGS,
      env: { ORGSCAN_CACHE_MB: '0' },
      loads: async (url) => [
        ['nocache', { url: url + path, headers: auth }],
        ['nocache-miss', { url: url + path, headers: auth, paths: distinctPages(org.salesforceId) }],
        // meta.total's cost in one run: distinct filters whose totals are all counted (more than the totals cache
        // holds), against a few hundred filters asked once before the load, whose totals are known and not counted.
        ['nocache-total', { url: url + path, headers: auth, paths: distinctFilters(org.salesforceId, 1_000, 1_000_000) }],
        ['nocache-known', { url: url + path, headers: auth, paths: await knownFilters(url, auth, org.salesforceId) }],
        // A grouped count on the largest org, every request grouping its fields anew.
        ['count', { url: `${url}/v1/orgs/${org.salesforceId}/counts/fields?by=objectApiName&limit=200`, headers: auth }],
      ],
    },
  ]
  replica = await replicaBench({ adminUrl, dbUrl, path, auth, pages: () => distinctPages(org.salesforceId) })
  if (replica) targets.push(replica.target)
  const results: Record<string, Measure[]> = {}
  for (let round = 1; round <= rounds; round++) {
    for (const tgt of targets) {
      const { child, url } = await startChild(tgt.args, { ...env, ...tgt.env })
      children.push(child)
      for (const [name, load] of await tgt.loads(url)) {
        const check = await fetch(load.url, { method: load.method ?? 'GET', headers: load.headers, body: load.body })
        if (check.status !== (load.expect ?? 200)) throw new Error(`${name} answered ${check.status}: ${await check.text()}`)
        await measure(load, 2, child.pid) // warm-up
        const m = await measure(load, seconds, child.pid)
        await new Promise((r) => setTimeout(r, 15_000))
        m.rssAfterMb = rssMb(child.pid)
        ;(results[name] ??= []).push(m)
        log(`round ${round} ${name.padEnd(8)} ${m.rps.toFixed(0).padStart(6)} req/s  p50 ${m.p50} ms  p99 ${m.p99} ms  non-2xx ${m.non2xx}  errors ${m.errors}  rss peak ${m.rssPeakMb?.toFixed(0)} MB, 15 s after ${m.rssAfterMb?.toFixed(0)} MB`)
      }
      await stop(child)
    }
  }
  // --workers 2 against one process, on the cache-miss stream (test/bench/workers.ts).
  const start = async (args: string[], extra: Record<string, string>) => {
    const started = await startChild(args, { ...env, ...extra })
    children.push(started.child)
    return started
  }
  const workers = await benchWorkers({ start, stop, measure: (load, s) => measure(load, s), rssMb, pages: () => distinctPages(org.salesforceId), path, headers: auth, serveArgs: SERVE_ARGS, seconds, rounds, log })
  // The access log's cost, in alternating short turns, two new processes a pair (test/bench/access-log-cost.ts).
  const accessLog = await benchAccessLog({ start, stop, measure: (load, s) => measure(load, s), path, headers: auth, serveArgs: SERVE_ARGS, pairs: 12, seconds: 4, log })
  // MCP against REST on one server, in alternating short turns (test/bench/mcp-vs-rest.ts).
  const mcpVsRest = await benchMcpVsRest({ start, stop, measure: (load, s) => measure(load, s), mcpLoad: (url) => mcpLoad(url, auth, org.salesforceId), path, headers: auth, serveArgs: SERVE_ARGS, pairs: 6, seconds: 4, log })
  // The worst legal filters and deep pages, the response cache off so that each reads the database (worst-filter-times.ts).
  log('worst legal list requests (response cache off), median ms of five:')
  const worstServer = await start(SERVE_ARGS, { ORGSCAN_CACHE_MB: '0' })
  const worstFilters = await timeWorstFilters({ url: worstServer.url, orgId: org.salesforceId, authorization: auth.authorization, loadSeconds: seconds, connections, log: (l) => log(`  ${l}`) })
  await stop(worstServer.child)
  // One account's reads alone and while another floods the process with the most expensive filters (test/bench/fairness.ts).
  const fairness = await benchFairness({ ...parties, start, stop, serveArgs: SERVE_ARGS, seconds, pairs: rounds, log })
  // What each prompt's job costs an assistant in characters of tool results on the large org (test/bench/prompt-jobs.ts).
  log(`characters of tool results per prompt job on the large org (target ≤ ${PROMPT_BUDGET.toLocaleString('en-US')} each):`)
  const promptServer = await start(SERVE_ARGS, {})
  const promptJobs = await measurePromptJobs({ mcpUrl: `${promptServer.url}/v1/mcp`, authorization: auth.authorization, orgId: org.salesforceId, log: (l) => log(`  ${l}`) })
  await stop(promptServer.child)
  const max = (xs: Array<number | undefined>) => Math.max(...xs.map((x) => x ?? 0))
  const summary = Object.fromEntries(
    Object.entries(results).map(([k, ms]) => [k, { rps: median(ms.map((m) => m.rps)), p50: median(ms.map((m) => m.p50)), p99: median(ms.map((m) => m.p99)), non2xx: ms.reduce((a, m) => a + m.non2xx, 0), rssPeakMb: max(ms.map((m) => m.rssPeakMb)), rssAfterMb: max(ms.map((m) => m.rssAfterMb)), runs: ms }]),
  )
  const base = summary.baseline.rps
  log(`\nmedian of rounds (the mean of the middle two for an even number), load generator ${generator} (rss: the highest seen; after = 15 s after the load):`)
  for (const [k, s] of Object.entries(summary)) log(`  ${k.padEnd(8)} ${s.rps.toFixed(0).padStart(6)} req/s  p50 ${s.p50} ms  p99 ${s.p99} ms  ratio to baseline ${(s.rps / base).toFixed(2)}  rss peak ${s.rssPeakMb.toFixed(0)} MB, after ${s.rssAfterMb.toFixed(0)} MB`)
  log(`  mcp / rest ${(summary.mcp.rps / summary.rest.rps).toFixed(2)} in the rounds above; ${mcpVsRest.rpsRatio.toFixed(2)} in ${mcpVsRest.pairs.length} alternating pairs of 4 s on one server (target ≥ 0.5); server CPU per request ${mcpVsRest.cpuUsMcp.toFixed(0)} µs (MCP), ${mcpVsRest.cpuUsRest.toFixed(0)} µs (REST)`)
  log(`  cache hit / baseline ${(summary.rest.rps / base).toFixed(2)} (target ≥ 5), 304 / baseline ${(summary['rest-304'].rps / base).toFixed(2)}`)
  log(`  access log on / off (cache hits): ${accessLog.rpsRatio.toFixed(2)} of the throughput, median of ${accessLog.pairs.length} alternating pairs of ${4} s (target ≥ 0.95); server CPU per request ${accessLog.cpuUsOn.toFixed(0)} µs with, ${accessLog.cpuUsOff.toFixed(0)} µs without (ratio ${accessLog.cpuRatio.toFixed(2)}); the rounds of the table above (one process of each kind a round, so one slow process decides them): ${(summary.rest.rps / summary['rest-nolog'].rps).toFixed(2)}`)
  if (replica) log(replica.report(summary))
  log(`  workers 2 / 1 (misses) ${workers.ratio.toFixed(2)} (target ≥ 1.3; with one process the whole machine was ${(workers.one.machineBusy * 100).toFixed(0)} % busy, with two ${(workers.two.machineBusy * 100).toFixed(0)} %); on cache hits ${workers.hits.ratio.toFixed(2)} (${workers.hits.two.rps.toFixed(0)} against ${workers.hits.one.rps.toFixed(0)} req/s); rss peak: one process ${workers.one.rssPeakMb.toFixed(0)} MB, with 2 workers the primary ${workers.two.primaryRssPeakMb.toFixed(0)} MB and each worker ≤ ${Math.max(...workers.two.workerRssPeakMb).toFixed(0)} MB`)
  log(fairnessReport(fairness))
  log(`  misses: with the cache / without ${(summary['rest-miss'].rps / summary['nocache-miss'].rps).toFixed(2)} (target ≥ 1, within noise); the repeated request without the cache / baseline ${(summary.nocache.rps / base).toFixed(2)}`)
  // Every list now says meta.total, counted once per (scan, filter) and then skipped: the lists' ratios to the baseline
  // compare with the previous results file's, taken before totals (target: within 10 %).
  log(`  lists with meta.total: the repeated request without the cache / baseline ${(summary.nocache.rps / base).toFixed(2)}, misses ${(summary['nocache-miss'].rps / base).toFixed(2)} (compare: the results file before totals); distinct filters, every total counted / totals known ${(summary['nocache-total'].rps / summary['nocache-known'].rps).toFixed(2)} (${summary['nocache-total'].rps.toFixed(0)} against ${summary['nocache-known'].rps.toFixed(0)} req/s); a grouped count of the large org's fields by object: ${summary.count.rps.toFixed(0)} req/s, p99 ${summary.count.p99} ms`)
  log(`  prompt jobs: ${promptJobs.map((j) => `${j.name} ${j.chars.toLocaleString('en-US')}`).join(', ')} characters (target ≤ ${PROMPT_BUDGET.toLocaleString('en-US')} each${promptJobs.some((j) => j.failedCalls) ? '; some calls FAILED' : ''})`)
  const slowest = worstFilters.shapes.reduce((a, b) => (b.medianMs > a.medianMs ? b : a))
  log(`  worst filters: slowest median ${slowest.medianMs.toFixed(0)} ms (${slowest.name}; target ≤ 150); offset 20,000 under every sort ≤ ${worstFilters.deepSorts.maxMs.toFixed(0)} ms; distinct deep pages ${worstFilters.deepLoad.rps.toFixed(0)} req/s, p99 ${worstFilters.deepLoad.p99} ms`)
  const out = {
    date: new Date().toISOString(),
    endpoints: {
      baseline: 'node:http + the same SQL',
      rest: 'GET /v1/orgs/{orgId}/fields?limit=50, repeated (a response-cache hit)',
      'rest-miss': 'GET /v1/orgs/{orgId}/fields with a distinct limit/offset every request (cache misses)',
      'rest-304': 'GET /v1/orgs/{orgId}/fields?limit=50 with If-None-Match (304)',
      'rest-nolog': 'as rest, ORGSCAN_ACCESS_LOG=off',
      nocache: 'GET /v1/orgs/{orgId}/fields?limit=50 repeated, ORGSCAN_CACHE_MB=0 (every request reads the database)',
      'nocache-miss': 'the distinct-page stream, ORGSCAN_CACHE_MB=0',
      'nocache-total': 'GET /v1/orgs/{orgId}/fields?limit=50&filter=ne(id,-k), k distinct each request (every total counted: all the org\'s fields), ORGSCAN_CACHE_MB=0',
      'nocache-known': 'as nocache-total over 400 filters asked before the load (every total known, none counted: a list as before totals), ORGSCAN_CACHE_MB=0',
      count: 'GET /v1/orgs/{orgId}/counts/fields?by=objectApiName&limit=200 repeated, ORGSCAN_CACHE_MB=0',
      'replica-miss': 'the distinct-page stream, ORGSCAN_CACHE_MB=0, DATABASE_REPLICA_URL: a streaming replica of the bench database',
      mcp: 'tools/call list_org_fields {orgId, limit: 50} in a 2025-11-25 session (a hit)',
    },
    generator, orgFields: n, connections, seconds, rounds, scale, summary, workers, accessLog, mcpVsRest, worstFilters, fairness, promptJobs,
    ratios: { ...Object.fromEntries(Object.entries(summary).map(([k, s]) => [k, s.rps / base])), mcpToRest: summary.mcp.rps / summary.rest.rps, mcpToRestPairs: mcpVsRest.rpsRatio, accessLogOnToOff: accessLog.rpsRatio, accessLogOnToOffRounds: summary.rest.rps / summary['rest-nolog'].rps, missWithToWithoutCache: summary['rest-miss'].rps / summary['nocache-miss'].rps },
  }
  // Import and export speed of bundles (test/bench/import-speed.ts); BENCH_IMPORT=0 leaves it out.
  if (process.env.BENCH_IMPORT !== '0') Object.assign(out, { importSpeed: await measureImportSpeed(adminUrl, log) })
  mkdirSync(new URL('results/', import.meta.url), { recursive: true })
  writeFileSync(new URL('results/latest.json', import.meta.url), JSON.stringify(out, null, 2) + '\n')
  log('wrote test/bench/results/latest.json')
} finally {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL')
  await replica?.close()
  await admin.unsafe(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`)
  await admin.end()
}
