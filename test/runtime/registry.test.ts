/** Registry validation at start-up and the import direction between resources/ and runtime/. */
import { t } from '../helpers/file-test.ts'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { prompts, registry } from '../../resources/index.ts'
import { buildCatalog } from '../../runtime/surfaces/mcp/server.ts'
import { fixedVersions } from '../../runtime/core/version-state.ts'
import { compileRegistry, RegistryError } from '../../runtime/core/registry.ts'
import { definePrompt, defineResource, f, type PromptStep } from '../../runtime/core/define.ts'

const ok = () =>
  defineResource({
    name: 'widgets', title: 'Widget', description: 'Test widgets.',
    id: { field: 'id', param: 'widgetId', encoding: 'int' },
    fields: { id: f.int(), name: f.text(), tags: f.textArray() },
    filterable: ['id', 'name'], sortable: ['id', 'name'], defaultSort: 'name',
  })

t.test('defineResource derives scope, path, table, kind and MCP names from the name', async (t) => {
  const w = ok()
  t.match(w, { scope: 'org', path: 'widgets', table: 'widgets', kind: 'collection', operations: { list: true, get: true } })
  t.same(w.mcp, { list: 'list_org_widgets', listTitle: 'List widgets', get: 'get_org_widget', getTitle: 'Get widget' })
  const a = defineResource({ name: 'fooBars', title: 'PMD thing', scope: 'account', description: 'x', fields: { id: f.int() } })
  t.same(a.mcp, { list: 'list_foo_bars', listTitle: 'List PMD things' }, 'account scope, acronym title, no get without id')
  t.equal(a.table, 'foo_bars')
  const s = defineResource({ name: 'cloudThing', title: 'Cloud thing', kind: 'singleton', description: 'x', fields: { n: f.int() } })
  t.same(s.mcp, { get: 'get_org_cloud_thing', getTitle: 'Get cloud thing' }, 'a singleton is named by its name')
  const o = defineResource({ ...w, name: 'gizmos', singular: 'gizmoEntry', plural: 'Gizmo entries', mcp: { getTitle: 'Fetch one gizmo' } })
  t.same(o.mcp, { list: 'list_org_gizmos', listTitle: 'List gizmo entries', get: 'get_org_gizmo_entry', getTitle: 'Fetch one gizmo' }, 'overrides')
})

t.test('the registry offers every MCP tool the service promises', async (t) => {
  const tools = registry.flatMap((r) => [r.mcp.list, r.mcp.get]).filter((x): x is string => x !== undefined).sort()
  const promised = [
    // named by the service's MCP surface
    'list_orgs', 'list_org_issues', 'list_org_fields', 'list_org_objects', 'list_org_object_usages',
    'list_org_connected_app_assignments', 'list_org_class_types', 'list_org_limits', 'list_org_license_usages',
    'list_org_sf_profiles', 'list_org_permission_sets', 'list_org_login_activity', 'list_org_triggers', 'list_org_workflows',
    'list_org_flows', 'list_org_code_counts', 'list_org_es_lints', 'list_org_pmd_violations', 'list_org_items',
    'get_org_code_count', 'get_org_es_lint', 'get_org_pmd_violation', 'get_org_item', 'get_org_limit', 'get_org_license_usage',
    'get_org_sf_profile', 'get_org_permission_set', 'get_org_trigger', 'get_org_workflow', 'get_org_flow',
    'get_org_cloud_usage', 'get_org_login_activity_overview',
    // the counterparts of the remaining REST routes
    'get_org', 'list_org_connected_apps', 'get_org_connected_app', 'list_org_installed_packages', 'get_org_installed_package',
    'get_org_field', 'get_org_object', 'list_org_object_fields', 'get_org_issue_recommendation',
  ].sort()
  // The promised tools are the contract's; a resource added since (orgscan scaffold) brings tools of its own.
  t.same(promised.filter((x) => !tools.includes(x)), [], 'every promised tool is offered')
  t.equal(new Set(tools).size, tools.length, 'no tool name twice')
  t.notOk(tools.includes('get_org_issues'), 'the removed alias does not come back')
})

t.test('the shipped registry compiles', async (t) => {
  const c = compileRegistry(registry)
  t.equal(c.length, registry.length)
})

t.test('bad declarations fail start-up with a clear message', async (t) => {
  const cases: Array<[string, () => unknown[], RegExp]> = [
    ['duplicate name', () => [ok(), ok()], /duplicate resource name "widgets"/],
    ['duplicate path', () => [ok(), { ...ok(), name: 'gadgets', mcp: { list: 'list_org_gadgets', get: 'get_org_gadget' } }], /both serve \/v1\/orgs\/\{orgId\}\/widgets/],
    ['duplicate tool', () => [ok(), { ...ok(), name: 'gadgets', path: 'gadgets' }], /both declare MCP tool list_org_widgets/],
    ['filterable not a field', () => [{ ...ok(), filterable: ['nope'] }], /filterable field "nope" is not a field/],
    ['filter on an array', () => [{ ...ok(), filterable: ['tags'] }], /filterable field "tags" must be a scalar/],
    ['default sort outside sortable', () => [{ ...ok(), defaultSort: '-tags' }], /defaultSort "-tags"/],
    ['malformed default filter', () => [{ ...ok(), defaultFilter: 'eq(name' }], /defaultFilter "eq\(name"/],
    ['bad tool name', () => [{ ...ok(), mcp: { ...ok().mcp, list: 'List-Widgets' } }], /MCP tool name "List-Widgets"/],
    ['operation without a tool', () => [{ ...ok(), mcp: { list: 'list_org_widgets' } }], /get operation has no MCP tool name/],
    ['bad table', () => [{ ...ok(), table: 'Widgets; DROP' }], /table "Widgets; DROP" must be snake_case/],
    ['path params without parent', () => [{ ...ok(), path: 'things/{thingId}/widgets' }], /path parameters need a parent/],
  ]
  for (const [name, build, re] of cases) {
    t.throws(() => compileRegistry(build() as never), RegistryError, name)
    try {
      compileRegistry(build() as never)
    } catch (e) {
      t.match((e as Error).message, re, name)
    }
  }
})

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n)
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : []
  })
}
const root = new URL('../..', import.meta.url).pathname

t.test('runtime/ never imports resources/', async (t) => {
  for (const file of files(join(root, 'runtime'))) {
    const src = readFileSync(file, 'utf8')
    t.notMatch(src, /from ['"][./]*\/?resources\//, `${file.slice(root.length)} does not import resources/`)
  }
})

t.test('resources/ import only the definition module of the runtime', async (t) => {
  for (const file of files(join(root, 'resources'))) {
    const src = readFileSync(file, 'utf8')
    for (const m of src.matchAll(/from ['"]([^'"]+)['"]/g)) {
      const spec = m[1]
      const allowed = spec === 'valibot' || spec === '../runtime/core/define.ts' || (spec.startsWith('./') && !spec.includes('/', 2))
      t.ok(allowed, `${file.slice(root.length)} imports ${spec}`)
    }
  }
})

t.test('a prompt that names what does not work stops start-up', async (t) => {
  const resources = compileRegistry(registry)
  const step = (tool: string, args: Record<string, string | number>, from?: PromptStep['from']): PromptStep => ({ tool, arguments: { orgId: '$org', ...args }, why: 'x', from })
  const prompt = (steps: PromptStep[]) =>
    definePrompt({ name: 'bad_prompt', title: 'Bad', description: 'x', arguments: [{ name: 'orgId', description: 'x', required: true, complete: 'org' }], task: () => 'x', report: 'x', steps: ({ args }) => steps.map((s) => ({ ...s, arguments: { ...s.arguments, orgId: args.orgId! } })) })
  const cases: Array<[string, PromptStep[], RegExp]> = [
    ['unknown tool', [step('list_org_widgets', {})], /names list_org_widgets, which is not a tool/],
    ['unknown filter field', [step('list_org_fields', { filter: 'eq(colour,red)' })], /would fail: Unknown filter field "colour"/],
    ['bad filter value', [step('list_org_issues', { filter: 'eq(category,hygiene)' })], /would fail: Field "category" must be one of/],
    ['unsortable field', [step('list_org_fields', { sort: 'helpText' })], /would fail/],
    ['limit over 200', [step('list_org_fields', { limit: 500 })], /would fail: limit must be at most 200/],
    ['reference to a later step', [step('get_org_field', { fieldId: '$item.id' }, { step: 2, take: 1, each: true }), step('list_org_fields', {})], /refers to step 2, which is not an earlier step/],
    ['reference to a missing field', [step('list_org_fields', {}), step('get_org_field', { fieldId: '$item.colour' }, { step: 1, take: 1, each: true })], /refers to \$item.colour/],
  ]
  for (const [name, steps, re] of cases) {
    t.throws(() => buildCatalog({ resources, prompts: [prompt(steps)], versions: fixedVersions([]), clock: Date.now }), re, name)
  }
  t.doesNotThrow(() => buildCatalog({ resources, prompts, versions: fixedVersions([]), clock: Date.now }), 'the shipped prompts are valid')
})

t.test('every resource and field is described usefully (the generated references show these texts)', async (t) => {
  const placeholder = /todo|tbd|fixme|lorem|placeholder|xxx/i
  const words = (s: string) => s.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase()
  for (const c of compileRegistry(registry)) {
    t.ok(c.decl.description.length >= 40 && !placeholder.test(c.decl.description), `${c.name}: resource description`)
    for (const [name, spec] of c.fields) {
      const d = spec.description ?? ''
      const ok = d.length >= 15 && !placeholder.test(d) && words(d).replace(/[^a-z ]/g, '').trim() !== words(name)
      if (!ok) t.fail(`${c.name}.${name}: needs a useful description (got ${JSON.stringify(d)})`)
    }
  }
  t.pass('checked every field')
})

t.test('an enum field pointing to a catalog points to one the MCP server serves', async (t) => {
  const { catalogs } = await import('../../runtime/surfaces/mcp/lookups.ts')
  const compiled = compileRegistry(registry)
  const served = new Set(catalogs(compiled).map((d) => d.uri))
  let n = 0
  for (const c of compiled) for (const [name, spec] of c.fields) if (spec.catalog) {
    n++
    t.ok(served.has(spec.catalog), `${c.name}.${name} → ${spec.catalog}`)
  }
  t.ok(n >= 1, 'issues.category has one')
})
