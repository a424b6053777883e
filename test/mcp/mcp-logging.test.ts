/**
 * MCP logging: the `logging` capability, `logging/setLevel` kept per session, and one `notifications/message` per tool
 * call of the session at or above its level (info: the answer, with records, duration and quota left; warning: a
 * refusal or a rate limit; error: a server fault, saying nothing of its cause), sent before the result on an event
 * stream. A session that set no level gets plain JSON answers; no session sees another's calls. A 2026-07-28 request
 * carries its own level in `_meta`.
 */
import type { Test } from 'tap'
import { t } from '../helpers/file-test.ts'
import { LOG_LEVEL_META_KEY, type Client } from '@modelcontextprotocol/client'
import { updateAccount } from '../../runtime/platform/admin.ts'
import { startTestService } from '../helpers/service.ts'
import { failingProbe, initializeBody, mcpClient, rpc } from '../helpers/mcp.ts'

const ts = await startTestService(t, { mcpExtraTools: [failingProbe] })
const org = ts.seed.orgs.find((o) => o.large)!
const orgId = org.salesforceId
const auth = await ts.keyHeader(org.accountId)
const otherOrg = ts.seed.orgs.find((o) => o.accountId !== org.accountId)!
const otherAuth = await ts.keyHeader(otherOrg.accountId)
const url = ts.svc.mcpUrl

type Message = { level: string; logger?: string; data: any }

/** The log messages a client receives (its notification handler), in order. */
function received(client: Client): Message[] {
  const got: Message[] = []
  client.setNotificationHandler('notifications/message', (n) => void got.push(n.params as Message))
  return got
}

/** Lets handlers of messages that arrived with an answer run. */
const settle = () => new Promise((r) => setTimeout(r, 20))

/** A raw 2025-era session: its headers, for requests sent with fetch. */
async function rawSession(authorization = auth): Promise<Record<string, string>> {
  const init = await rpc(url, initializeBody(), { authorization })
  return { authorization, 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-11-25', 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
}

let nextId = 100
async function post(headers: Record<string, string>, method: string, params: unknown): Promise<{ status: number; type: string | null; text: string }> {
  const r = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }) })
  return { status: r.status, type: r.headers.get('content-type'), text: await r.text() }
}

/** The JSON-RPC messages of an event stream, in order (an event's data lines joined with line breaks). */
function events(text: string): any[] {
  return text
    .split('\n\n')
    .filter((e) => e.trim())
    .map((e) => JSON.parse(e.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).replace(/^ /, '')).join('\n')))
}

async function withDailyLimit(t: Test, accountId: string, dailyLimit: number): Promise<void> {
  const set = async (n: number) => {
    await updateAccount(ts.svc.db.sql, accountId, { dailyLimit: n })
    ts.svc.ctx.quota.invalidate?.(accountId)
  }
  await set(dailyLimit)
  t.teardown(() => set(10_000))
}

t.test('the logging capability is declared and logging/setLevel answers {}', async (t) => {
  const { client } = await mcpClient(t, url, auth)
  t.same(client.getServerCapabilities()?.logging, {}, 'initialize declares logging')
  t.same(await client.setLoggingLevel('info'), {}, 'setLevel is accepted')
  const raw = await rawSession()
  const bad = await post(raw, 'logging/setLevel', { level: 'loud' })
  t.equal(bad.status, 200)
  t.match(JSON.parse(bad.text).error, { code: -32602, message: /level/ }, 'an unknown level is invalid params')
})

t.test('after setLevel(info) every tool call sends its line, before its result', async (t) => {
  const { client } = await mcpClient(t, url, auth)
  const got = received(client)
  await client.setLoggingLevel('info')
  const r = (await client.callTool({ name: 'list_org_fields', arguments: { orgId, limit: 3 } })) as { structuredContent: { data: unknown[] } }
  await settle()
  t.equal(r.structuredContent.data.length, 3, 'the result is the usual one')
  t.equal(got.length, 1, 'one message for the call')
  t.match(got[0], { level: 'info', logger: 'orgscan', data: { tool: 'list_org_fields', records: 3, durationMs: Number, quotaRemaining: Number, quotaWindow: /^(daily|monthly)$/, message: /^list_org_fields answered 3 records in [\d.]+ ms; \d+ of the (daily|monthly) quota left\.$/ } })

  // Through the SDK's server too (params with _meta are not the endpoint's to answer directly).
  await client.callTool({ name: 'get_account_quota', arguments: {}, _meta: { trace: 'x' } })
  await settle()
  t.equal(got.length, 2)
  t.match(got[1], { level: 'info', data: { tool: 'get_account_quota' } }, 'a call the SDK answered logs alike')
  t.notOk('records' in got[1].data, 'a tool that read no records reports none')

  // A rejected argument is a warning, naming the parameter; nothing else of the call.
  await client.callTool({ name: 'list_org_issues', arguments: { orgId, filter: 'eq(priority,' } })
  await settle()
  t.match(got[2], { level: 'warning', data: { tool: 'list_org_issues', error: 'bad_filter', reason: 'filter_parse_error', parameter: 'filter', message: /^list_org_issues was refused: / } })
})

t.test('a server fault is an error message that says nothing of its cause', async (t) => {
  const { client } = await mcpClient(t, url, auth)
  const got = received(client)
  await client.setLoggingLevel('error')
  await client.callTool({ name: 'list_org_fields', arguments: { orgId, limit: 1 } })
  await client.callTool({ name: 'list_org_issues', arguments: { orgId, filter: 'eq(' } })
  await settle()
  t.same(got, [], 'at error, an answer and a refusal send nothing')
  await client.callTool({ name: 'test_failing_probe', arguments: {} })
  await settle()
  t.equal(got.length, 1)
  t.match(got[0], { level: 'error', data: { tool: 'test_failing_probe', error: 'server_error', reason: 'internal_error', message: 'test_failing_probe failed: The server failed to run the tool.' } })
  t.notMatch(JSON.stringify(got), /boom|SELECT|secret/, 'no cause, no SQL')
})

t.test('a rate limit is a warning with the wait', async (t) => {
  const { client } = await mcpClient(t, url, otherAuth)
  const got = received(client)
  await client.setLoggingLevel('warning')
  await withDailyLimit(t, otherOrg.accountId, 0)
  await client.callTool({ name: 'list_orgs', arguments: {} })
  await settle()
  t.equal(got.length, 1)
  t.match(got[0], { level: 'warning', data: { tool: 'list_orgs', error: 'rate_limited', reason: 'rate_limited', retryAfterSeconds: Number } })
})

t.test('without a level the answer is plain JSON; with one, an event stream of the line and the result', async (t) => {
  const raw = await rawSession()
  const params = { name: 'list_org_fields', arguments: { orgId, limit: 2 } }
  const plain = await post(raw, 'tools/call', params)
  t.equal(plain.status, 200)
  t.equal(plain.type, 'application/json', 'a session that set no level: JSON')
  t.equal(JSON.parse(plain.text).result.structuredContent.data.length, 2)

  t.equal((await post(raw, 'logging/setLevel', { level: 'debug' })).type, 'application/json', 'setLevel itself answers JSON')
  const streamed = await post(raw, 'tools/call', params)
  t.equal(streamed.status, 200)
  t.equal(streamed.type, 'text/event-stream', 'with a level: an event stream')
  const [note, answer, ...rest] = events(streamed.text)
  t.same(rest, [], 'two events')
  t.match(note, { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', logger: 'orgscan', data: { tool: 'list_org_fields', records: 2 } } })
  t.notOk('id' in note, 'the message is a notification')
  t.same(answer.result, JSON.parse(plain.text).result, 'then the same result as the JSON answer')

  // Only tool calls stream; at a level their outcome is below, the answer stays JSON.
  t.equal((await post(raw, 'tools/list', {})).type, 'application/json', 'tools/list: JSON')
  await post(raw, 'logging/setLevel', { level: 'error' })
  t.equal((await post(raw, 'tools/call', params)).type, 'application/json', 'at error, a call that answered: JSON')
})

t.test("no session sees another session's calls", async (t) => {
  // Two sessions of one key and one of another account, all at info: each sees exactly its own calls.
  const mine = await mcpClient(t, url, auth)
  const sibling = await mcpClient(t, url, auth)
  const stranger = await mcpClient(t, url, otherAuth)
  const quiet = await mcpClient(t, url, auth)
  const logs = [received(mine.client), received(sibling.client), received(stranger.client), received(quiet.client)]
  for (const c of [mine, sibling, stranger]) await c.client.setLoggingLevel('info')
  const calls = [] as Array<Promise<unknown>>
  for (let i = 0; i < 5; i++) {
    calls.push(mine.client.callTool({ name: 'list_org_fields', arguments: { orgId, limit: 1 } }))
    calls.push(sibling.client.callTool({ name: 'list_org_objects', arguments: { orgId, limit: 1 } }))
    calls.push(stranger.client.callTool({ name: 'list_orgs', arguments: {} }))
    calls.push(quiet.client.callTool({ name: 'get_account_quota', arguments: {} }))
  }
  await Promise.all(calls)
  await settle()
  t.same(logs[0].map((m) => m.data.tool), Array(5).fill('list_org_fields'), 'the first session: its own five calls')
  t.same(logs[1].map((m) => m.data.tool), Array(5).fill('list_org_objects'), 'the second session of the key: its own')
  t.same(logs[2].map((m) => m.data.tool), Array(5).fill('list_orgs'), "the other account's session: its own")
  t.same(logs[3], [], 'a session that set no level: nothing')
})

t.test('2026-07-28: the level is the request\'s own (_meta)', async (t) => {
  const { client } = await mcpClient(t, url, auth, 'modern')
  const got = received(client)
  await client.callTool({ name: 'list_org_fields', arguments: { orgId, limit: 2 } })
  await settle()
  t.same(got, [], 'no level in the request: no message')
  await client.callTool({ name: 'list_org_fields', arguments: { orgId, limit: 2 }, _meta: { [LOG_LEVEL_META_KEY]: 'info' } })
  await settle()
  t.equal(got.length, 1)
  t.match(got[0], { level: 'info', logger: 'orgscan', data: { tool: 'list_org_fields', records: 2 } })
  await client.callTool({ name: 'list_org_fields', arguments: { orgId, limit: 2 }, _meta: { [LOG_LEVEL_META_KEY]: 'error' } })
  await settle()
  t.equal(got.length, 1, 'at error, an answer sends nothing')
  await t.rejects(client.setLoggingLevel('info'), 'the revision has no logging/setLevel')
})
