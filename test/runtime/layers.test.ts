/**
 * The runtime's layers (docs/architecture.md): `core/` (the declaration language, the registry and its compiled model,
 * planning, statements, reads, errors and the contracts the other layers meet), `surfaces/` (REST, MCP, the generated
 * docs and client: projections of the model), `platform/` (database, HTTP server, authentication, OAuth, quota, cache
 * workers, operations) and `service/` (assembles them). Imports flow one way: core ← surfaces, core ← platform, and both
 * ← service; core imports no other layer, and surfaces and platform never import each other. Declarations
 * (`resources/`) import only the declaration module. No import circles anywhere in runtime/, type-only imports
 * included: a circle is a tangle to a reader whatever the compiler erases.
 */
import { t } from '../helpers/file-test.ts'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../../', import.meta.url))
const LAYERS = ['core', 'surfaces', 'platform', 'service'] as const
type Layer = (typeof LAYERS)[number]
const MAY_IMPORT: Record<Layer, readonly Layer[]> = {
  core: ['core'],
  surfaces: ['core', 'surfaces'],
  platform: ['core', 'platform'],
  service: ['core', 'surfaces', 'platform', 'service'],
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n)
    return statSync(p).isDirectory() ? walk(p) : /\.(ts|mjs)$/.test(n) ? [p] : []
  })
}

/** The repository-relative files a module imports (relative specifiers only), type-only imports included. */
function importsOf(file: string): string[] {
  const src = readFileSync(file, 'utf8')
  const out: string[] = []
  for (const m of src.matchAll(/^\s*(?:import|export)\b[^'"]*?\bfrom\s+['"](\.{1,2}\/[^'"]+)['"]|\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/gm)) {
    const spec = m[1] ?? m[2]
    out.push(relative(root, normalize(join(dirname(file), spec))))
  }
  return out
}

const files = walk(join(root, 'runtime')).map((f) => relative(root, f))
const graph = new Map(files.map((f) => [f, importsOf(join(root, f)).filter((x) => x.startsWith('runtime/'))]))
const layerOf = (f: string): Layer | undefined => LAYERS.find((l) => f.startsWith(`runtime/${l}/`))

t.test('every runtime module is in one layer', async (t) => {
  t.same(files.filter((f) => !layerOf(f)), [], 'no module outside core/, surfaces/, platform/ and service/')
})

t.test('imports flow core ← surfaces, core ← platform, both ← service', async (t) => {
  const wrong: string[] = []
  for (const [f, deps] of graph) {
    const from = layerOf(f)!
    for (const d of deps) {
      const to = layerOf(d)
      if (to && !MAY_IMPORT[from].includes(to)) wrong.push(`${f} (${from}) imports ${d} (${to})`)
    }
  }
  t.same(wrong, [], 'no import against the direction of the layers')
})

t.test('no import circles in runtime/', async (t) => {
  const circles: string[] = []
  const state = new Map<string, 'open' | 'done'>()
  const path: string[] = []
  const visit = (f: string) => {
    state.set(f, 'open')
    path.push(f)
    for (const d of graph.get(f) ?? []) {
      if (state.get(d) === 'open') circles.push([...path.slice(path.indexOf(d)), d].join(' → '))
      else if (!state.has(d) && graph.has(d)) visit(d)
    }
    path.pop()
    state.set(f, 'done')
  }
  for (const f of graph.keys()) if (!state.has(f)) visit(f)
  t.same(circles, [], 'the import graph is acyclic')
})

t.test('declarations import only the declaration module', async (t) => {
  const wrong: string[] = []
  for (const f of readdirSync(join(root, 'resources')).filter((n) => n.endsWith('.ts'))) {
    for (const d of importsOf(join(root, 'resources', f))) {
      if (d.startsWith('runtime/') && d !== 'runtime/core/define.ts') wrong.push(`resources/${f} imports ${d}`)
    }
  }
  t.same(wrong, [])
})

t.test('the check sees what it checks', async (t) => {
  t.ok(files.length > 100, `${files.length} runtime modules read`)
  const edges = [...graph.values()].reduce((n, d) => n + d.length, 0)
  t.ok(edges > 300, `${edges} imports read`)
  t.ok(graph.get('runtime/surfaces/rest/rest.ts')?.some((d) => d.startsWith('runtime/core/')), 'the REST surface is seen importing the core')
})
