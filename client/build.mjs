/**
 * Builds the package @orgscan/client into dist/: `npm pack ./client` runs it (prepack), and the tarball holds only
 * dist/ and package.json (docs/adr/0160-client-package.md).
 *
 * - dist/index.js (ES module) and dist/index.cjs (CommonJS), each one file bundled by esbuild from index.ts and
 *   generated.ts, undici left an import;
 * - dist/index.d.ts, dist/generated.d.ts and their CommonJS twins (.d.cts), declared by the TypeScript compiler,
 *   whose relative `.ts` imports are pointed at the built files.
 *
 * esbuild and typescript come from the repository's node_modules (found upward from here). The output depends on the
 * sources and those two tools only, so a build from the same commit gives the same bytes.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const here = dirname(fileURLToPath(import.meta.url))
const dist = join(here, 'dist')
const { name, version } = JSON.parse(readFileSync(join(here, 'package.json'), 'utf8'))

rmSync(dist, { recursive: true, force: true })
mkdirSync(dist)

for (const [format, file] of [['esm', 'index.js'], ['cjs', 'index.cjs']]) {
  await build({
    entryPoints: [join(here, 'index.ts')],
    // The paths esbuild writes in comments are relative to this folder, wherever the build is started from.
    absWorkingDir: here,
    outfile: join(dist, file),
    bundle: true,
    platform: 'node',
    target: 'node20',
    format,
    external: ['undici'],
    banner: { js: `// ${name} ${version}: the typed client of the orgscan REST API.` },
    logLevel: 'warning',
  })
}

// Declarations: the compiler keeps the sources' `./generated.ts` imports as written; each set gets its own extension.
const tsc = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin/tsc')
const declared = mkdtempSync(join(tmpdir(), 'orgscan-client-types-'))
try {
  execFileSync(process.execPath, [
    tsc, '--ignoreConfig', '--declaration', '--emitDeclarationOnly', '--outDir', declared,
    '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--strict', '--skipLibCheck',
    '--allowImportingTsExtensions', '--types', 'node', '--removeComments', 'false', join(here, 'index.ts'),
  ], { cwd: here, stdio: ['ignore', 'inherit', 'inherit'] })
  for (const file of readdirSync(declared).filter((f) => f.endsWith('.d.ts')).sort()) {
    const text = readFileSync(join(declared, file), 'utf8')
    const pointed = (ext) => text.replace(/(from '\.\/[A-Za-z0-9_-]+)\.ts'/g, `$1.${ext}'`)
    writeFileSync(join(dist, file), pointed('js'))
    writeFileSync(join(dist, file.replace(/\.d\.ts$/, '.d.cts')), pointed('cjs'))
  }
} finally {
  rmSync(declared, { recursive: true, force: true })
}
process.stderr.write(`${name} ${version}: built ${readdirSync(dist).sort().join(', ')} into ${dist}\n`)
