// The `orgscan` command as plain-JavaScript modules: dist/orgscan.mjs, bundled from bin/cli/main.ts and everything it
// imports (the packages in node_modules stay imports, except those in BUNDLED), so that a served process runs
// compiled code instead of loading tsx; and dist/help.mjs, from bin/cli/help.ts alone, so that `orgscan --help` answers
// without loading the service and its packages. tsx costs a running server about 45 MB of resident memory (its loader
// thread, the transformed sources, source maps) and doubles its start-up (docs/adr/0020-compiled-ascii-bundle.md). A
// bundle is written without comments or the code's white space, and in ASCII: V8 keeps a module's source text for the
// life of the process, at two bytes a character if one character is beyond Latin-1 (measured: 1.4 MB of heap before,
// 0.56 MB).
//
// Built by `npm install` (postinstall), `npm run build`, and tap's `before` script, each time only if a bundle is not
// current: a source it was built from, or this file, has changed since (compared by size and modification time). The
// command never builds: bin/orgscan.js runs a bundle only while it is current, and the sources through tsx otherwise
// (docs/adr/0130-dependency-patches-and-built-cli.md). The first line of a bundle records those sources; a build is
// written beside it and renamed into place, so processes that start at once never read half a file.
//
// Modules that find files beside themselves (`new URL('./migrations/', import.meta.url)`) keep doing so: in each source,
// `import.meta.url` becomes that source's own address, derived from the bundle's, so the bundle may move with the
// checkout (scripts/own-url.js). `dist/orgscan.mjs.map` maps the bundle back to the sources
// (`NODE_OPTIONS=--enable-source-maps`).
import { closeSync, mkdirSync, openSync, readSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs'
import { dirname, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ownUrlPlugin } from './own-url.js'

const MARK = '// orgscan-build '

/** What a source looked like when a bundle was built: its size and modification time. */
const stamp = (path) => {
  const s = statSync(path)
  return `${s.size}:${Math.trunc(s.mtimeMs)}`
}

/**
 * Packages stay imports, loaded from node_modules, except those bundled:
 * - valibot, which every declaration and the configuration use a small part of (bundled, the unused rest of its
 *   400 KB is left out of the served process);
 * - the MCP SDK (`@modelcontextprotocol/server` and `core`) and zod, which it builds its schemas with: their files
 *   hold characters beyond Latin-1 (in comments and messages), so V8 kept about 3 MB of their source text, much of
 *   it at two bytes a character; in the ASCII bundle it is 0.7 MB at one byte. Measured: importing the SDK took
 *   7.6 MB of heap from node_modules, 3.6 MB bundled.
 */
export const BUNDLED = new Set(['valibot', '@modelcontextprotocol/server', '@modelcontextprotocol/core', 'zod'])
/** esbuild plugin: every package an import, but those in BUNDLED (the test bundles use it too). */
export const packagesPlugin = {
  name: 'orgscan-packages',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      const name = args.path.startsWith('@') ? args.path.split('/').slice(0, 2).join('/') : args.path.split('/')[0]
      return BUNDLED.has(name) ? undefined : { path: args.path, external: true }
    })
  },
}

/** This file: a change to how bundles are built makes every bundle stale. */
const SELF = fileURLToPath(import.meta.url)
/** The plugin it builds with, which changes the bundle as much. */
const PLUGIN = fileURLToPath(new URL('./own-url.js', import.meta.url))

/**
 * What the bundle at `path` records — the sources it was built from (path relative to the root → stamp) and the
 * stamp of this builder and its plugin — or undefined if unreadable.
 */
function readRecord(path) {
  let fd
  try {
    fd = openSync(path, 'r')
    const head = Buffer.alloc(256 * 1024)
    const n = readSync(fd, head, 0, head.length, 0)
    const text = head.subarray(0, n).toString('utf8')
    const eol = text.indexOf('\n')
    if (!text.startsWith(MARK) || eol < 0) return undefined
    const { sources, builder } = JSON.parse(text.slice(MARK.length, eol))
    return sources && typeof sources === 'object' ? { sources, builder } : undefined
  } catch {
    return undefined
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}

/**
 * A bundler of `entry` (relative to `root`, a folder path ending in a slash) into `out` (a file path): the project's is
 * `builder` below; tests build small projects of their own with it. `self`: the file whose change makes the bundle
 * stale as a source's would, this builder (a test gives one of its own).
 */
export function createBuilder({ root, entry, out, self = SELF }) {
  const builderStamp = () => `${stamp(self)}+${stamp(PLUGIN)}`

  /** True when the bundle exists and every source it was built from is unchanged. */
  function isCurrent() {
    const record = readRecord(out)
    if (!record || record.builder !== builderStamp()) return false
    for (const [rel, was] of Object.entries(record.sources)) {
      try {
        if (stamp(root + rel) !== was) return false
      } catch {
        return false // a source was removed or renamed
      }
    }
    return true
  }

  /** Builds the bundle (and its source map); resolves when both are in place. */
  async function build() {
    const esbuild = await import('esbuild')
    const result = await esbuild.build({
      absWorkingDir: root,
      entryPoints: [entry],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      metafile: true,
      sourcemap: 'linked',
      // Names are kept, so stack traces still name functions; the map gives the source lines.
      minifyWhitespace: true,
      charset: 'ascii',
      legalComments: 'none',
      write: false,
      outfile: out,
      logLevel: 'silent',
      plugins: [packagesPlugin, ownUrlPlugin(dirname(out))],
    })
    // Stamped after the build read them: a source edited meanwhile makes the bundle stale, never falsely current.
    const sources = {}
    for (const rel of Object.keys(result.metafile.inputs).sort()) sources[rel] = stamp(root + rel)
    mkdirSync(dirname(out), { recursive: true })
    // The map first, then the bundle: a process that sees the new bundle finds its map. The map's lines are the
    // bundle's shifted by the one line of the record.
    const files = [...result.outputFiles].sort((a, b) => Number(b.path.endsWith('.map')) - Number(a.path.endsWith('.map')))
    for (const file of files) {
      const tmp = `${file.path}.${process.pid}.tmp`
      try {
        if (file.path.endsWith('.map')) {
          const map = JSON.parse(file.text)
          map.mappings = ';' + map.mappings
          writeFileSync(tmp, JSON.stringify(map))
        } else {
          writeFileSync(tmp, MARK + JSON.stringify({ sources, builder: builderStamp() }) + '\n' + file.text)
        }
        renameSync(tmp, file.path)
      } catch (e) {
        try {
          unlinkSync(tmp)
        } catch {
          // nothing written
        }
        throw e
      }
    }
  }

  return { out, isCurrent, build }
}

const ROOT = fileURLToPath(new URL('../', import.meta.url))

/** The `orgscan` command: bin/cli/main.ts into dist/orgscan.mjs. */
export const builder = createBuilder({ root: ROOT, entry: 'bin/cli/main.ts', out: `${ROOT}dist/orgscan.mjs` })
/** Its help texts alone: bin/cli/help.ts into dist/help.mjs, which answers `orgscan --help`. */
export const helpBuilder = createBuilder({ root: ROOT, entry: 'bin/cli/help.ts', out: `${ROOT}dist/help.mjs` })

/** Builds the command's bundles that are not current; resolves with the paths of those built (relative to the root). */
export async function buildStale() {
  const stale = [builder, helpBuilder].filter((b) => !b.isCurrent())
  await Promise.all(stale.map((b) => b.build()))
  return stale.map((b) => relative(ROOT, b.out))
}

// `node scripts/build.js`: build both now and say so.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const t0 = Date.now()
  await Promise.all([builder.build(), helpBuilder.build()])
  process.stdout.write(`built ${relative(process.cwd(), builder.out)} and ${relative(process.cwd(), helpBuilder.out)} in ${Date.now() - t0} ms\n`)
}
