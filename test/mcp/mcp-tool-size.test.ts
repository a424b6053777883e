/**
 * The tool list an assistant carries (docs/adr/0145-lean-tool-list.md): `tools/list` as the official client sees it is
 * at most 40,000 characters of compact JSON for every tool together (the figure is printed), and every tool still has
 * a title, annotations, and input and output schemas that compile as JSON Schema 2020-12, share nothing through
 * `$ref`, and list no long enumeration inline (its values are at the lookup the description names).
 */
import Ajv2020Module from 'ajv/dist/2020.js'
import { t } from '../helpers/file-test.ts'
import { startTestService } from '../helpers/service.ts'
import { mcpClient } from '../helpers/mcp.ts'

const MAX_CHARS = 40_000
// The CommonJS module's class, however the loader presents it.
const Ajv2020 = (Ajv2020Module as unknown as { default: typeof Ajv2020Module }).default ?? Ajv2020Module

const ts = await startTestService(t, { seedScale: 0.02 })
const org = ts.seed.orgs[0]
const { client } = await mcpClient(t, ts.svc.mcpUrl, await ts.keyHeader(org.accountId))
const { tools } = await client.listTools()

t.test('every tool together is at most 40,000 characters of compact JSON', async (t) => {
  const size = JSON.stringify(tools).length
  t.comment(`tools/list: ${tools.length} tools, ${size} characters of compact JSON`)
  for (const part of ['description', 'inputSchema', 'outputSchema'] as const) {
    t.comment(`  ${part}: ${tools.reduce((n, x) => n + JSON.stringify(x[part] ?? '').length, 0)}`)
  }
  t.ok(tools.length >= 43, 'every list and get tool, the quota and server_info')
  t.ok(size <= MAX_CHARS, `${size} <= ${MAX_CHARS}`)
})

t.test('every tool keeps its title, annotations and schemas, valid JSON Schema 2020-12', async (t) => {
  // Checked against the 2020-12 meta-schema, unknown keywords refused; type unions and untyped `properties` are valid.
  const ajv = new (Ajv2020 as any)({ strict: true, strictTypes: false, allowUnionTypes: true, allErrors: true }) as { compile(s: object): unknown }
  for (const tool of tools) {
    t.ok(tool.title, `${tool.name}: title`)
    t.same(tool.annotations, { readOnlyHint: true, openWorldHint: false }, `${tool.name}: annotations`)
    t.ok(tool.description && tool.description.length <= 300, `${tool.name}: one short description`)
    for (const [which, schema] of [['input', tool.inputSchema], ['output', tool.outputSchema]] as const) {
      t.equal(schema?.type, 'object', `${tool.name}: ${which} schema of an object`)
      t.doesNotThrow(() => ajv.compile(schema!), `${tool.name}: ${which} schema compiles as 2020-12`)
      const text = JSON.stringify(schema)
      t.notMatch(text, /"\$ref"/, `${tool.name}: ${which} schema shares nothing through $ref`)
      for (const m of text.matchAll(/"enum":(\[[^\]]*\])/g)) t.ok(m[1].length <= 70, `${tool.name}: a short enumeration inline (${m[1].slice(0, 40)}…)`)
    }
  }
})

t.test('a long enumeration points at the lookup that lists it, which lists it', async (t) => {
  const issues = tools.find((x) => x.name === 'list_org_issues')!
  const category = (issues.outputSchema as any).properties.data.items.properties.category
  t.same(category, { type: 'string', description: 'values: resource://filter-values/issues/category' })
  const doc = JSON.parse(((await client.readResource({ uri: 'resource://filter-values/issues/category' })).contents[0] as { text: string }).text)
  t.ok(doc.values.length >= 10, 'the lookup lists the values')
})

t.test('a get names its list, and only the fields the list does not show', async (t) => {
  const get = tools.find((x) => x.name === 'get_org_field')!
  t.same((get.outputSchema as any).properties.data, { description: 'A list_org_fields record.' })
  t.match(get.description, /fieldId from list_org_fields/)
  const org = tools.find((x) => x.name === 'get_org')!
  const extra = Object.keys((org.outputSchema as any).properties.data.properties)
  t.ok(extra.includes('timeZone') && !extra.includes('name'), 'get_org lists what list_orgs does not')
})
