/**
 * Module hooks of the test processes (registered by ts-loader.mjs, in place of tsx): any TypeScript file a process
 * loads outside a test bundle (tap's before and after scripts, a test run outside tap, a test file without a bundle, a
 * module a child process of a test imports) is compiled by esbuild (types removed, as in the bundles), with an inline
 * source map; compiled files are kept in `node_modules/.cache/orgscan-ts/`, one per source. A test file started by tap
 * runs as its bundle without these hooks (tap-quiet.cjs).
 */
import { createHash } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import paths from './bundle-paths.cjs'

const CACHE = `${paths.ROOT}node_modules/.cache/orgscan-ts/`

let esbuild

export async function load(url, context, next) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return next(url, context)
  const path = new URL(url)
  const source = readFileSync(path, 'utf8')
  // Named by the source's URL and the text it was compiled from; a new compile of a source removes its older ones, so
  // the cache holds one file per TypeScript file however often it is edited.
  const prefix = createHash('sha256').update(url).digest('hex').slice(0, 32)
  const name = `${prefix}.${createHash('sha256').update(source).digest('hex').slice(0, 32)}.mjs`
  try {
    return { format: 'module', source: readFileSync(CACHE + name, 'utf8'), shortCircuit: true }
  } catch {
    // not compiled yet
  }
  esbuild ??= await import('esbuild')
  const { code } = esbuild.transformSync(source, { loader: 'ts', format: 'esm', target: 'node20', sourcemap: 'inline', sourcefile: url })
  try {
    mkdirSync(CACHE, { recursive: true })
    const tmp = `${CACHE}${name}.${process.pid}.tmp`
    writeFileSync(tmp, code)
    renameSync(tmp, CACHE + name)
    for (const f of readdirSync(CACHE)) if (f.startsWith(`${prefix}.`) && f.endsWith('.mjs') && f !== name) rmSync(CACHE + f, { force: true })
  } catch {
    // a read-only checkout: compiled again next time
  }
  return { format: 'module', source: code, shortCircuit: true }
}
