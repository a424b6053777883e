// An esbuild plugin for bundles of this project's TypeScript (scripts/build.js, test/helpers/test-bundles.mjs): in each
// source, `import.meta.url` becomes that source's own URL, derived from the bundle's, so modules that find files beside
// themselves (`new URL('./migrations/', import.meta.url)`) keep doing so, and the bundle may move with the checkout.
//
// The source is compiled first with `import.meta.url` defined as a name of its own, which esbuild substitutes only
// where the expression is code (not inside a string or a comment), and that name is declared at the top of the
// compiled module. The compiled module carries its source map, which esbuild folds into the bundle's.
import { readFile } from 'node:fs/promises'
import { relative } from 'node:path'

const OWN_URL = '__orgscan_own_url'

/** The plugin for a bundle written into the folder `outdir`. */
export function ownUrlPlugin(outdir) {
  return {
    name: 'orgscan-own-url',
    setup(b) {
      // The project's modules, TypeScript or JavaScript (packages stay imports and are not loaded).
      b.onLoad({ filter: /\.[cm]?[jt]s$/ }, async (args) => {
        const source = await readFile(args.path, 'utf8')
        const loader = args.path.endsWith('ts') ? 'ts' : 'js'
        if (!source.includes('import.meta.url')) return { contents: source, loader }
        const esbuild = await import('esbuild')
        const rel = relative(outdir, args.path).split('\\').join('/')
        const { code } = await esbuild.transform(source, {
          loader,
          format: 'esm',
          target: 'node20',
          sourcemap: 'inline',
          sourcefile: args.path,
          define: { 'import.meta.url': OWN_URL },
          banner: `const ${OWN_URL} = new URL(${JSON.stringify(rel)}, import.meta.url).href;`,
        })
        return { contents: code, loader: 'js' }
      })
    },
  }
}
