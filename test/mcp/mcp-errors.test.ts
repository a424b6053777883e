/**
 * Failed tool calls are tool results with `isError: true` and `structuredContent.error` one of the closed codes:
 * bad_filter (with the position or classification, resource:// links and an elicitation), rate_limited
 * (retryAfterSeconds, limit, the wait in the text), not_found, access_denied (naming a missing scope), server_error
 * (retryable). Clients match on the code.
 */
import type { Test } from 'tap'
import { t } from '../helpers/file-test.ts'
import { updateAccount } from '../../runtime/platform/admin.ts'
import { startTestService } from '../helpers/service.ts'
import { failingProbe, mcpClient, writeProbe } from '../helpers/mcp.ts'
import { testTool } from '../helpers/test-tools.ts'

const ts = await startTestService(t, { mcpExtraTools: [writeProbe, failingProbe] })
const org = ts.seed.orgs.find((o) => o.large)!
const auth = await ts.keyHeader(org.accountId)
const orgId = org.salesforceId

/** The account's daily limit set to 0 for this test (restored when it ends). */
async function spendQuota(t: Test): Promise<void> {
  const setLimit = async (dailyLimit: number) => {
    await updateAccount(ts.svc.db.sql, org.accountId, { dailyLimit })
    ts.svc.ctx.quota.invalidate?.(org.accountId)
  }
  await setLimit(0)
  t.teardown(() => setLimit(10_000))
}

type Result = { isError?: boolean; structuredContent?: any; content: Array<{ type: string; text: string }> }

t.test('bad_filter: position, classification, links to the valid values, an elicitation', async (t) => {
  const { client } = await mcpClient(t, ts.svc.mcpUrl, auth)
  const parse = (await client.callTool({ name: 'list_org_issues', arguments: { orgId, filter: 'eq(priority,' } })) as Result
  t.equal(parse.isError, true)
  t.match(parse.structuredContent, { error: 'bad_filter', reason: 'filter_parse_error', parameter: 'filter', offset: Number })
  t.match(parse.structuredContent.elicitation, { message: String, requestedSchema: { type: 'object', properties: { filter: { type: 'string' } } } })

  const value = (await client.callTool({ name: 'list_org_issues', arguments: { orgId, filter: 'eq(category,hygiene)' } })) as Result
  t.match(value.structuredContent, { error: 'bad_filter', reason: 'invalid_filter_value', field: 'category', offset: 12 })
  t.same(value.structuredContent.links, ['resource://filter-values/issues/category', 'service://issue-categories'])
  for (const uri of value.structuredContent.links as string[]) {
    const doc = JSON.parse(((await client.readResource({ uri })).contents[0] as { text: string }).text)
    t.ok(doc.values.some((v: { value: string; title?: string }) => v.value === 'security' && v.title === 'Security'), `${uri} lists the valid values with titles`)
  }

  const field = (await client.callTool({ name: 'list_org_fields', arguments: { orgId, filter: 'eq(colour,red)' } })) as Result
  t.match(field.structuredContent, { error: 'bad_filter', reason: 'unknown_filter_field', allowed: Array })
  const limit = (await client.callTool({ name: 'list_org_fields', arguments: { orgId, limit: 201 } })) as Result
  t.match(limit.structuredContent, { error: 'bad_filter', reason: 'invalid_parameter', parameter: 'limit' }, 'a limit above 200 is rejected, not clamped')
  const sort = (await client.callTool({ name: 'list_org_fields', arguments: { orgId, sort: 'colour' } })) as Result
  t.match(sort.structuredContent, { error: 'bad_filter', reason: 'unknown_sort_field', parameter: 'sort' })
  const arg = (await client.callTool({ name: 'list_org_fields', arguments: { orgId, colour: 'red' } })) as Result
  t.match(arg.structuredContent, { error: 'bad_filter', reason: 'unknown_parameter', parameter: 'colour' })
  const typed = (await client.callTool({ name: 'list_org_fields', arguments: { orgId, limit: '5' } })) as Result
  t.match(typed.structuredContent, { error: 'bad_filter', reason: 'invalid_parameter', parameter: 'limit' }, 'a string where an integer belongs')
})

t.test('not_found and access_denied', async (t) => {
  const { client } = await mcpClient(t, ts.svc.mcpUrl, auth)
  const org404 = (await client.callTool({ name: 'list_org_fields', arguments: { orgId: '00D000000000000AAA' } })) as Result
  t.match(org404.structuredContent, { error: 'not_found' })
  const rec404 = (await client.callTool({ name: 'get_org_field', arguments: { orgId, fieldId: 999999999 } })) as Result
  t.match(rec404.structuredContent, { error: 'not_found', parameter: 'fieldId' })
  const unsafe = (await client.callTool({ name: 'get_org_field', arguments: { orgId, fieldId: 2 ** 60 } })) as Result
  t.match(unsafe.structuredContent, { parameter: 'fieldId', message: /beyond 2\^53 as a JSON number.*send it as a string of digits/ }, 'a number that lost its digits says so')
  const long = (await client.callTool({ name: 'get_org_field', arguments: { orgId, fieldId: '1234567890123456789' } })) as Result
  t.match(long.structuredContent, { parameter: 'fieldId', message: /at most 18 digits/ })

  const user = ts.seed.users[0]
  const notGranted = ts.seed.orgs.find((o) => o.accountId === user.accountId && !user.orgs.includes(o.salesforceId))!
  t.ok(notGranted, 'the seed has an org of the user account that the user was not granted')
  const scoped = await mcpClient(t, ts.svc.mcpUrl, await ts.keyHeader(user.accountId, user.id))
  const denied = (await scoped.client.callTool({ name: 'list_org_fields', arguments: { orgId: notGranted.salesforceId } })) as Result
  t.match(denied.structuredContent, { error: 'access_denied' }, "an org of the account the user was not granted")
  const granted = (await scoped.client.callTool({ name: 'list_org_fields', arguments: { orgId: user.orgs[0], limit: 1 } })) as Result
  t.notOk(granted.isError, 'a granted org is readable')

  const scope = (await client.callTool({ name: 'test_write_probe', arguments: {} })) as Result
  t.match(scope.structuredContent, { error: 'access_denied', scope: 'mcp:write' }, 'an API key reads; a write tool names the missing scope')
  t.match(scope.content[0].text, /mcp:write/)
})

t.test('server_error is retryable and tells nothing of the failure', async (t) => {
  const { client } = await mcpClient(t, ts.svc.mcpUrl, auth)
  const r = (await client.callTool({ name: 'test_failing_probe', arguments: {} })) as Result
  t.same(r.structuredContent, { error: 'server_error', message: 'The server failed to run the tool.', reason: 'internal_error', retryable: true })
  t.notMatch(JSON.stringify(r), /SELECT|boom/, 'no internals')
})

t.test('rate_limited: retryAfterSeconds, limit, and the wait in the text', async (t) => {
  await spendQuota(t)
  const { client } = await mcpClient(t, ts.svc.mcpUrl, auth)
  const r = (await client.callTool({ name: 'list_org_objects', arguments: { orgId } })) as Result
  t.equal(r.isError, true)
  t.match(r.structuredContent, { error: 'rate_limited', retryAfterSeconds: Number, limit: 0, window: 'daily' })
  t.ok(r.structuredContent.retryAfterSeconds > 0 && r.structuredContent.retryAfterSeconds <= 86_400)
  t.match(r.content[0].text, new RegExp(`${r.structuredContent.retryAfterSeconds} seconds`))
  const quota = (await client.callTool({ name: 'get_account_quota', arguments: {} })) as Result
  t.notOk(quota.isError, 'reading the quota still works when it is exhausted')
})


t.test("every error result conforms to its tool's output schema: a v1 SDK client, which checks, still sees the codes", async (t) => {
  // The v1 TypeScript SDK client checks structuredContent against the output schema it cached from tools/list, error
  // results included, and throws -32602 in place of a result that does not conform (the v2 client skips errors).
  // The v1 SDK is a test tool (test/helpers/test-tools.ts).
  const v1 = await testTool<typeof import('@modelcontextprotocol/sdk/client/index.js')>(t, '@modelcontextprotocol/sdk/client/index.js')
  const v1Http = v1 && (await testTool<typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js')>(t, '@modelcontextprotocol/sdk/client/streamableHttp.js'))
  if (!v1 || !v1Http) return
  const { Client: V1Client } = v1
  const { StreamableHTTPClientTransport: V1Transport } = v1Http
  const client = new V1Client({ name: 'orgscan-tests-v1', version: '1.0.0' })
  await client.connect(new V1Transport(new URL(ts.svc.mcpUrl), { requestInit: { headers: { authorization: auth } } }))
  t.teardown(() => client.close())
  const { tools } = await client.listTools()
  const served = tools.filter((x) => !x.name.startsWith('test_'))
  t.ok(served.length > 40 && served.every((x) => x.outputSchema), 'the schemas are cached, so every result below was checked')
  const calls: Array<[string, Record<string, unknown>, string]> = [
    ['list_org_issues', { orgId, filter: 'eq(category,hygiene)' }, 'bad_filter'],
    ['list_org_fields', { orgId, filter: 'eq(priority,' }, 'bad_filter'],
    ['list_org_fields', { orgId, limit: 201 }, 'bad_filter'],
    ['get_org_field', { orgId, fieldId: 999999999 }, 'not_found'],
    ['get_org', { orgId: '00D000000000000AAA' }, 'not_found'],
    ['get_org_cloud_usage', { orgId: '00D000000000000AAA' }, 'not_found'],
    ['list_orgs', { colour: 'red' }, 'bad_filter'],
    ['get_account_quota', { colour: 'red' }, 'bad_filter'],
    ['server_info', { colour: 'red' }, 'bad_filter'],
  ]
  for (const [name, args, code] of calls) {
    const r = (await client.callTool({ name, arguments: args })) as Result
    t.equal(r.isError, true, `${name} failed`)
    t.equal(r.structuredContent?.error, code, `${name}: the code reaches the client`)
  }
  await spendQuota(t)
  const limited = (await client.callTool({ name: 'list_org_objects', arguments: { orgId } })) as Result
  t.match(limited.structuredContent, { error: 'rate_limited', retryAfterSeconds: Number, limit: 0, window: 'daily' }, 'rate_limited reaches the client')
  const ok = (await client.callTool({ name: 'get_account_quota', arguments: {} })) as Result
  t.match(ok.structuredContent, { data: { rateLimit: { daily: { limit: 0 } } } }, 'a success still conforms')
})

t.test('rate_limited for fair share (concurrency_limited): the account\'s concurrency as limit, and no quota window', async (t) => {
  const own = await startTestService(t, { seedScale: 0.05, mcpExtraTools: [writeProbe, failingProbe], config: { fairShare: { perAccount: 1, queueDepth: 0, maxWaitMs: 0 }, cache: { maxBytes: 0, orgStateMs: 0 } } })
  const o = own.seed.orgs[0]
  const { client } = await mcpClient(t, own.svc.mcpUrl, await own.keyHeader(o.accountId))
  let shed: Result | undefined
  for (let round = 0; round < 20 && !shed; round++) {
    const results = (await Promise.all(Array.from({ length: 8 }, (_, i) => client.callTool({ name: 'list_org_fields', arguments: { orgId: o.salesforceId, limit: 200, offset: i } })))) as Result[]
    shed = results.find((r) => r.isError)
  }
  t.ok(shed, 'eight calls at once, one may run: some are shed')
  t.same(shed!.structuredContent, { error: 'rate_limited', message: shed!.structuredContent.message, reason: 'concurrency_limited', retryAfterSeconds: 1, limit: 1 }, 'limit is the concurrency; no window, since no quota window is spent')
})
