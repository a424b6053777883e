/**
 * Each test file of a tap run as one compiled ES module (with chunks shared between files), built once by tap's
 * `before` script (run-before.ts) and run in place of the file's TypeScript (tap-quiet.cjs): a test process then loads
 * a few modules instead of about 150 TypeScript sources, each through the loader thread, transformed and source-mapped
 * — about 0.65 s less CPU per test file on this 2-core machine (docs/adr/0045-test-processes-bundled-and-grouped.md).
 *
 * Built with esbuild, packages left as imports (but those scripts/build.js bundles), source maps linked (tap turns source maps on, so a failure still points
 * into the .ts files). As in scripts/build.js, `import.meta.url` in each source becomes that source's own URL
 * (scripts/own-url.js), so code that finds files beside itself keeps finding them.
 *
 * Where a run's bundles live and how they are named: bundle-paths.cjs. tap's `after` script removes them, and a later
 * run removes those of runs whose runner is gone.
 * Plain JavaScript: the loader thread reads it before any TypeScript can be loaded.
 */
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { packagesPlugin } from '../../scripts/build.js'
import { ownUrlPlugin } from '../../scripts/own-url.js'
import paths from './bundle-paths.cjs'

const { ROOT, ALL_BUNDLES, MANIFEST, bundlesDir, bundleName } = paths

/** Every test file under test/ (tap's include, `test/**\/*.test.ts`; its excluded folders hold none). */
function testFiles() {
  return readdirSync(`${ROOT}test`, { recursive: true })
    .map((f) => `test/${String(f).split('\\').join('/')}`)
    .filter((f) => f.endsWith('.test.ts'))
    .sort()
}

/** Builds every test file's bundle for `run`; resolves with the number built. */
export async function buildTestBundles(run) {
  const esbuild = await import('esbuild')
  const outdir = bundlesDir(run)
  rmSync(outdir, { recursive: true, force: true })
  const files = testFiles()
  await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: Object.fromEntries(files.map((f) => [bundleName(f).replace(/\.mjs$/, ''), f])),
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    keepNames: true, // functions and classes keep their names (`fn.name`), as when the sources run
    sourcemap: 'linked',
    // tap runs test files with --enable-source-maps, so Node reads and parses the map of every chunk a test loads:
    // without the sources' text in them (stack traces need only the mappings; the sources are beside them) the maps
    // are a third of the size (5.3 → 1.7 MB in all; the chunk with the MCP SDK 2.4 → 0.57 MB).
    sourcesContent: false,
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunk-[hash]',
    outdir,
    logLevel: 'silent',
    // Packages stay imports, but those the command's bundle carries (scripts/build.js BUNDLED): tests run the same MCP
    // SDK as a served process, and load it in a third of the CPU.
    plugins: [packagesPlugin, ownUrlPlugin(outdir)],
  })
  writeFileSync(outdir + MANIFEST, JSON.stringify(files.map(bundleName)))
  return files.length
}

/** Removes the bundles of `run`, or (without it) of every run `isGone` says is over. */
export function removeTestBundles(run, isGone) {
  if (run) return rmSync(bundlesDir(run), { recursive: true, force: true })
  if (!existsSync(ALL_BUNDLES)) return
  for (const r of readdirSync(ALL_BUNDLES)) if (isGone(r)) rmSync(bundlesDir(r), { recursive: true, force: true })
}
