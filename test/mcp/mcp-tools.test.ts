/**
 * MCP tools, generated from the registry and driven by the official SDK client (which also validates every result
 * against the tool's output schema): for every resource, MCP returns exactly what REST returns for the same query,
 * in both protocol eras; every tool is annotated read-only; tool calls cost one quota unit, listings nothing.
 */
import { t } from '../helpers/file-test.ts'
import { registry } from '../../resources/index.ts'
import { compileRegistry, type CompiledResource } from '../../runtime/core/registry.ts'
import { exampleFilter } from '../../runtime/core/examples.ts'
import { formatQuery } from '../../runtime/core/query-string.ts'
import { startTestService } from '../helpers/service.ts'
import { mcpClient, type Era } from '../helpers/mcp.ts'

const ts = await startTestService(t)
const org = ts.seed.orgs.find((o) => o.large)!
const auth = await ts.keyHeader(org.accountId)
const resources = compileRegistry(registry)
const base = (c: CompiledResource) => (c.decl.scope === 'org' ? `/v1/orgs/${org.salesforceId}/` : '/v1/')

/** Arguments and the equivalent REST query string, in the order the tool builds its links, written as it writes them. */
function listCall(c: CompiledResource, extra: Record<string, string | number>): { args: Record<string, unknown>; qs: string } {
  const args: Record<string, unknown> = c.decl.scope === 'org' ? { orgId: org.salesforceId } : {}
  for (const [k, v] of Object.entries(extra)) args[k] = v
  return { args, qs: formatQuery(Object.entries(extra).map(([k, v]) => [k, [String(v)]])) }
}

async function rest(path: string): Promise<unknown> {
  const r = await ts.get(path, auth)
  t.equal(r.status, 200, `REST ${path}`)
  return r.body
}

for (const era of ['legacy', 'modern'] as Era[]) {
  t.test(`every resource: MCP returns what REST returns (${era} era)`, async (t) => {
    const { client } = await mcpClient(t, ts.svc.mcpUrl, auth, era)
    const parent = resources.find((r) => r.name === 'objects')!
    const objectId = ((await rest(`${base(parent)}objects?limit=1`)) as { data: Array<{ id: number }> }).data[0].id
    for (const c of resources) {
      const d = c.decl
      const path = (d.path.includes('{') ? d.path.replace(/\{[A-Za-z]+\}/, String(objectId)) : d.path)
      const parentArgs = d.parent ? { [d.parent.param]: objectId } : {}
      if (d.operations.list) {
        const variants: Array<Record<string, string | number>> = [d.unpaged ? {} : { limit: 5 }]
        const ex = exampleFilter(c)
        if (ex && d.sortable?.length) variants.push({ ...(d.unpaged ? {} : { limit: 7, offset: 1 }), filter: ex, sort: `-${d.sortable[0]}` })
        for (const v of variants) {
          const { args, qs } = listCall(c, v)
          const r = await client.callTool({ name: d.mcp.list!, arguments: { ...args, ...parentArgs } })
          t.notOk(r.isError, `${d.mcp.list} ${JSON.stringify(v)}`)
          t.same(r.structuredContent, await rest(`${base(c)}${path}${qs ? `?${qs}` : ''}`), `${d.mcp.list} ${JSON.stringify(v)} = REST`)
          t.match((r.content as Array<{ text: string }>)[0].text, /structuredContent\.data/, 'the text points at the payload')
          t.ok((r.content as Array<{ text: string }>)[0].text.length < 300, 'and is not the payload')
        }
      }
      if (d.operations.get) {
        let idArgs: Record<string, unknown> = {}
        let restPath = `${base(c)}${path}`
        if (d.kind !== 'singleton' && d.id) {
          const listing = resources.find((x) => x.decl.operations.list && !x.decl.parent && (x.decl.path === d.path || x.decl.table === d.table) && x.fields.has(d.id!.field))!
          const rows = ((await rest(`${base(listing)}${listing.decl.path}${listing.decl.unpaged ? '' : '?limit=1'}`)) as { data: Array<Record<string, unknown>> }).data
          t.ok(rows.length > 0, `${listing.name} has a record to get`)
          const id = rows[0][d.id.field] as string | number
          idArgs = { [d.id.param]: id }
          const seg = d.id.encoding === 'base64url' ? Buffer.from(String(id)).toString('base64url') : encodeURIComponent(String(id))
          restPath = d.scope === 'org' ? `${restPath}/${seg}` : `/v1/${d.path}/${seg}`
        }
        const args = { ...(d.scope === 'org' || d.id?.param === 'orgId' ? { orgId: org.salesforceId } : {}), ...idArgs }
        const r = await client.callTool({ name: d.mcp.get!, arguments: args })
        t.notOk(r.isError, d.mcp.get!)
        t.same(r.structuredContent, await rest(restPath), `${d.mcp.get} = REST ${restPath}`)
      }
    }
  })
}

t.test("a filtered, sorted page links to the next with the same bytes on MCP as on REST, RQL's punctuation literal", async (t) => {
  const { client } = await mcpClient(t, ts.svc.mcpUrl, auth)
  const filter = "and(eq(type,Picklist),ne(label,'Account Name'))"
  const sort = '-percentPopulated,apiName'
  const path = `/v1/orgs/${org.salesforceId}/fields`
  // Written by hand, as a curl user writes it: RQL's ( ) , and the sort's comma as they are, the quote and space encoded.
  const query = "limit=3&filter=and(eq(type,Picklist),ne(label,%27Account%20Name%27))&sort=-percentPopulated,apiName"
  const r = await ts.get(`${path}?${query}`, auth)
  t.equal(r.status, 200)
  t.ok(r.body.meta.hasMore, 'more than a page matches')
  t.equal(r.body.links.next, `${path}?${query}&offset=3`, 'REST keeps the query as sent')
  const call = await client.callTool({ name: 'list_org_fields', arguments: { orgId: org.salesforceId, limit: 3, filter, sort } })
  const links = (call.structuredContent as { links: Record<string, string> }).links
  t.equal(links.next, r.body.links.next, 'the MCP answer links to the same bytes')
  t.equal(links.self, r.body.links.self)
  const followed = await ts.get(links.next, auth)
  t.equal(followed.status, 200, 'the link can be followed over REST')
  // A later page, its arguments in the order the tool's arguments are declared (limit, offset, filter, sort): the
  // whole answer, links to both neighbours included, is REST's for the same query in the same order.
  const second = await client.callTool({ name: 'list_org_fields', arguments: { orgId: org.salesforceId, limit: 3, offset: 3, filter, sort } })
  t.same((second.structuredContent as { data: unknown }).data, followed.body.data, "the next call's records are the link's")
  const restSecond = await ts.get(`${path}?limit=3&offset=3&${query.slice('limit=3&'.length)}`, auth)
  t.equal(JSON.stringify(second.structuredContent), JSON.stringify(restSecond.body), 'the same body, byte for byte')
  t.match(restSecond.body.links.prev, /\?limit=3&offset=0&filter=and\(eq\(type,Picklist\),/, 'prev too, literal')
})

t.test('every tool: title, description, read-only annotations, 2020-12 schemas', async (t) => {
  const { client } = await mcpClient(t, ts.svc.mcpUrl, auth)
  const { tools } = await client.listTools()
  t.ok(tools.length >= 43, 'every list and get tool, the quota and server_info')
  for (const tool of tools) {
    t.ok(Boolean(tool.title) && (tool.description?.length ?? 0) > 40, `${tool.name}: title and a description an assistant can act on`)
    // The display title is the tool's own title, which the specification prefers to the annotation's.
    t.same(tool.annotations, { readOnlyHint: true, openWorldHint: false }, `${tool.name}: annotations (read-only: the destructive and idempotent hints mean nothing then)`)
    // Without $schema, MCP reads a schema as 2020-12 (test/mcp/mcp-tool-size.test.ts compiles each as 2020-12).
    t.equal(tool.inputSchema.$schema, undefined, `${tool.name}: input schema in MCP's default dialect, 2020-12`)
    t.equal(tool.outputSchema?.type, 'object', `${tool.name}: an output schema`)
    if (tool.name.startsWith('list_org_')) {
      t.match(tool.description, /orgId from list_orgs/, `${tool.name}: says where orgId comes from`)
      t.match(tool.description, /Paged: offset\+limit while meta\.hasMore|Every record in one call/, `${tool.name}: says how to page`)
      t.same((tool.inputSchema.properties as Record<string, { maximum?: number }>).limit?.maximum ?? 200, 200, `${tool.name}: limit at most 200`)
    }
  }
  t.notOk(tools.some((x) => x.name === 'get_org_issues'), 'the removed alias does not exist')
})

t.test('one quota unit per tool call; listings, prompts, resources, the quota and server_info are free', async (t) => {
  const { client } = await mcpClient(t, ts.svc.mcpUrl, auth)
  const remaining = async () => ((await client.callTool({ name: 'get_account_quota', arguments: {} })).structuredContent as { data: { rateLimit: { daily: { remaining: number } } } }).data.rateLimit.daily.remaining
  const before = await remaining()
  await client.listTools()
  await client.listPrompts()
  await client.listResources()
  await client.readResource({ uri: 'service://issue-categories' })
  await client.getPrompt({ name: 'security_risk_audit', arguments: { orgId: org.salesforceId } })
  await client.callTool({ name: 'server_info', arguments: {} })
  t.equal(await remaining(), before, 'nothing was charged')
  for (let i = 0; i < 3; i++) await client.callTool({ name: 'list_org_objects', arguments: { orgId: org.salesforceId, limit: 1 } })
  await client.callTool({ name: 'list_org_objects', arguments: { orgId: org.salesforceId, filter: 'eq(nope,1)' } })
  const wrongType = (await client.callTool({ name: 'list_org_objects', arguments: { orgId: org.salesforceId, limit: 'ten' } })) as { isError?: boolean; structuredContent: { error: string; parameter: string } }
  t.ok(wrongType.isError)
  t.match(wrongType.structuredContent, { error: 'bad_filter', parameter: 'limit' }, 'an argument of the wrong type names the argument')
  t.equal(await remaining(), before - 5, 'three reads, one rejected filter and one rejected argument: five units, like REST')
  const restQuota = await ts.get('/v1/account/quota', auth)
  t.equal(restQuota.body.data.rateLimit.daily.remaining, before - 5, 'REST sees the same account quota')
})
