/**
 * `npm run regen`: rewrites every artifact generated from the registry, in the order they depend on each other —
 * the ordered registry's list (`resources/index.ts`), the example bundle's records of every resource
 * (`examples/scan-bundle.json`), the real example calls of the references (`docs/examples.json`), the OpenAPI document,
 * the references and the typed client's sources and manifest (`orgscan docs`), and the MCP wire table (`test/fixtures/mcp-wire.json`) with a
 * changelog entry naming its new fingerprint when it changed. Prints a line per step; exits non-zero on the first
 * step that fails, naming it.
 */
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { indexWithEvery } from '../bin/cli/scaffold.ts'

const root = fileURLToPath(new URL('../', import.meta.url))
const at = (rel: string) => join(root, rel)
const step = (what: string) => process.stdout.write(`regen: ${what}\n`)

function fail(what: string, detail: string): never {
  process.stderr.write(`regen: ${what} failed\n${detail}\n`)
  process.exit(1)
}

/** Runs a command in the repository; its output is shown only when it fails. */
function run(what: string, cmd: string, args: string[], env: Record<string, string> = {}): void {
  // On the embedded database: the wire table is recorded only there (a PostgreSQL run would skip it).
  const { TEST_DATABASE_URL: _pg, ...inherited } = process.env
  const r = spawnSync(cmd, args, { cwd: root, env: { ...inherited, ...env }, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
  if (r.status !== 0) fail(what, `${r.stdout ?? ''}${r.stderr ?? ''}`.split('\n').filter((l) => /not ok|fail|error|Error/i.test(l)).slice(0, 40).join('\n') || `exit ${r.status}`)
}

step('resources/index.ts (every declaration of resources/, in documentation order)')
writeFileSync(at('resources/index.ts'), indexWithEvery(at('resources')))

// Modules that read the registry are imported after its list is current.
const { registry, prompts } = await import('../resources/index.ts')
const { compileRegistry } = await import('../runtime/core/registry.ts')
const { importTargets } = await import('../runtime/platform/bundle/import-bundle.ts')
const { genericRecords } = await import('../demo/generic.ts')
const resources = compileRegistry(registry)

step('examples/scan-bundle.json (records of every resource)')
const bundleFile = at('examples/scan-bundle.json')
const bundle = JSON.parse(readFileSync(bundleFile, 'utf8')) as { data: Record<string, unknown> }
let added = 0
for (const c of importTargets(resources)) {
  if (c.name in bundle.data) continue
  const rows = genericRecords(c)
  bundle.data[c.name] = c.decl.kind === 'singleton' ? rows[0] : rows.slice(0, 2)
  added++
}
if (added > 0) writeFileSync(bundleFile, JSON.stringify(bundle, null, 2) + '\n')

step('docs/examples.json (each tool called against the demo data) and the MCP wire table')
const wireFile = at('test/fixtures/mcp-wire.json')
const wireBefore = readFileSync(wireFile, 'utf8')
run('recording the examples and the wire table', process.execPath, [at('node_modules/.bin/tap'), 'test/docs/docs-examples.test.ts', 'test/mcp/mcp-wire.test.ts'], { UPDATE_DOC_EXAMPLES: '1', ORGSCAN_UPDATE_WIRE: '1' })

step('docs/openapi.json, docs/reference/*.md, client/generated.ts, client/package.json')
const { generateDocs } = await import('../runtime/surfaces/docs/generate.ts')
for (const [rel, text] of generateDocs(resources, prompts)) {
  mkdirSync(dirname(at(rel)), { recursive: true })
  writeFileSync(at(rel), text)
}

const wireAfter = readFileSync(wireFile, 'utf8')
const fingerprint = createHash('sha256').update(wireAfter).digest('hex').slice(0, 12)
const changelogFile = at('docs/changelog.md')
const changelog = readFileSync(changelogFile, 'utf8')
if (wireAfter !== wireBefore && !changelog.includes(fingerprint)) {
  step(`docs/changelog.md (an entry for the wire table's fingerprint ${fingerprint})`)
  type Wire = { tools: Array<{ name: string }> }
  const names = (w: Wire) => new Set(w.tools.map((x) => x.name))
  const before = names(JSON.parse(wireBefore) as Wire)
  const after = names(JSON.parse(wireAfter) as Wire)
  const gained = [...after].filter((x) => !before.has(x))
  const lost = [...before].filter((x) => !after.has(x))
  const change = [gained.length ? `tools added: ${gained.map((x) => `\`${x}\``).join(', ')}` : '', lost.length ? `tools removed: ${lost.map((x) => `\`${x}\``).join(', ')}` : '']
    .filter(Boolean).join('; ') || 'tool or prompt descriptions and schemas changed (review the table diff and say how)'
  const tag = lost.length ? 'breaking' : gained.length ? 'additive' : 'description-update'
  const row = `| ${new Date().toISOString().slice(0, 10)} | MCP | Wire table fingerprint \`${fingerprint}\`: ${change} | ${tag} |`
  writeFileSync(changelogFile, changelog.replace('|---|---|---|---|\n', `|---|---|---|---|\n${row}\n`))
}
process.stdout.write('regen: done. Review the diff (git diff), then run npm test.\n')
