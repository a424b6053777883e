/**
 * Sparse fieldsets, list totals and grouped counts, generated from the registry, over REST and MCP alike: every list and get answers
 * only the fields asked for (and the record's id), an unknown one is a 400 listing the allowed names; every grouped
 * count's groups add up to the records its filter matches (counted by paging through the list), REST and MCP answer
 * the same body, and an unknown field to group by is refused with the allowed ones. Every REST answer is checked against
 * the OpenAPI document too.
 */
import { t } from '../helpers/file-test.ts'
import { registry } from '../../resources/index.ts'
import { compileRegistry } from '../../runtime/core/registry.ts'
import { fillPath, queryParam } from '../../runtime/core/operations.ts'
import { startTestService } from '../helpers/service.ts'
import { mcpClient } from '../helpers/mcp.ts'
import { openApiChecker } from '../helpers/openapi-check.ts'

const resources = compileRegistry(registry)
const ts = await startTestService(t)
const main = ts.seed.orgs.find((o) => o.large)!
const auth = await ts.keyHeader(main.accountId)
const schema = openApiChecker()
const enc = encodeURIComponent
const get = async (path: string) => {
  const r = await ts.get(path, auth)
  const problem = schema.problem(path, r.status, r.body)
  if (problem) t.fail(`OpenAPI: ${problem}`)
  return r
}
const { client } = await mcpClient(t, ts.svc.mcpUrl, auth)
const objects = await get(`/v1/orgs/${main.salesforceId}/objects?limit=1`)
const params = { orgId: main.salesforceId, objectId: String(objects.body.data[0].id) }

t.test('fields: only the properties asked for, and the record id', async (t) => {
  for (const c of resources) {
    const { list, get: one } = c.ops
    const fieldset = list && queryParam(list, 'fields')
    if (!list || !fieldset) continue
    const path = fillPath(list, params)
    const page = queryParam(list, 'limit') ? 'limit=1&' : ''
    const full = await get(`${path}?${page}`)
    t.equal(full.status, 200, `${c.name}: the list`)
    if (full.body.data.length === 0) continue
    const pick = fieldset.fields.find((f) => f !== fieldset.key)!
    const expected = fieldset.fields.filter((f) => f === pick || f === fieldset.key)
    const sparse = await get(`${path}?${page}fields=${pick}`)
    t.same(Object.keys(sparse.body.data[0]), expected, `${c.name}: fields=${pick}`)
    t.same(sparse.body.data[0], Object.fromEntries(expected.map((f) => [f, full.body.data[0][f]])), `${c.name}: the same values`)
    if (c.decl.scope === 'org') t.not(sparse.headers.get('etag'), full.headers.get('etag'), `${c.name}: tagged per field set`)
    const mcp = await client.callTool({ name: list.tool, arguments: { ...Object.fromEntries(list.pathParams.map((p) => [p.name, params[p.name as keyof typeof params]])), ...(page ? { limit: 1 } : {}), fields: [pick] } })
    t.same((mcp.structuredContent as { data: unknown[] }).data, sparse.body.data, `${c.name}: MCP answers the same records`)
    const bad = await get(`${path}?fields=${pick},colour`)
    t.equal(bad.status, 400, `${c.name}: an unknown field is refused`)
    t.match(bad.body.error, { code: 'unknown_field', parameter: 'fields', field: 'colour', allowed: [...fieldset.fields] })
    const badMcp = await client.callTool({ name: list.tool, arguments: { ...Object.fromEntries(list.pathParams.map((p) => [p.name, params[p.name as keyof typeof params]])), fields: ['colour'] } })
    t.match(badMcp.structuredContent, { error: 'bad_filter', reason: 'unknown_field' }, `${c.name}: and on MCP`)
    const getFields = one && queryParam(one, 'fields')
    const id = one?.pathParams.find((p) => p.type === 'id' && p.role === 'record')
    if (one && getFields && id?.type === 'id') {
      const value = full.body.data[0][id.field]
      const raw = id.encoding === 'base64url' ? Buffer.from(String(value)).toString('base64url') : String(value)
      const rec = await get(`${fillPath(one, { ...params, [id.name]: raw })}?fields=${pick}`)
      t.same(Object.keys(rec.body.data), getFields.fields.filter((f) => f === pick || f === getFields.key), `${c.name}: the get takes fields too`)
    }
  }
})

t.test('grouped counts add up to the records the filter matches, on REST and MCP', async (t) => {
  let checked = 0
  for (const c of resources) {
    const count = c.ops.count
    if (!count) continue
    const list = c.ops.list!
    const by = queryParam(count, 'groupBy')!
    for (const field of by.fields) {
      const r = await get(`${fillPath(count, params)}?by=${field}&limit=200`)
      t.equal(r.status, 200, `${c.name} by ${field}`)
      const sum = r.body.data.reduce((n: number, g: { count: number }) => n + g.count, 0)
      if (r.body.meta.hasMore) t.ok(r.body.meta.groups > r.body.data.length, `${c.name} by ${field}: more groups than shown`)
      else {
        t.equal(r.body.meta.groups, r.body.data.length, `${c.name} by ${field}: every group shown`)
        t.equal(sum, r.body.meta.total, `${c.name} by ${field}: the groups add up to the total`)
      }
      const counts = r.body.data.map((g: { count: number }) => g.count)
      t.same(counts, [...counts].sort((a: number, b: number) => b - a), `${c.name} by ${field}: most records first`)
      // The total is what the list's filter matches: page through the list and count.
      let n = 0
      const totals = new Set<number>()
      for (let offset = 0; ; offset += 200) {
        const page = await get(`${fillPath(list, params)}?limit=200&offset=${offset}&fields=${field}`)
        n += page.body.data.length
        totals.add(page.body.meta.total)
        if (!page.body.meta.hasMore) break
      }
      t.equal(r.body.meta.total, n, `${c.name} by ${field}: total equals the records of the list`)
      t.same([...totals], [n], `${c.name}: every page's meta.total is the records paged through`)
      const group = r.body.data[0]
      if (group && group[field] !== null && typeof group[field] !== 'object') {
        const value = typeof group[field] === 'string' ? `'${String(group[field]).replace(/'/g, "''")}'` : String(group[field])
        // A filter replaces the resource's default filter, as on its list: the narrowing keeps it.
        const dflt = queryParam(count, 'filter')?.defaultFilter
        const filter = dflt ? `and(${dflt},eq(${field},${value}))` : `eq(${field},${value})`
        const one = await get(`${fillPath(count, params)}?by=${field}&filter=${enc(filter)}`)
        t.same(one.body.data, [group], `${c.name} by ${field}: a filter narrows to that group`)
      }
      const mcp = await client.callTool({ name: 'count_org_records', arguments: { orgId: main.salesforceId, resource: c.name, by: [field], limit: 200 } })
      t.same(mcp.structuredContent, r.body, `${c.name} by ${field}: MCP answers the same body`)
      checked++
    }
    const bad = await get(`${fillPath(count, params)}?by=colour`)
    t.match(bad.body.error, { code: 'unknown_field', parameter: 'by', allowed: [...by.fields] }, `${c.name}: an unknown field to count by`)
  }
  t.ok(checked >= 10, `${checked} groupings checked`)
  const two = await get(`/v1/orgs/${main.salesforceId}/counts/issues?by=category,priority`)
  t.ok(two.body.data.every((g: Record<string, unknown>) => 'category' in g && 'priority' in g), 'two fields at once')
  const mcpBad = await client.callTool({ name: 'count_org_records', arguments: { orgId: main.salesforceId, resource: 'nothing', by: ['x'] } })
  t.match(mcpBad.structuredContent, { error: 'bad_filter' }, 'an unknown resource is a bad_filter error on MCP')
})
