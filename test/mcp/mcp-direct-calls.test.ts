/**
 * A plain 2025-era `tools/call` is answered by the endpoint itself (runtime/surfaces/mcp/endpoint.ts `directToolCall`), not by
 * the SDK's `Server`: its answers must be the SDK's, byte for byte. Each call below is sent twice in one session — as
 * a client sends it, and with `params._meta: {}`, which only the SDK takes and which changes nothing in an answer —
 * and the two answers are compared: status, content type and body bytes. The calls cover every tool of the catalog
 * (with the arguments it needs, with none, with wrong ones, with a page), error results of each kind, and the free
 * tools. Then the messages the direct way must leave to the SDK, and the one difference by design: the SDK checks a
 * result against its schema, the direct way trusts the catalog's (which the comparisons here show to pass it).
 */
import { t } from '../helpers/file-test.ts'
import type { McpTool } from '../../runtime/surfaces/mcp/resource-tools.ts'
import { directToolCall, plainLegacyCall } from '../../runtime/surfaces/mcp/endpoint.ts'
import { startTestService } from '../helpers/service.ts'
import { failingProbe, initializeBody, rpc, writeProbe } from '../helpers/mcp.ts'

const probes: McpTool[] = [
  writeProbe,
  failingProbe,
  {
    // A result the SDK's schema refuses (a text item without text): tells which way a call was answered.
    definition: { name: 'test_malformed_probe', title: 'Malformed probe', description: 'Returns a malformed result; registered only by tests.', inputSchema: { type: 'object' } },
    scope: 'mcp:read',
    run: async () => ({ content: [{ type: 'text' }] }) as never,
  },
]

const ts = await startTestService(t, { mcpExtraTools: probes })
const org = ts.seed.orgs.find((o) => o.large)!
const orgId = org.salesforceId
const auth = { authorization: await ts.keyHeader(org.accountId) }
const init = await rpc(ts.svc.mcpUrl, initializeBody(), auth)
const session = { ...auth, 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-11-25' }
let nextId = 10

type Answer = { status: number; type: string | null; text: string; body: any }
async function call(params: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<Answer> {
  const r = await rpc(ts.svc.mcpUrl, { jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { ...params, ...extra } }, session)
  return { status: r.status, type: r.headers.get('content-type'), text: r.text, body: r.body }
}

/** The same call the direct way and through the SDK, with the ids made equal. */
async function both(params: Record<string, unknown>) {
  const direct = await call(params)
  const sdk = await call(params, { _meta: {} })
  const sameId = (a: Answer) => a.text.replace(/"id":\d+}$/, '"id":0}')
  return { direct, sdk, same: direct.status === sdk.status && direct.type === sdk.type && sameId(direct) === sameId(sdk) }
}

t.test('every tool answers the same bytes the direct way and through the SDK', async (t) => {
  const list = await rpc(ts.svc.mcpUrl, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, session)
  const tools = list.body.result.tools as Array<{ name: string; inputSchema: { required?: string[]; properties?: Record<string, unknown> } }>
  t.ok(tools.length >= 40, `the catalog (${tools.length} tools)`)
  const firstIds = new Map<string, unknown>()
  const calls: Array<Record<string, unknown>> = []
  for (const tool of tools) {
    if (tool.name === 'test_malformed_probe') continue // the one difference by design: the last test
    const required = tool.inputSchema.required ?? []
    const props = Object.keys(tool.inputSchema.properties ?? {})
    const needed = Object.fromEntries(required.map((a) => [a, a === 'orgId' ? orgId : '1']))
    calls.push({ name: tool.name, arguments: needed })
    calls.push({ name: tool.name })
    calls.push({ name: tool.name, arguments: { ...needed, unknownArgument: true } })
    if (props.includes('limit')) calls.push({ name: tool.name, arguments: { ...needed, limit: 3, offset: 1 } })
  }
  // Real records by id, a filter, a sort, a sparse fieldset, and the errors of each kind.
  const fields = await call({ name: 'list_org_fields', arguments: { orgId, limit: 2 } })
  for (const r of fields.body.result.structuredContent.data) firstIds.set('fieldId', r.id)
  calls.push(
    { name: 'get_org_field', arguments: { orgId, fieldId: firstIds.get('fieldId') } },
    { name: 'list_org_fields', arguments: { orgId, limit: 5, filter: 'and(eq(isCustom,true),ilike(label,*a*))', sort: '-label' } },
    { name: 'list_org_issues', arguments: { orgId, limit: 5, fields: ['title', 'priority'] } },
    { name: 'list_org_issues', arguments: { orgId, filter: 'eq(category,hygiene)' } },
    { name: 'list_org_fields', arguments: { orgId, filter: 'eq(priority,' } },
    { name: 'list_org_fields', arguments: { orgId, limit: 201 } },
    { name: 'list_org_fields', arguments: { orgId: '00D000000000000AAA' } },
    { name: 'list_org_fields', arguments: { orgId: 42 } },
    { name: 'list_orgs', arguments: {} },
    { name: 'get_account_quota', arguments: {} },
    { name: 'server_info', arguments: {} },
    { name: 'test_write_probe', arguments: {} },
    { name: 'test_failing_probe', arguments: {} },
  )
  let compared = 0
  for (const params of calls) {
    const r = await both(params)
    if (!r.same) t.fail(`${JSON.stringify(params)}: ${r.direct.status} ${r.direct.text.slice(0, 300)} ≠ ${r.sdk.status} ${r.sdk.text.slice(0, 300)}`)
    else compared++
  }
  t.equal(compared, calls.length, `${calls.length} calls, the same bytes both ways`)
  // What the comparison covered: records, error results of each kind, the free tools.
  const texts = await Promise.all(calls.slice(-13).map((p) => call(p).then((a) => a.body.result)))
  t.equal(texts[0].structuredContent.data.id, firstIds.get('fieldId'), 'a record by id')
  t.equal(texts[1].structuredContent.data.length > 0, true, 'a filtered, sorted page')
  t.same(Object.keys(texts[2].structuredContent.data[0]).sort(), ['issueKey', 'priority', 'title'], 'a sparse fieldset: the properties asked for, and the record key')
  t.match(texts[3].structuredContent, { error: 'bad_filter', reason: 'invalid_filter_value' })
  t.match(texts[4].structuredContent, { error: 'bad_filter', reason: 'filter_parse_error' })
  t.match(texts[5].structuredContent, { error: 'bad_filter', parameter: 'limit' })
  t.match(texts[6].structuredContent, { error: 'not_found' })
  t.equal(texts[7].isError, true, 'a wrong-typed argument')
  t.type(texts[9].structuredContent.data.rateLimit.daily.remaining, 'number', 'get_account_quota')
  t.match(texts[11].structuredContent, { error: 'access_denied', scope: 'mcp:write' })
  t.match(texts[12].structuredContent, { error: 'server_error' })
})

t.test('the direct way is taken for what a client sends, and only for that', async (t) => {
  // The malformed probe tells the two apart: the SDK refuses its result, the direct way passes it on.
  const plain = await call({ name: 'test_malformed_probe', arguments: {} })
  t.equal(plain.status, 200)
  t.same(plain.body.result, { content: [{ type: 'text' }] }, 'a plain call: answered directly (the result is not checked)')
  const sdk = await call({ name: 'test_malformed_probe', arguments: {} }, { _meta: {} })
  t.match(sdk.body.error, { code: -32602, message: /Invalid tools\/call result/ }, 'with _meta: the SDK answered (and checked the result)')

  const tools = new Map(probes.map((p) => [p.definition.name, p]))
  const name = 'test_write_probe'
  const ok = (body: unknown) => {
    const plain = plainLegacyCall(body, '2025-11-25')
    return plain !== undefined && directToolCall(plain, tools) !== undefined
  }
  t.ok(ok({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name } }), 'no arguments')
  t.ok(ok({ jsonrpc: '2.0', id: 'a', method: 'tools/call', params: { name, arguments: { x: 1 } } }), 'a string id, arguments')
  const sdkOnly: Array<[string, unknown]> = [
    ['another method', { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { name } }],
    ['an unknown tool (the SDK answers invalid params)', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'no_such_tool' } }],
    ['_meta', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, _meta: {} } }],
    ['a task', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, task: { ttl: 1000 } } }],
    ['arguments that are not an object', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: [1] } }],
    ['null arguments', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: null } }],
    ['a name that is not a string', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 1 } }],
    ['no params', { jsonrpc: '2.0', id: 1, method: 'tools/call' }],
    ['a notification (no id)', { jsonrpc: '2.0', method: 'tools/call', params: { name } }],
    ['a fractional id', { jsonrpc: '2.0', id: 1.5, method: 'tools/call', params: { name } }],
    ['a null id', { jsonrpc: '2.0', id: null, method: 'tools/call', params: { name } }],
    ['another JSON-RPC version', { jsonrpc: '1.0', id: 1, method: 'tools/call', params: { name } }],
    ['an extra member', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name }, extra: true }],
    ['an inherited-looking key', JSON.parse('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_write_probe","__proto__":{}}}')],
  ]
  for (const [why, body] of sdkOnly) t.notOk(ok(body), `left to the SDK: ${why}`)

  // Over the wire, the SDK still answers what the direct way leaves to it.
  const unknown = await call({ name: 'no_such_tool', arguments: {} })
  t.match(unknown.body.error, { code: -32602, message: /Unknown tool: no_such_tool/ })
  const badArgs = await call({ name: 'list_orgs', arguments: [1] })
  t.match(badArgs.body.error, { code: -32602 })
})
