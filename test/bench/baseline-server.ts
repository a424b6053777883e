/**
 * The bare-stack baseline of the benchmark: node:http + find-my-way + postgres.js running the SAME SQL the
 * service runs for GET /v1/orgs/{orgId}/fields?limit=50 — no authentication, no quota, no envelope logic
 * beyond splicing the JSON. Its total is known (the service counts a filter's total once per scan and then runs this
 * same statement, which skips the count), so the SQL is the page alone, as in the service's repeated request.
 * Prints {"url"} on stdout when listening.
 */
import { createServer } from 'node:http'
import FindMyWay from 'find-my-way'
import postgres from 'postgres'
import { registry } from '../../resources/index.ts'
import { compileRegistry } from '../../runtime/core/registry.ts'
import { planList } from '../../runtime/core/plan.ts'
import { listStatement } from '../../runtime/core/statements.ts'

// Four connections, as the service's default read pool (of which one account may use three: docs/adr/0100-fair-share.md).
const [databaseUrl, accountId, poolSize] = [process.env.DATABASE_URL!, process.env.BENCH_ACCOUNT_ID!, Number(process.env.BENCH_BASELINE_POOL_SIZE ?? 4)]
// The session settings of the service's read pool (runtime/platform/db/connect.ts), so that both run the SQL alike.
const sql = postgres(databaseUrl, { max: poolSize, connection: { TimeZone: 'UTC', plan_cache_mode: 'force_generic_plan' }, onnotice: () => undefined })
// BENCH_BASELINE_CONNECTIONS (default: none): that many connections, each a pool of one, a statement handed to the one
// with the fewest in flight and at most BENCH_BASELINE_DEPTH (default 1) on one at once: how the service's fair share
// hands statements to connections. Unset: postgres.js's pool of `poolSize`, which pipelines as it likes.
const lanes = Array.from({ length: Number(process.env.BENCH_BASELINE_CONNECTIONS ?? 0) }, () => ({
  sql: postgres(databaseUrl, { max: 1, connection: { TimeZone: 'UTC', plan_cache_mode: 'force_generic_plan' }, onnotice: () => undefined }),
  n: 0,
}))
const depth = Number(process.env.BENCH_BASELINE_DEPTH ?? 1)
const waiting: Array<() => void> = []
async function gated<T>(f: (s: postgres.Sql) => Promise<T>): Promise<T> {
  if (lanes.length === 0) return f(sql)
  let lane = lanes.reduce((a, b) => (b.n < a.n ? b : a))
  while (lane.n >= depth) {
    await new Promise<void>((r) => waiting.push(r))
    lane = lanes.reduce((a, b) => (b.n < a.n ? b : a))
  }
  lane.n++
  try {
    return await f(lane.sql)
  } finally {
    lane.n--
    waiting.shift()?.()
  }
}
const fields = compileRegistry(registry).find((c) => c.name === 'fields')!
const router = FindMyWay()
const latestScan = new Map<string, string>()
router.on('GET', '/v1/orgs/:orgId/fields', async (_req, res, params) => {
  const orgId = params.orgId!
  let scan = latestScan.get(orgId)
  if (scan === undefined) {
    const [o] = await sql<{ scan: string }[]>`SELECT latest_scan_id::text AS scan FROM orgs WHERE salesforce_id = ${orgId}`
    scan = o.scan
    latestScan.set(orgId, scan)
  }
  const plan = planList(fields, new Map([['limit', ['50']]]), 'rest')
  const st = listStatement(fields, plan, { accountId, userId: null, orgId }, scan)
  const [row] = await gated((s) => s.unsafe(st.text, st.values as never[], { prepare: true }))
  const body = `{"data":${row.data},"meta":{"count":${Math.min(row.n, 50)},"hasMore":${row.n > 50}}}`
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) })
  res.end(body)
})
const server = createServer((req, res) => router.lookup(req, res))
server.listen(0, '127.0.0.1', () => {
  const a = server.address() as { port: number }
  process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${a.port}` }) + '\n')
})
process.on('SIGTERM', () => server.close(() => sql.end().then(() => process.exit(0))))
