/**
 * Where a tap run's test bundles live and how they are named (test-bundles.mjs builds them; tap-quiet.cjs and
 * ts-hooks.mjs run them). CommonJS, because tap-quiet.cjs is a `--require` and reads it before any ES module loads.
 *
 * The bundles of a run live in `node_modules/.cache/orgscan-test-bundles/<run>/` (inside the project, so the packages
 * they import are found), where <run> is the tap runner's process id, as for the database templates (templates.ts).
 */
'use strict'
const { readFileSync } = require('node:fs')
const { join } = require('node:path')

const ROOT = join(__dirname, '../../')
const ALL_BUNDLES = `${ROOT}node_modules/.cache/orgscan-test-bundles/`
/** Lists, relative to a run's folder, the entries built: written last, so its presence means the build finished. */
const MANIFEST = 'manifest.json'

/** The folder of a run's bundles (a path ending in a slash). */
const bundlesDir = (run) => `${ALL_BUNDLES}${run}/`

/** The bundle's file name for a test file (a path relative to the project root): `test/x.test.ts` → `test__x.test.mjs`. */
const bundleName = (rel) => `${rel.replace(/\.ts$/, '').split(/[\\/]/).join('__')}.mjs`

/** The bundles a finished build of `run` holds (file names), or an empty set. */
function builtBundles(run) {
  try {
    return new Set(JSON.parse(readFileSync(bundlesDir(run) + MANIFEST, 'utf8')))
  } catch {
    return new Set()
  }
}

/** The run a test process belongs to: in a tap run (TAP_BEFORE is set), its runner's process id, else undefined. */
const currentRun = () => (process.env.TAP_BEFORE ? String(process.ppid) : undefined)

/**
 * The bundle of `run` to run in place of the file at `path` (absolute), or undefined: only a test file of the project
 * (`*.test.ts`) whose bundle the run's build finished.
 */
function bundleFor(run, path) {
  if (!run || !path.startsWith(ROOT) || !path.endsWith('.test.ts')) return undefined
  const name = bundleName(path.slice(ROOT.length))
  return builtBundles(run).has(name) ? bundlesDir(run) + name : undefined
}

module.exports = { ROOT, ALL_BUNDLES, MANIFEST, bundlesDir, bundleName, builtBundles, currentRun, bundleFor }
