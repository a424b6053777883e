/**
 * The MCP endpoint over the wire: POST/DELETE/GET, sessions of 2025-era clients (issued, required, ended, expired,
 * bounded per account, never shared across accounts), authentication of every request, the body limit, malformed
 * JSON, Host/Origin checks, no API-version header, the version lifecycle of `/v1/mcp` and the unversioned `/mcp`,
 * and MCP on a listener of its own.
 */
import { t } from '../helpers/file-test.ts'
import { createHash } from 'node:crypto'
import { startTestService, basic } from '../helpers/service.ts'
import { initializeBody, mcpClient, rpc } from '../helpers/mcp.ts'
import { createAccount, createKey } from '../../runtime/platform/admin.ts'
import type { TestService } from '../helpers/service.ts'
import fc from 'fast-check'
import { classifyInboundRequest } from '@modelcontextprotocol/server'
import { plainLegacyCall } from '../../runtime/surfaces/mcp/endpoint.ts'

let now = Date.parse('2026-11-23T12:00:00Z')
const clock = () => now
// The production key cache bound (tests default to none): a session the database confirmed is then trusted for 5 s.
const ts = await startTestService(t, { seed: false, clock, config: { authCacheMs: 5000, mcp: { ...defaults(), sessionIdleMs: 60_000, maxBodyBytes: 64 * 1024, allowedOrigins: ['https://app.example.com'] } } })
const url = ts.svc.mcpUrl

function defaults() {
  return { versions: [{ name: 'v1', status: 'current' as const }], maxBodyBytes: 1_048_576, sessionIdleMs: 3_600_000, sessionsPerAccount: 1000, sessionsPerCredential: 100, clientAnswerMs: 60_000, allowedOrigins: [] as string[], allowedHosts: [] as string[] }
}

async function account(svc: TestService, name: string): Promise<string> {
  const a = await createAccount(svc.svc.db.sql, { name, dailyLimit: 1000, monthlyLimit: 10_000 })
  const k = await createKey(svc.svc.db.sql, svc.svc.pepper, a.id)
  return basic(k.keyId, k.secret)
}
const auth = await account(ts, 'Acme')
const other = await account(ts, 'Globex')

async function initialize(authorization: string): Promise<string> {
  const r = await rpc(url, initializeBody(), { authorization })
  t.equal(r.status, 200, 'initialize answers 200')
  return r.headers.get('mcp-session-id')!
}
const ping = (sid: string | undefined, authorization = auth) => rpc(url, { jsonrpc: '2.0', id: 2, method: 'ping' }, { authorization, 'mcp-protocol-version': '2025-11-25', ...(sid ? { 'mcp-session-id': sid } : {}) })

t.test('initialize: serverInfo 1.0.0, a session id, no API-version header', async (t) => {
  const r = await rpc(url, initializeBody(), { authorization: auth })
  t.equal(r.status, 200)
  t.match(r.headers.get('mcp-session-id'), /^[A-Za-z0-9_-]{43}$/)
  t.equal(r.body.result.serverInfo.version, '1.0.0')
  t.equal(r.body.result.serverInfo.name, 'orgscan')
  t.equal(r.body.result.protocolVersion, '2025-11-25')
  t.equal(r.headers.get('x-orgscan-api-version'), null, 'MCP responses carry no API-version header')
  t.ok(r.body.result.capabilities.tools && r.body.result.capabilities.prompts && r.body.result.capabilities.resources)
  const restAnswer = await ts.get('/v1/orgs', auth)
  t.equal(restAnswer.headers.get('x-orgscan-api-version'), '1', 'REST keeps its header')
})

t.test('GET is 405 with Allow: POST, DELETE, before authentication', async (t) => {
  for (const method of ['GET', 'PUT', 'HEAD']) {
    const r = await fetch(url, { method })
    t.equal(r.status, 405, method)
    t.equal(r.headers.get('allow'), 'POST, DELETE', `${method}: Allow`)
    t.equal(r.headers.get('x-orgscan-api-version'), null)
  }
})

t.test('sessions: required, checked per account, ended by DELETE, then 404', async (t) => {
  const sid = await initialize(auth)
  t.equal((await ping(sid)).status, 200, 'a request in the session')
  const none = await ping(undefined)
  t.equal(none.status, 400, 'no session id → 400')
  t.equal(none.body.error.code, -32600)
  t.equal((await ping('A'.repeat(43))).status, 404, 'an unknown session → 404')
  t.equal((await ping('not a session id')).status, 404, 'a malformed session id → 404')
  t.equal((await ping(sid, other)).status, 404, "another account's credentials cannot use the session")
  const del = await rpc(url, undefined, { authorization: auth, 'mcp-session-id': sid }, 'DELETE')
  t.equal(del.status, 200, 'DELETE ends it')
  const after = await ping(sid)
  t.equal(after.status, 404, 'later requests with that id → 404')
  t.equal(after.body.error.code, -32001)
  t.equal((await rpc(url, undefined, { authorization: auth, 'mcp-session-id': sid }, 'DELETE')).status, 404, 'a second DELETE → 404')
  t.equal((await rpc(url, undefined, { authorization: auth }, 'DELETE')).status, 400, 'DELETE without a session id → 400')
})

t.test('a confirmed session is trusted for a bounded time without asking the database again', async (t) => {
  const sid = await initialize(auth)
  t.equal((await ping(sid)).status, 200, 'confirmed by the database')
  // Ended by another process: its row is gone, this process does not know yet.
  const gone = await ts.svc.db.sql`DELETE FROM mcp_sessions WHERE id_hash = ${createHash('sha256').update(sid).digest()} RETURNING 1`
  t.equal(gone.length, 1, 'the session row is deleted behind the process')
  // The bound: the key cache's 5 s, but never more than the interval at which a session's last use is written
  // (a twentieth of the idle time: 3 s for this service's 60 s), so remembering never lets a session expire early.
  now += 2_000
  t.equal((await ping(sid)).status, 200, 'within the bound: still served, from memory')
  t.equal((await ping(sid, other)).status, 404, "the remembered confirmation is the account's own: another account's credentials still get 404")
  now += 1_000
  const after = await ping(sid)
  t.equal(after.status, 404, '3 s after the confirmation the database is asked again: 404')
  t.equal(after.body.error.code, -32001)
})

t.test('a DELETE racing a request of the same session: the session stays ended', async (t) => {
  // The request's check asks the database before the DELETE commits and hears "live"; it must not then remember the
  // session as confirmed, or the ended session would be served from memory afterwards.
  for (let i = 0; i < 10; i++) {
    const sid = await initialize(auth)
    const [pinged, deleted] = await Promise.all([ping(sid), rpc(url, undefined, { authorization: auth, 'mcp-session-id': sid }, 'DELETE')])
    t.equal(deleted.status, 200, `round ${i + 1}: DELETE ends it`)
    t.ok(pinged.status === 200 || pinged.status === 404, `round ${i + 1}: the racing request is served or not found (${pinged.status})`)
    t.equal((await ping(sid)).status, 404, `round ${i + 1}: afterwards the session is gone`)
  }
})

t.test('the SDK client: a session, and terminateSession ends it', async (t) => {
  const { client, transport } = await mcpClient(t, url, auth)
  t.match(transport.sessionId, /^[A-Za-z0-9_-]{43}$/)
  t.equal(client.getServerVersion()?.version, '1.0.0')
  const sid = transport.sessionId!
  await transport.terminateSession()
  t.equal((await ping(sid)).status, 404)
})

t.test('sessions expire after the idle time and are pruned', async (t) => {
  const sid = await initialize(auth)
  now += 59_000
  t.equal((await ping(sid)).status, 200, 'still alive just before the idle time (and kept alive by the request)')
  now += 61_000
  t.equal((await ping(sid)).status, 404, 'expired after 60 s without a request')
  const pruned = await ts.svc.db.sql`SELECT count(*)::int AS n FROM mcp_sessions WHERE last_seen_at <= ${new Date(now - 60_000).toISOString()}::timestamptz`
  t.ok(pruned[0].n >= 1, 'expired rows exist until pruned')
})

t.test('an account holds a bounded number of live sessions; a credential recycles its own', async (t) => {
  const capped = await startTestService(t, { seed: false, clock, config: { mcp: { ...defaults(), sessionsPerAccount: 3, sessionsPerCredential: 2, sessionIdleMs: 60_000 } } })
  const mcpUrl = capped.svc.mcpUrl
  const [a, b] = [await account(capped, 'Initech'), await account(capped, 'Hooli')]
  const accountA = (await capped.svc.db.sql`SELECT id::text AS id FROM accounts WHERE name = 'Initech'`)[0].id as string
  const k2 = await createKey(capped.svc.db.sql, capped.svc.pepper, accountA)
  const a2 = basic(k2.keyId, k2.secret)
  const open = async (authorization: string) => {
    const r = await rpc(mcpUrl, initializeBody(), { authorization })
    return { status: r.status, sid: r.headers.get('mcp-session-id') ?? undefined, message: r.body?.error?.message as string | undefined }
  }
  const alive = async (sid: string | undefined, authorization: string) => (await rpc(mcpUrl, { jsonrpc: '2.0', id: 2, method: 'ping' }, { authorization, 'mcp-protocol-version': '2025-11-25', 'mcp-session-id': sid ?? '' })).status
  // Sessions seen by the database more than two touch intervals ago (idle 60 s: touched every 3 s, so 6 s) are idle.
  const first = await open(a)
  now += 7000
  const second = await open(a)
  t.same([first.status, second.status], [200, 200], 'a key opens its allowance of two')
  now += 7000
  t.equal((await open(a2)).status, 200, 'another key of the account opens the third')
  const over = await open(a2)
  t.equal(over.status, 429, 'the account\'s fourth live session is refused')
  t.match(over.message, /most it may hold/)
  const third = await open(a)
  t.equal(third.status, 200, 'a key at its own allowance is not refused: its least recently used idle session makes room')
  t.equal(await alive(first.sid, a), 404, 'that session has ended (its client initializes again)')
  t.equal(await alive(second.sid, a), 200, 'the others live')
  t.equal(await alive(third.sid, a), 200)
  const busy = await open(a)
  t.equal(busy.status, 429, 'both of its sessions were used just now: none is ended, the opening is refused')
  t.match(busy.message, /This credential already has 2 open MCP sessions, the most it may hold, and each was opened or used in the last 6 seconds/)
  t.equal(await alive(second.sid, a), 200, 'a session in use is never ended to make room')
  t.equal(await alive(third.sid, a), 200)
  const count = await capped.svc.db.sql`SELECT count(*)::int AS n FROM mcp_sessions WHERE account_id = ${accountA}::bigint`
  t.equal(count[0].n, 3, 'the account still holds three')
  // The account over its bound (as after the bound was lowered): a refused opening ends nothing.
  await capped.svc.db.sql`INSERT INTO mcp_sessions (id_hash, account_id, credential_id, protocol_version, created_at, last_seen_at)
    VALUES (${Buffer.alloc(32, 7)}, ${accountA}::bigint, 'osk_elsewhereelsewhere', '2025-11-25', ${new Date(now).toISOString()}::timestamptz, ${new Date(now).toISOString()}::timestamptz)`
  now += 7000
  const full = await open(a)
  t.equal(full.status, 429, 'over the account bound: refused')
  t.match(full.message, /most it may hold/)
  t.equal(await alive(second.sid, a), 200, 'and none of the key\'s idle sessions was ended for it')
  t.equal(await alive(third.sid, a), 200)
  t.equal((await open(b)).status, 200, 'other accounts are unaffected')
  now += 61_000
  t.equal((await open(a2)).status, 200, 'expired sessions no longer count')
})

t.test('the account bound holds when many sessions are opened at once', async (t) => {
  const capped = await startTestService(t, { seed: false, clock, config: { mcp: { ...defaults(), sessionsPerAccount: 5, sessionIdleMs: 60_000 } } })
  const a = await createAccount(capped.svc.db.sql, { name: 'Umbrella', dailyLimit: 1000, monthlyLimit: 10_000 })
  const keys = await Promise.all(Array.from({ length: 24 }, () => createKey(capped.svc.db.sql, capped.svc.pepper, a.id)))
  const answers = await Promise.all(keys.map((k) => rpc(capped.svc.mcpUrl, initializeBody(), { authorization: basic(k.keyId, k.secret) })))
  const statuses = answers.map((r) => r.status)
  t.equal(statuses.filter((s) => s === 200).length, 5, 'five opened, never one more')
  t.equal(statuses.filter((s) => s === 429).length, 19, 'the others refused')
  const count = await capped.svc.db.sql`SELECT count(*)::int AS n FROM mcp_sessions WHERE account_id = ${a.id}::bigint`
  t.equal(count[0].n, 5)
})

t.test('openings waiting for an account held elsewhere give up 5 s after they arrive, together, with a 503', { skip: process.env.TEST_DATABASE_URL ? false : 'needs PostgreSQL (a second connection holding the account\'s lock): set TEST_DATABASE_URL; the PostgreSQL run covers it' }, async (t) => {
  const held = await startTestService(t, { seed: false, config: { mcp: { ...defaults() } } })
  const a = await createAccount(held.svc.db.sql, { name: 'Stalled', dailyLimit: 1000, monthlyLimit: 10_000 })
  const k = await createKey(held.svc.db.sql, held.svc.pepper, a.id)
  // Another process in the middle of an opening of this account, stalled: it holds the account's lock.
  const other = await held.svc.db.sql.reserve()
  await other`SELECT pg_advisory_lock(hashtextextended(${`mcp_sessions:${a.id}`}, 0))`
  const started = Date.now()
  const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => rpc(held.svc.mcpUrl, initializeBody(`opening-${i}`), { authorization: basic(k.keyId, k.secret) }).then((r) => ({ ...r, at: Date.now() - started }))))
  await other`SELECT pg_advisory_unlock_all()`
  other.release()
  t.same(answers.map((r) => r.status), Array(6).fill(503), 'each is refused')
  t.ok(answers.every((r) => r.at < 8000), `within the 5 s of its arrival, not one after another (${answers.map((r) => r.at).join(', ')} ms)`)
  t.ok(answers.every((r) => r.headers.get('retry-after') === '1'))
  t.match(answers[0].body.error, { data: { status: 503, code: 'service_unavailable' }, message: /busy being opened; retry shortly/ })
  t.same(answers.map((r) => r.body.id), answers.map((_, i) => `opening-${i}`), 'each answer names its request\'s id')
  t.equal((await rpc(held.svc.mcpUrl, initializeBody(), { authorization: basic(k.keyId, k.secret) })).status, 200, 'once the lock is free, openings succeed')
})

t.test('every request is authenticated; malformed bodies; the body limit', async (t) => {
  const sid = await initialize(auth)
  const anon = await rpc(url, initializeBody(41))
  t.equal(anon.status, 401)
  t.equal(anon.body.id, 41, 'the refusal names the request\'s id (read before the credentials are checked)')
  t.equal((await rpc(url, { jsonrpc: '2.0', id: { not: 'an id' }, method: 'ping' })).body.id, null, 'an id that is neither a string nor a number is not repeated')
    t.match(anon.headers.get('www-authenticate'), /^Bearer resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/v1\/mcp", scope="mcp:read", Basic realm="orgscan"/, 'Bearer with the resource metadata first, Basic also accepted')
  t.equal(anon.body.error.data.code, 'unauthorized')
  t.equal((await ping(sid, basic('osk_aaaaaaaaaaaaaaaaaaaa', 'x'.repeat(43)))).status, 401, 'a session does not replace credentials')
  const bad = await rpc(url, '{"jsonrpc":"2.0",', { authorization: auth })
  t.equal(bad.status, 400)
  t.equal(bad.body.error.code, -32700, 'malformed JSON → parse error')
  const big = await rpc(url, { jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(70 * 1024) } }, { authorization: auth, 'mcp-session-id': sid })
  t.equal(big.status, 413, 'a body over the limit → 413')
  t.equal((await ping(sid)).status, 200, 'the server still serves')
})

t.test('DNS-rebinding protection: Host and Origin', async (t) => {
  const evilHost = await rpc(url, initializeBody(), { authorization: auth, host: 'evil.example.com' })
  t.equal(evilHost.status, 403, 'a foreign Host on a loopback listener → 403')
  const evilOrigin = await rpc(url, initializeBody(), { authorization: auth, origin: 'https://evil.example.com' })
  t.equal(evilOrigin.status, 403, 'a foreign Origin → 403')
  const port = new URL(url).port
  t.equal((await rpc(url, initializeBody(), { authorization: auth, origin: `http://localhost:${port}` })).status, 200, 'a loopback origin is allowed')
  t.equal((await rpc(url, initializeBody(), { authorization: auth, origin: 'https://app.example.com' })).status, 200, 'a configured origin is allowed')
  t.equal((await rpc(url, initializeBody(), { authorization: auth, host: `localhost:${port}` })).status, 200, 'localhost with any port')
})

t.test('unknown tools are protocol errors', async (t) => {
  const sid = await initialize(auth)
  const r = await rpc(url, { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'get_org_issues', arguments: {} } }, { authorization: auth, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' })
  t.equal(r.status, 200)
  t.equal(r.body.error.code, -32602, 'invalid params, not a tool result')
  t.equal(r.body.result, undefined)
})

t.test('malformed params of any method: -32602 naming the wrong fields, never -32603 or the validator\'s dump', async (t) => {
  const sid = await initialize(auth)
  const legacyHeaders = { authorization: auth, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' }
  const envelope = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {}, 'io.modelcontextprotocol/clientInfo': { name: 'raw-test', version: '1.0.0' } }
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['prompts/get', { name: 5 }, /^Invalid params for prompts\/get: params\.name: expected string, received number$/],
    ['prompts/get', { name: 'audit_security', arguments: { orgId: 5 } }, /^Invalid params for prompts\/get: params\.arguments\.orgId: expected string, received number$/],
    ['resources/read', {}, /^Invalid params for resources\/read: params\.uri: missing \(expected string\)$/],
    ['completion/complete', { ref: { type: 'ref/prompt' }, argument: {} }, /^Invalid params for completion\/complete: params\.ref\.name: missing \(expected string\); params\.argument\.name: missing/],
    ['tools/list', { cursor: 5 }, /^Invalid params for tools\/list: params\.cursor: expected string, received number$/],
    ['tools/call', { name: 5 }, /^Invalid params for tools\/call: params\.name: expected string, received number$/],
  ]
  for (const [method, params, message] of cases) {
    const legacy = await rpc(url, { jsonrpc: '2.0', id: 3, method, params }, legacyHeaders)
    t.equal(legacy.status, 200, `2025-era ${method}: 200 with a JSON-RPC error`)
    t.same(legacy.body, { jsonrpc: '2.0', id: 3, error: { code: -32602, message: legacy.body?.error?.message } }, `2025-era ${method}: only code and message`)
    t.match(legacy.body.error.message, message, `2025-era ${method}: the message names the field`)
    const modern = await rpc(url, { jsonrpc: '2.0', id: 4, method, params: { ...params, _meta: envelope } }, { authorization: auth, 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, ...(typeof params.name === 'string' ? { 'mcp-name': params.name } : {}) })
    t.equal(modern.body?.error?.code, -32602, `2026-era ${method}: -32602`)
    t.match(modern.body.error.message, message, `2026-era ${method}: the same message`)
  }
  const again = await rpc(url, { jsonrpc: '2.0', id: 5, method: 'initialize', params: { protocolVersion: 5 } }, legacyHeaders)
  t.same(again.body.error, { code: -32602, message: 'Invalid params for initialize: params.protocolVersion: expected string, received number; params.capabilities: missing (expected object); params.clientInfo: missing (expected object)' }, 'a malformed initialize inside a session')
  const fresh = await rpc(url, { jsonrpc: '2.0', id: 6, method: 'initialize', params: { protocolVersion: '2025-11-25' } }, { authorization: auth })
  t.equal(fresh.status, 200, 'a malformed initialize without a session is answered, not refused for the missing session')
  t.match(fresh.body.error, { code: -32602, message: /^Invalid params for initialize: params\.capabilities: missing/ })
  t.equal(fresh.headers.get('mcp-session-id'), null, 'and opens no session')
  const notification = await rpc(url, { jsonrpc: '2.0', method: 'initialize', params: {} }, { authorization: auth })
  t.equal(notification.status, 400, 'initialize as a notification still needs a session')
  t.equal((await ping(sid)).status, 200, 'the session still serves')
})

t.test("a 2025-era notifications/cancelled cannot cancel anyone's request: the shared server numbers requests its own way", async (t) => {
  // A fresh process: its shared server numbers the 2025-era requests it is handed 1, 2, 3… whoever sends them.
  let release!: () => void
  const held = new Promise<void>((r) => (release = r))
  const slowProbe = {
    definition: { name: 'test_slow_probe', title: 'Slow probe', description: 'Answers when the test releases it.', inputSchema: { type: 'object' as const } },
    scope: 'mcp:read' as const,
    run: async () => {
      await held
      return { content: [{ type: 'text' as const, text: 'done' }] }
    },
  }
  const own = await startTestService(t, { seed: false, mcpExtraTools: [slowProbe] })
  const victim = await account(own, 'Victim')
  const attacker = await account(own, 'Attacker')
  const sessionOf = async (authorization: string) => (await rpc(own.svc.mcpUrl, initializeBody(), { authorization })).headers.get('mcp-session-id')!
  const victimSid = await sessionOf(victim) // the server's request 1
  const attackerSid = await sessionOf(attacker) // 2
  // Without MCP-Protocol-Version the call goes through the shared server: its request 3.
  const call = rpc(own.svc.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'test_slow_probe', arguments: {} } }, { authorization: victim, 'mcp-session-id': victimSid })
  await new Promise((r) => setTimeout(r, 100))
  for (const requestId of [1, 2, 3, 4]) {
    const cancel = await rpc(own.svc.mcpUrl, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'x' } }, { authorization: attacker, 'mcp-session-id': attackerSid, 'mcp-protocol-version': '2025-11-25' })
    t.equal(cancel.status, 202, `cancelling ${requestId} is accepted (and dropped)`)
  }
  const own1 = await rpc(own.svc.mcpUrl, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }, { authorization: victim, 'mcp-session-id': victimSid, 'mcp-protocol-version': '2025-11-25' })
  t.equal(own1.status, 202, "even the caller's own cancellation is dropped: a cancelled call runs to its end")
  release()
  const answer = await call
  t.equal(answer.status, 200, 'the call is answered')
  t.same(answer.body.result.content, [{ type: 'text', text: 'done' }], 'with its result')
})

t.test('2026-era requests: Accept and Content-Type are checked as in the 2025 era, and answers are no-store', async (t) => {
  const envelope = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {}, 'io.modelcontextprotocol/clientInfo': { name: 'raw-test', version: '1.0.0' } }
  const body = { jsonrpc: '2.0', id: 8, method: 'tools/list', params: { _meta: envelope } }
  const headers = { authorization: auth, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' }
  const ok = await rpc(url, body, headers)
  t.equal(ok.status, 200)
  t.ok(Array.isArray(ok.body.result.tools))
  t.equal(ok.headers.get('cache-control'), 'no-store', 'no-store, as every MCP answer')
  const html = await rpc(url, body, { ...headers, accept: 'text/html' })
  t.equal(html.status, 406, 'a client that does not accept JSON and event streams: 406')
  t.match(html.body, { id: 8, error: { code: -32600, message: /Not Acceptable/ } })
  const text = await rpc(url, JSON.stringify(body), { ...headers, 'content-type': 'text/plain' })
  t.equal(text.status, 415, 'a body that is not declared JSON: 415')
})

t.test('version lifecycle: the unversioned /mcp before and after its sunset; /v1/mcp deprecated then removed', async (t) => {
  const legacyUrl = url.replace('/v1/mcp', '/mcp')
  const saved = now
  now = Date.parse('2026-06-24T23:59:59Z')
  const before = await rpc(legacyUrl, initializeBody(), { authorization: auth })
  t.equal(before.status, 200, 'served until the sunset date')
  t.equal(before.headers.get('deprecation'), 'true')
  t.equal(before.headers.get('sunset'), 'Thu, 25 Jun 2026 00:00:00 GMT')
  now = Date.parse('2026-06-25T00:00:00Z')
  t.equal((await rpc(legacyUrl, initializeBody(), { authorization: auth })).status, 410, '410 Gone from the sunset date (today)')
  now = saved
  const dep = await startTestService(t, { seed: false, clock, config: { mcp: { ...defaults(), versions: [{ name: 'v1', status: 'deprecated', sunsetDate: '2027-03-01' }] } } })
  const a = await account(dep, 'Deprecated')
  const { client } = await mcpClient(t, dep.svc.mcpUrl, a)
  const info = await client.callTool({ name: 'server_info', arguments: {} })
  t.same(info.structuredContent, { versions: [{ name: 'v1', status: 'deprecated', sunsetDate: '2027-03-01' }] }, 'server_info reports the deprecation')
  const raw = await rpc(dep.svc.mcpUrl, initializeBody(), { authorization: a })
  t.equal(raw.headers.get('deprecation'), null, 'MCP uses no deprecation headers')
  now = Date.parse('2027-03-01T00:00:00Z')
  t.equal((await rpc(dep.svc.mcpUrl, initializeBody(), { authorization: a })).status, 410, 'removed at sunset')
  now = saved
})

t.test('MCP on a listener of its own (MCP_PORT)', async (t) => {
  const own = await startTestService(t, { seed: false, config: { mcp: { ...defaults(), port: 0 } } })
  const a = await account(own, 'Separate')
  t.not(new URL(own.svc.mcpUrl).port, new URL(own.url).port, 'two listeners')
  const root = await fetch(new URL('/', own.svc.mcpUrl))
  t.same(await root.json(), { versions: [{ name: 'v1', status: 'current' }] }, 'GET / on the MCP listener')
  t.equal((await rpc(own.svc.mcpUrl, initializeBody(), { authorization: a })).status, 200)
  t.equal((await rpc(`${own.url}/v1/mcp`, initializeBody(), { authorization: a })).status, 404, 'not on the REST listener')
})

t.test('2025-era calls skip the SDK\'s classifier only where it would call them 2025-era', async (t) => {
  const call = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'list_orgs', arguments: {} } }
  t.ok(plainLegacyCall(call, '2025-11-25'), 'an ordinary 2025-era tool call takes the short way')
  t.equal(classifyInboundRequest({ httpMethod: 'POST', protocolVersionHeader: '2025-11-25', body: call }).kind, 'legacy')
  const near: Array<[string, unknown, string | undefined]> = [
    ['no version header', call, undefined],
    ['a 2026 version', call, '2026-07-28'],
    ['a version with spaces', call, ' 2025-11-25'],
    ['initialize', { ...call, method: 'initialize' }, '2025-11-25'],
    ['an envelope claim', { ...call, params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } } }, '2025-11-25'],
    ['a fractional id', { ...call, id: 1.5 }, '2025-11-25'],
    ['an extra key', { ...call, result: {} }, '2025-11-25'],
    ['a batch', [call], '2025-11-25'],
    ['a notification', { jsonrpc: '2.0', method: 'notifications/initialized' }, '2025-11-25'],
  ]
  for (const [what, body, v] of near) t.notOk(plainLegacyCall(body, v), `${what}: left to the SDK`)
  // Whenever the short way is taken, the SDK's classifier would have said 2025-era too.
  const value = fc.oneof(
    fc.constantFrom<unknown>('2.0', '1.0', 'tools/call', 'initialize', 'ping', '', null, true, 0, -0, 1, 1.5, -7, 2 ** 53, 2 ** 60, NaN, [], {}),
    fc.string({ maxLength: 8 }),
    fc.integer(),
    fc.double(),
    fc.dictionary(fc.constantFrom('_meta', 'name', 'arguments', 'progressToken'), fc.oneof(fc.constant({ 'io.modelcontextprotocol/protocolVersion': '2026-07-28' }), fc.constant({ progressToken: 1 }), fc.constant({ progressToken: {} }), fc.string({ maxLength: 4 }), fc.constant(null)), { maxKeys: 3 }),
  )
  const body = fc.oneof(
    fc.dictionary(fc.constantFrom('jsonrpc', 'id', 'method', 'params', 'result', 'error', 'extra', '__proto__'), value, { maxKeys: 5 }),
    fc.record({ jsonrpc: fc.constantFrom<unknown>('2.0', '1.0', 2), id: value, method: value, params: fc.option(value, { nil: undefined }) }, { requiredKeys: ['jsonrpc', 'id', 'method'] }),
    // Mostly well-formed requests, with one part at a time going wrong.
    fc.record(
      {
        jsonrpc: fc.constantFrom<unknown>('2.0', '2.0', '2.0', '1.0'),
        id: fc.oneof(fc.integer(), fc.string({ maxLength: 4 }), value),
        method: fc.oneof(fc.constantFrom('tools/call', 'tools/list', 'initialize', 'ping'), value),
        params: fc.oneof(fc.dictionary(fc.constantFrom('_meta', 'name', 'arguments'), value, { maxKeys: 3 }), value),
      },
      { requiredKeys: ['jsonrpc', 'id', 'method'] },
    ),
    fc.array(value, { maxLength: 2 }),
    value,
  )
  const version = fc.constantFrom<string | undefined>(undefined, '2025-11-25', '2025-06-18', '2024-11-05', '2026-07-28', '2025-11-25 ', 'bogus', '')
  let shortWays = 0
  fc.assert(
    fc.property(body, version, (b, v) => {
      if (!plainLegacyCall(b, v)) return true
      shortWays++
      return classifyInboundRequest({ httpMethod: 'POST', protocolVersionHeader: v, body: b }).kind === 'legacy'
    }),
    { numRuns: 10_000, seed: 20261124 },
  )
  t.ok(shortWays > 50, `the property met the short way often (${shortWays} times)`)
})
