/**
 * The manifest of the typed client's package (client/package.json), written by `orgscan docs` like client/generated.ts
 * so that its version cannot drift from the API document's: `@orgscan/client` carries `API_VERSION`, the OpenAPI
 * `info.version`. Its one dependency, undici, takes the range (and Node the engines) of the repository's own
 * package.json. `npm pack ./client` builds `dist/` first (client/build.mjs) and packs only it
 * (docs/adr/0160-client-package.md).
 */
import { readFileSync } from 'node:fs'
import { API_VERSION } from './openapi.ts'

/** The repository's package.json, whose undici range and Node engines the client shares. */
const ROOT_PACKAGE = new URL('../../../package.json', import.meta.url)

export function clientPackageJson(): string {
  const root = JSON.parse(readFileSync(ROOT_PACKAGE, 'utf8')) as { dependencies: Record<string, string>; engines: { node: string }; license: string }
  const manifest = {
    '//': 'Written by `orgscan docs` (npm run regen) from runtime/surfaces/docs/client-package.ts; do not edit. The version is the API document\'s (docs/openapi.json info.version).',
    name: '@orgscan/client',
    version: API_VERSION,
    description: 'Typed client of the orgscan REST API: one method per endpoint, typed records, every page, backoff on 429.',
    license: root.license,
    type: 'module',
    engines: { node: root.engines.node },
    // ESM for `import`, CommonJS for `require` (Node 20 cannot require an ES module), each with its own declarations.
    exports: {
      '.': {
        import: { types: './dist/index.d.ts', default: './dist/index.js' },
        require: { types: './dist/index.d.cts', default: './dist/index.cjs' },
      },
      './package.json': './package.json',
    },
    main: './dist/index.cjs',
    types: './dist/index.d.ts',
    files: ['dist'],
    sideEffects: false,
    scripts: { prepack: 'node build.mjs' },
    dependencies: { undici: root.dependencies.undici },
  }
  return JSON.stringify(manifest, null, 2) + '\n'
}
