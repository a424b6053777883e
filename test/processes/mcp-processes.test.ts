/**
 * MCP sessions do not pin a client to a process: two `orgscan serve` processes on one PostgreSQL serve one session
 * interchangeably, its log level set on one applies on both, a DELETE on one ends it on both (at once: the other is
 * notified), and restarting a process ends nobody's session. Needs a
 * PostgreSQL server: the embedded database belongs to one process.
 */
import { t } from '../helpers/file-test.ts'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { basic } from '../helpers/service.ts'
import { spawnServer, type ServerProcess } from '../helpers/server-process.ts'
import { createFreshPostgresDatabase } from '../helpers/test-db.ts'
import { initializeBody, rpc } from '../helpers/mcp.ts'
import { servedPostgres } from '../helpers/served-postgres.ts'
import { createKey } from '../../runtime/platform/admin.ts'

const PG = process.env.TEST_DATABASE_URL
t.test('two processes serve one session', { skip: PG ? false : 'needs TEST_DATABASE_URL (PostgreSQL): the embedded database belongs to one process' }, async (t) => {
  const pepper = 'processes-pepper-0123456789abcdefghijk'
  const { sql, seed, env } = await servedPostgres(t, await createFreshPostgresDatabase(PG!), pepper)
  const org = seed.orgs.find((o) => o.large)!
  const key = await createKey(sql, pepper, org.accountId)
  const authorization = basic(key.keyId, key.secret)
  const start = async () => {
    const p = await spawnServer(env())
    t.teardown(() => p.stop(0))
    return p
  }
  const [a, b] = await Promise.all([start(), start()])
  const mcp = (p: ServerProcess) => `${p.url}/v1/mcp`
  const call = (p: ServerProcess, sid: string) =>
    rpc(mcp(p), { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'list_org_objects', arguments: { orgId: org.salesforceId, limit: 2 } } }, { authorization, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' })

  // The SDK client opens the session on A; its requests then go to B (as a load balancer might send them).
  const client = new Client({ name: 'two-processes', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL(mcp(a)), { requestInit: { headers: { authorization } } })
  await client.connect(transport)
  const sid = transport.sessionId!
  t.match(sid, /^[A-Za-z0-9_-]{43}$/)
  const onB = await call(b, sid)
  t.equal(onB.status, 200, 'B serves the session A opened')
  t.equal(onB.body.result.structuredContent.data.length, 2)
  t.equal((await call(a, sid)).status, 200, 'and A still does')

  // The log level is kept with the session: set on A, it applies on B, which had confirmed the session without one
  // (and would trust that for 5 s): the change's notice makes it ask again.
  t.equal(onB.headers.get('content-type'), 'application/json', 'no level: a JSON answer on B')
  const set = await rpc(mcp(a), { jsonrpc: '2.0', id: 4, method: 'logging/setLevel', params: { level: 'info' } }, { authorization, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' })
  t.same(set.body, { result: {}, jsonrpc: '2.0', id: 4 }, 'setLevel on A')
  const l0 = Date.now()
  let logged = await call(b, sid)
  while (logged.headers.get('content-type') !== 'text/event-stream' && Date.now() - l0 < 1_000) {
    await new Promise((r) => setTimeout(r, 20))
    logged = await call(b, sid)
  }
  t.equal(logged.headers.get('content-type'), 'text/event-stream', `B streams the call's log message, within ${Date.now() - l0} ms`)
  t.match(logged.text, /"method":"notifications\/message","params":\{"level":"info","logger":"orgscan","data":\{[^}]*"tool":"list_org_objects"/)

  const del = await rpc(mcp(b), undefined, { authorization, 'mcp-session-id': sid }, 'DELETE')
  t.equal(del.status, 200, 'DELETE on B')
  // A remembered the session as confirmed (for up to 5 s); the deletion's notice makes it forget at once.
  const t0 = Date.now()
  let onA = await call(a, sid)
  while (onA.status === 200 && Date.now() - t0 < 1_000) {
    await new Promise((r) => setTimeout(r, 20))
    onA = await call(a, sid)
  }
  t.equal(onA.status, 404, `ended on A too, within ${Date.now() - t0} ms (well inside the 5 s A would otherwise trust it)`)
  t.equal((await call(b, sid)).status, 404, 'and on B')
  await client.close()

  const init = await rpc(mcp(a), initializeBody(), { authorization })
  const second = init.headers.get('mcp-session-id')!
  t.equal(await a.stop(), 0, 'A stops cleanly')
  const a2 = await start()
  t.equal((await call(a2, second)).status, 200, 'a restarted process serves a session opened before the restart')
})
