/**
 * Health and shutdown (docs/operating.md "Health"): /healthz and /readyz answer without credentials or quota;
 * /readyz is 503 with its reasons when migrations are behind; every answer carries an X-Request-Id (the caller's
 * when well formed); a stopping service finishes the answers in progress, stops accepting, and cuts what is left
 * after its grace time.
 */
import t, { type Test } from 'tap'
import { request } from 'node:http'
import { startTestService } from './helpers/service.ts'
import { initializeBody, rpc } from './helpers/mcp.ts'
import type { McpTool } from '../runtime/mcp/resource-tools.ts'

/** A tool that takes `ms` milliseconds: an answer in progress while the service stops. Registered only here. */
const slow: McpTool = {
  definition: { name: 'test_slow_probe', title: 'Slow probe', description: 'Answers after args.ms milliseconds; registered only by tests.', inputSchema: { type: 'object' } },
  scope: 'mcp:read',
  run: async (args) => {
    // Unreferenced: a call cut by the grace time does not keep the test process alive until its end.
    await new Promise((r) => setTimeout(r, Number((args as { ms?: number }).ms ?? 1000)).unref())
    return { content: [{ type: 'text', text: 'done' }] }
  },
}

/** A service with the slow tool, and a call of it in an MCP session. */
async function serviceWithSlowTool(t: Test) {
  const ts = await startTestService(t, { mcpExtraTools: [slow] })
  const org = ts.seed.orgs.find((o) => o.large)!
  const auth = await ts.keyHeader(org.accountId)
  const init = await rpc(ts.svc.mcpUrl, initializeBody(), { authorization: auth })
  const headers = { authorization: auth, 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-11-25' }
  const slowCall = (ms: number) => rpc(ts.svc.mcpUrl, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'test_slow_probe', arguments: { ms } } }, headers)
  return { ts, slowCall }
}

t.test('/healthz and /readyz: no credentials, no quota, reasons when not ready', async (t) => {
  const ts = await startTestService(t)
  const h = await ts.get('/healthz')
  t.equal(h.status, 200)
  t.same(h.body, { status: 'ok' })
  t.equal(h.headers.get('x-ratelimit-limit'), null, 'not counted')
  t.match(h.headers.get('x-request-id'), /^[0-9a-f-]{36}$/, 'a request id is made')
  const r = await ts.get('/readyz')
  t.equal(r.status, 200)
  t.same(r.body, { status: 'ready' })
  t.equal((await ts.get('/readyz?x=1')).status, 200, 'a load balancer\'s query string is ignored')
  const [{ v }] = await ts.svc.db.sql<{ v: number }[]>`SELECT max(version)::int AS v FROM schema_migrations`
  const [row] = await ts.svc.db.sql<{ name: string }[]>`DELETE FROM schema_migrations WHERE version = ${v} RETURNING name`
  const behind = await ts.get('/readyz')
  t.equal(behind.status, 503, 'migrations behind: not ready')
  t.match(behind.body, { status: 'not ready', reasons: [/migrations not current \(database at \d+, this build needs \d+\)/] })
  t.equal(behind.headers.get('retry-after'), '5')
  await ts.svc.db.sql`INSERT INTO schema_migrations (version, name) VALUES (${v}, ${row.name})`
  t.equal((await ts.get('/readyz')).status, 200, 'ready again')
  t.equal((await ts.get('/healthz', null, { method: 'POST' })).status, 405)
})

t.test('X-Request-Id: kept when well formed, replaced otherwise, on every answer', async (t) => {
  const ts = await startTestService(t)
  const org = ts.seed.orgs.find((o) => o.large)!
  const auth = await ts.keyHeader(org.accountId)
  const mine = await ts.get('/v1/orgs', auth, { headers: { 'x-request-id': 'lb-7f3a.19:2' } })
  t.equal(mine.headers.get('x-request-id'), 'lb-7f3a.19:2', 'the caller\'s id')
  const bad = await ts.get('/v1/orgs', auth, { headers: { 'x-request-id': 'x'.repeat(200) } })
  t.match(bad.headers.get('x-request-id'), /^[0-9a-f-]{36}$/, 'too long: replaced')
  const spaced = await ts.get('/v1/orgs', auth, { headers: { 'x-request-id': 'a b' } })
  t.match(spaced.headers.get('x-request-id'), /^[0-9a-f-]{36}$/, 'not a token: replaced')
  t.match((await ts.get('/v1/nothing', auth)).headers.get('x-request-id'), /^[0-9a-f-]{36}$/, 'on a 404')
  t.match((await ts.get('/v1/orgs')).headers.get('x-request-id'), /^[0-9a-f-]{36}$/, 'on a 401')
  t.not((await ts.get('/healthz')).headers.get('x-request-id'), (await ts.get('/healthz')).headers.get('x-request-id'), 'one per request')
})

t.test('a stopping service finishes the answers in progress and stops accepting', async (t) => {
  const { ts, slowCall } = await serviceWithSlowTool(t)
  const inProgress = [slowCall(800), slowCall(1200)]
  await new Promise((r) => setTimeout(r, 200))
  const t0 = Date.now()
  const closing = ts.svc.close(10_000)
  await new Promise((r) => setTimeout(r, 100))
  const refused = await new Promise<string>((resolve) => {
    const req = request(`${ts.url}/healthz`, (res) => resolve(`answered ${res.statusCode}`))
    req.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'))
    req.end()
  })
  t.equal(refused, 'ECONNREFUSED', 'no new connections while draining')
  for (const [i, p] of inProgress.entries()) {
    const r = await p
    t.equal(r.status, 200, `answer ${i + 1} in progress finished`)
    t.equal(r.body.result.content[0].text, 'done')
  }
  await closing
  t.ok(Date.now() - t0 < 5000, 'and the service stopped once they had')
})

t.test('what is still in progress after the grace time is cut', async (t) => {
  const { ts, slowCall } = await serviceWithSlowTool(t)
  const long = slowCall(5000).then(
    (r) => `answered ${r.status}`,
    (e: NodeJS.ErrnoException) => e.code ?? 'error',
  )
  await new Promise((r) => setTimeout(r, 200))
  const t0 = Date.now()
  await ts.svc.close(300)
  t.ok(Date.now() - t0 < 2500, `close returned after the grace time (${Date.now() - t0} ms)`)
  t.match(await long, /^(ECONNRESET|socket hang up|error)$/, 'the unfinished answer was cut')
})
