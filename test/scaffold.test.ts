/**
 * docs/adding-a-resource.md, followed step by step in a copy of this checkout: `orgscan scaffold resource
 * validationRules`, then `npm run regen`. The copy then type-checks, changed only the declaration, its migration, the
 * registry's list and generated artifacts, and serves the resource: its REST routes and MCP tools answered the
 * recorded example calls (regen records them against the demo data over both), its OpenAPI paths, references, client
 * methods and wire-table entries exist, and the copy's own docs and wire tests pass.
 *
 * A file of its own with a longer timeout: regen runs a test process of its own in the copy (about a minute).
 */
import { t } from './helpers/file-test.ts'
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { embeddedRunOnly } from './helpers/runs.ts'

embeddedRunOnly(t, 'Scaffolding a resource')
t.setTimeout(420_000)

const root = fileURLToPath(new URL('../', import.meta.url))
// Inside the checkout (.scratch/ is ignored by git): node_modules is hard-linked, which needs the same file system.
const copy = join(root, '.scratch', `scaffold-${process.pid}`)
t.teardown(() => rmSync(copy, { recursive: true, force: true }))

// As a person runs the commands: none of this test process's tap settings, and the embedded database.
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(TAP|NODE_OPTIONS$|TEST_DATABASE_URL$)/.test(k)))
const sh = (cmd: string, args: string[], cwd = copy) => {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, env })
  return { code: r.status, out: `${r.stdout}${r.stderr}` }
}

/** The files of the checkout as git sees them (tracked, and untracked but not ignored), with their text. */
function snapshot(dir: string): Map<string, string> {
  const list = sh('git', ['ls-files', '-co', '--exclude-standard'], dir).out.split('\n').filter((f) => f && existsSync(join(dir, f)))
  return new Map(list.map((f) => [f, readFileSync(join(dir, f), 'utf8')]))
}

const before = snapshot(root)
mkdirSync(copy, { recursive: true })
for (const f of before.keys()) cpSync(join(root, f), join(copy, f), { recursive: true })
t.equal(sh('cp', ['-al', join(root, 'node_modules'), join(copy, 'node_modules')]).code, 0, 'node_modules linked into the copy')
t.equal(sh('git', ['init', '-q']).code, 0, 'the copy is a checkout of its own')

t.test('scaffold, then regen', async (t) => {
  const scaffold = sh(process.execPath, ['bin/orgscan.js', 'scaffold', 'resource', 'validationRules'])
  t.equal(scaffold.code, 0, 'orgscan scaffold resource validationRules', { output: scaffold.out })
  t.match(scaffold.out, /npm run regen/, 'and it says what to run next')
  const again = sh(process.execPath, ['bin/orgscan.js', 'scaffold', 'resource', 'validationRules'])
  t.equal(again.code, 2, 'a second scaffold of the name is refused')
  t.match(again.out, /exists already/)
  const regen = sh(process.execPath, ['--import', 'tsx', 'scripts/regen.ts'])
  t.equal(regen.code, 0, 'npm run regen', { output: regen.out.slice(-4000) })
})

const after = snapshot(copy)
const generated = ['client/generated.ts', 'docs/changelog.md', 'docs/examples.json', 'docs/openapi.json', 'docs/reference/mcp.md', 'docs/reference/rest.md', 'examples/scan-bundle.json', 'resources/index.ts', 'test/fixtures/mcp-wire.json']

t.test('only the declaration, its migration and generated artifacts changed', async (t) => {
  const changed = [...after.keys()].filter((f) => after.get(f) !== before.get(f) && !f.startsWith('.scratch/')).sort()
  const migration = changed.find((f) => /^runtime\/platform\/db\/migrations\/\d{3}_validation_rules\.sql$/.test(f))
  t.ok(migration, 'a migration for the table')
  t.same(changed, [...generated, 'resources/validation-rules.ts', migration!].sort())
  t.match(after.get(migration!), /CREATE TABLE validation_rules \(/)
})

t.test('the copy type-checks and serves the resource everywhere', async (t) => {
  const tsc = sh(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '--noEmit'])
  t.equal(tsc.code, 0, 'tsc --noEmit', { output: tsc.out.slice(0, 4000) })
  const openapi = JSON.parse(after.get('docs/openapi.json')!) as { paths: Record<string, unknown> }
  t.ok(openapi.paths['/v1/orgs/{orgId}/validationRules'] && openapi.paths['/v1/orgs/{orgId}/validationRules/{validationRuleId}'], 'OpenAPI paths')
  t.match(after.get('docs/reference/rest.md'), /## Validation rules\n/, 'the REST reference')
  t.match(after.get('docs/reference/mcp.md'), /### `list_org_validation_rules` — List validation rules/, 'the MCP reference')
  t.match(after.get('client/generated.ts'), /getOrgValidationRule\(params: \{ orgId: string; validationRuleId: number \| string[^}]*\}\)/, 'a client method')
  const wire = JSON.parse(after.get('test/fixtures/mcp-wire.json')!) as { tools: Array<{ name: string }> }
  t.ok(wire.tools.some((x) => x.name === 'get_org_validation_rule'), 'the wire table')
  // regen recorded these by calling the tools over MCP and the same reads over REST against the demo data.
  const examples = JSON.parse(after.get('docs/examples.json')!) as Record<string, { rest: string; result: { data: unknown } }>
  t.ok(Array.isArray(examples.list_org_validation_rules?.result.data) && (examples.list_org_validation_rules.result.data as unknown[]).length > 0, 'the list answered with demo records')
  t.match(examples.get_org_validation_rule?.rest, /\/validationRules\/\d+$/, 'and the get by id')
  const tests = sh(process.execPath, [join(root, 'node_modules/.bin/tap'), 'test/docs/docs.test.ts', 'test/mcp/mcp-wire.test.ts', 'test/mcp/mcp-tool-size.test.ts', 'test/db/schema-drift.test.ts'])
  t.equal(tests.code, 0, "the copy's docs, wire-table, tool-list size and schema-drift tests pass", { output: tests.out.split('\n').filter((l) => /not ok|# \{/.test(l)).join('\n') })
})
