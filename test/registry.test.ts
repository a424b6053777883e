/** Registry validation at start-up and the import direction between resources/ and runtime/ (DESIGN.md). */
import t from 'tap'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { registry } from '../resources/index.ts'
import { compileRegistry, RegistryError } from '../runtime/registry.ts'
import { defineResource, f } from '../runtime/define.ts'

const ok = () =>
  defineResource({
    name: 'widgets', title: 'Widget', description: 'Test widgets.', scope: 'org', path: 'widgets', table: 'widgets', kind: 'collection',
    id: { field: 'id', param: 'widgetId', encoding: 'int' },
    fields: { id: f.int(), name: f.text(), tags: f.textArray() },
    filterable: ['id', 'name'], sortable: ['id', 'name'], defaultSort: 'name',
    mcp: { list: 'list_org_widgets' },
  })

t.test('the shipped registry compiles', async (t) => {
  const c = compileRegistry(registry)
  t.equal(c.length, registry.length)
})

t.test('bad declarations fail start-up with a clear message', async (t) => {
  const cases: Array<[string, () => unknown[], RegExp]> = [
    ['duplicate name', () => [ok(), ok()], /duplicate resource name "widgets"/],
    ['duplicate path', () => [ok(), { ...ok(), name: 'gadgets', mcp: {} }], /both serve \/v1\/orgs\/\{orgId\}\/widgets/],
    ['duplicate tool', () => [ok(), { ...ok(), name: 'gadgets', path: 'gadgets' }], /both declare MCP tool list_org_widgets/],
    ['filterable not a field', () => [{ ...ok(), filterable: ['nope'] }], /filterable field "nope" is not a field/],
    ['filter on an array', () => [{ ...ok(), filterable: ['tags'] }], /filterable field "tags" must be a scalar/],
    ['default sort outside sortable', () => [{ ...ok(), defaultSort: '-tags' }], /defaultSort "-tags"/],
    ['malformed default filter', () => [{ ...ok(), defaultFilter: 'eq(name' }], /defaultFilter "eq\(name"/],
    ['bad tool name', () => [{ ...ok(), mcp: { list: 'List-Widgets' } }], /MCP tool name "List-Widgets"/],
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
const root = new URL('..', import.meta.url).pathname

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
      const allowed = spec === 'valibot' || spec === '../runtime/define.ts' || (spec.startsWith('./') && !spec.includes('/', 2))
      t.ok(allowed, `${file.slice(root.length)} imports ${spec}`)
    }
  }
})
