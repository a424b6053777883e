/**
 * Errors that teach, on MCP, as the official client sees them: an unknown filter or sort field names the nearest one
 * and where it is (the offset of the name, in structuredContent and the text), a limit above 200 says to page, an org
 * that is not found is echoed with where orgs are listed, the text of a rejected filter names the lookup of the valid
 * values and the grammar, and the grammar is the resource `service://rql`, listed and readable. The server's
 * instructions carry the filter essentials once.
 */
import { t } from '../helpers/file-test.ts'
import { OPERATORS } from '../../runtime/core/rql/lexical.ts'
import { startTestService } from '../helpers/service.ts'
import { mcpClient } from '../helpers/mcp.ts'

type Result = { isError?: boolean; structuredContent?: any; content: Array<{ type: string; text: string }> }

const ts = await startTestService(t, { seedScale: 0.02 })
const org = ts.seed.orgs[0]
const orgId = org.salesforceId
const { client } = await mcpClient(t, ts.svc.mcpUrl, await ts.keyHeader(org.accountId))
const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as Result

t.test('an unknown filter field: did you mean, at the offset of its name', async (t) => {
  const filter = 'and(eq(isCustom,true), eq(apiname,Name))'
  const r = await call('list_org_fields', { orgId, filter })
  t.equal(r.isError, true)
  const at = filter.indexOf('apiname')
  t.match(r.structuredContent, { error: 'bad_filter', reason: 'unknown_filter_field', parameter: 'filter', field: 'apiname', offset: at })
  t.match(r.structuredContent.message, /did you mean "apiName"\?/)
  t.equal(at, 26)
  t.match(r.content[0].text, /Unknown filter field "apiname"; did you mean "apiName"\? At offset 26 of filter\./, 'the text says it and where')
  t.match(r.content[0].text, /service:\/\/rql/, 'and names the grammar')
  const far = await call('list_org_fields', { orgId, filter: 'eq(colour,red)' })
  t.notMatch(far.structuredContent.message, /did you mean/, 'no guess when no name is close')
})

t.test('an unknown sort field: did you mean, at the offset of its name', async (t) => {
  const r = await call('list_org_fields', { orgId, sort: 'apiName,-percentpopulated' })
  t.match(r.structuredContent, { reason: 'unknown_sort_field', parameter: 'sort', field: 'percentpopulated', offset: 9 })
  t.match(r.content[0].text, /did you mean "percentPopulated"\? At offset 9 of sort\./)
})

t.test('an unknown argument: did you mean', async (t) => {
  const r = await call('list_org_fields', { orgId, fitler: 'eq(isCustom,true)' })
  t.match(r.structuredContent, { reason: 'unknown_parameter', parameter: 'fitler' })
  t.match(r.content[0].text, /did you mean "filter"\?/)
})

t.test('a limit above 200 is refused (bad_filter) with how to page', async (t) => {
  const r = await call('list_org_fields', { orgId, limit: 201 })
  t.match(r.structuredContent, { error: 'bad_filter', reason: 'invalid_parameter', parameter: 'limit' })
  t.match(r.content[0].text, /limit must be at most 200; to read more records, page: call again with offset increased by limit while meta\.hasMore is true\./)
})

t.test("an org that is not found is echoed, with where the caller's orgs are listed", async (t) => {
  for (const id of ['00D000000000000EAA', '00D000000000000']) {
    const r = await call('list_org_fields', { orgId: id })
    t.match(r.structuredContent, { error: 'not_found', parameter: 'orgId' }, id)
    t.equal(r.content[0].text, `Org ${id} not found; list_orgs lists the orgs you can see.`, `${id}: the text`)
  }
  const get = await call('get_org', { orgId: '00D000000000000EAA' })
  t.equal(get.structuredContent.message, 'Org 00D000000000000EAA not found; list_orgs lists the orgs you can see.', 'get_org too')
  // A checksum that does not match its first 15 characters: said as such, with the checksum they have.
  for (const id of [orgId.slice(0, 15) + 'ZZZ', '00D000000000000AAA']) {
    const r = await call('list_org_fields', { orgId: id })
    t.match(r.structuredContent, { error: 'not_found', parameter: 'orgId' }, id)
    const sum = id === '00D000000000000AAA' ? 'EAA' : orgId.slice(15)
    t.equal(r.content[0].text, `Org ${id} not found: the last 3 characters of an 18-character org id are the checksum of its first 15, here ${sum}, not ${id.slice(15)}; list_orgs lists the orgs you can see.`, `${id}: the text`)
  }
})

t.test('an org id that is malformed says what is wrong with it', async (t) => {
  for (const [id, problem] of [
    ['00D000000000000-AA', "contains '-': an org id has only letters and digits"],
    ['00D00000000000', 'has 14 characters: an org id has 15, or 18 with its checksum'],
  ]) {
    const r = await call('list_org_fields', { orgId: id })
    t.match(r.structuredContent, { error: 'bad_filter', reason: 'invalid_id', parameter: 'orgId' }, id)
    t.match(r.content[0].text, `orgId ${problem}.`, `${id}: the text`)
  }
})

t.test('the text of a rejected value names the lookup of the valid values', async (t) => {
  const r = await call('list_org_issues', { orgId, filter: 'eq(category,hygiene)' })
  t.same(r.structuredContent.links, ['resource://filter-values/issues/category', 'service://issue-categories'])
  t.match(r.content[0].text, /Valid values: resource:\/\/filter-values\/issues\/category, service:\/\/issue-categories\./)
  t.match(r.content[0].text, /At offset 12 of filter\./)
})

t.test('service://rql: listed, readable, the whole grammar', async (t) => {
  const { resources } = await client.listResources()
  t.match(resources.find((x) => x.uri === 'service://rql'), { name: 'rql', mimeType: 'text/markdown' }, 'listed')
  const read = await client.readResource({ uri: 'service://rql' })
  const doc = read.contents[0] as { mimeType?: string; text: string }
  t.equal(doc.mimeType, 'text/markdown')
  for (const op of OPERATORS) t.ok(doc.text.includes(`\`${op}(`), `the grammar shows ${op}()`)
  t.match(doc.text, /Quote any value with spaces,\s+commas/)
  t.match(doc.text, /2026-01-31T10:00:00Z/)
})

t.test('the instructions carry the filter essentials once, and every filter argument points at the grammar', async (t) => {
  const instructions = client.getInstructions() ?? ''
  for (const op of OPERATORS) t.match(instructions, new RegExp(`\\b${op}\\b`), `instructions name ${op}`)
  t.match(instructions, /service:\/\/rql/)
  const { tools } = await client.listTools()
  for (const tool of tools) {
    const filter = (tool.inputSchema.properties as Record<string, { description?: string }> | undefined)?.filter
    if (filter) t.match(filter.description, /^RQL \(service:\/\/rql\) on /, `${tool.name}: the filter points at the grammar`)
  }
})
