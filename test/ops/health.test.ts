/**
 * Health and shutdown (docs/operating.md "Health"): /healthz and /readyz answer without credentials or quota;
 * /readyz is 503 with its reasons when migrations are behind; every answer carries an X-Request-Id (the caller's
 * when well formed); a stopping service finishes the answers in progress, stops accepting, and cuts what is left
 * after its grace time.
 */
import { type Test } from 'tap'
import { t } from '../helpers/file-test.ts'
import { request } from 'node:http'
import { startTestService } from '../helpers/service.ts'
import { initializeBody, rpc } from '../helpers/mcp.ts'
import type { McpTool } from '../../runtime/surfaces/mcp/resource-tools.ts'

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
  // Every way a head is written: an answer (twice: from the database, then the cache), a 304, a 405, MCP, OAuth, the docs.
  const fields = `/v1/orgs/${org.salesforceId}/fields?limit=2`
  const first = await ts.get(fields, auth, { headers: { 'x-request-id': 'db-read' } })
  t.equal(first.headers.get('x-request-id'), 'db-read', 'an answer read from the database')
  t.equal((await ts.get(fields, auth, { headers: { 'x-request-id': 'cached' } })).headers.get('x-request-id'), 'cached', 'the same answer from the cache')
  const etag = first.headers.get('etag')!
  const notModified = await ts.get(fields, auth, { headers: { 'x-request-id': 'not-modified', 'if-none-match': etag } })
  t.equal(notModified.status, 304)
  t.equal(notModified.headers.get('x-request-id'), 'not-modified', 'a 304')
  const post = await ts.get('/v1/orgs', auth, { method: 'POST', headers: { 'x-request-id': 'wrong-method' } })
  t.equal(post.status, 405)
  t.equal(post.headers.get('x-request-id'), 'wrong-method', 'a 405')
  const mcp = await fetch(ts.svc.mcpUrl, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-request-id': 'mcp-call' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } }) })
  t.equal(mcp.status, 200)
  t.equal(mcp.headers.get('x-request-id'), 'mcp-call', 'an MCP answer')
  await mcp.arrayBuffer()
  for (const [path, what] of [['/.well-known/oauth-authorization-server', 'OAuth metadata'], ['/docs', 'the reference page']] as const) {
    const r = await fetch(ts.url + path, { headers: { 'x-request-id': `p-${what.length}` } })
    t.equal(r.headers.get('x-request-id'), `p-${what.length}`, what)
    await r.arrayBuffer()
  }
})

t.test('the response class adds the request id to any head, and never to the caller\'s headers object', async (t) => {
  const { createServer } = await import('node:http')
  const { Response } = await import('../../runtime/core/http/response.ts')
  const shared = { 'Content-Type': 'text/plain' }
  let n = 0
  const server = createServer({ ServerResponse: Response }, (req, res) => {
    ;(res as InstanceType<typeof Response>).requestId = `id-${++n}`
    if (req.url === '/object') res.writeHead(200, shared).end('a')
    else if (req.url === '/reason') res.writeHead(200, 'Fine', shared).end('b')
    else if (req.url === '/array') res.writeHead(200, ['Content-Type', 'text/plain']).end('c')
    else if (req.url === '/progressive') {
      res.setHeader('Content-Type', 'text/plain')
      res.writeHead(201, { 'X-Other': '1' }).end('d')
    } else res.end('e')
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  t.teardown(() => server.close())
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`
  const ids: string[] = []
  for (const path of ['/object', '/reason', '/array', '/progressive', '/implicit']) {
    const r = await fetch(base + path)
    await r.text()
    ids.push(`${path} ${r.headers.get('x-request-id')}`)
    if (path === '/reason') t.equal(r.statusText, 'Fine', 'the reason phrase kept')
    if (path === '/progressive') t.same([r.status, r.headers.get('content-type'), r.headers.get('x-other')], [201, 'text/plain', '1'], 'headers set before and given to writeHead both sent')
  }
  t.same(ids, ['/object id-1', '/reason id-2', '/array id-3', '/progressive id-4', '/implicit id-5'], 'every kind of head carries its own id')
  t.same(shared, { 'Content-Type': 'text/plain' }, 'the shared headers object is untouched')
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
    t.equal(r.headers.get('connection'), 'close', `answer ${i + 1}, begun before the drain, says Connection: close`)
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
