#!/usr/bin/env -S GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072:glibc.malloc.trim_threshold=131072 node --max-semi-space-size=2 --heap-growing-percent=30 --no-allocation-site-pretenuring
// The `orgscan` command. The code is TypeScript; it runs compiled, as the bundles `npm install` builds (scripts/build.js):
// dist/help.mjs answers --help from the help texts alone, dist/orgscan.mjs is every command. Nothing is built here: a
// bundle older than the sources it was built from (an edited checkout) is not run, the sources run through tsx instead,
// after a notice to run `npm run build` (docs/adr/0130-dependency-patches-and-built-cli.md).
// Its Node flags bound the heap of a busy server: a young generation of 2 MB semi-spaces, and an old
// generation allowed to grow 30 % past what survived its last full collection instead of V8's 1.1–4× — together about
// 100 MB less under load. Without pretenuring by allocation site, no process settles into a full collection every
// 200 ms for its life, as about one in four did with it (12–15 % fewer requests). GLIBC_TUNABLES fixes the C allocator's thresholds at 128 KB, so blocks that large are mapped
// and unmapped instead of staying in its heap (about 7 MB less under load). `npm start` passes the same; see
// docs/operating.md "Memory" and docs/adr/0018-v8-and-glibc-memory-flags.md.
import { pathToFileURL } from 'node:url'
import { builder, helpBuilder } from '../scripts/build.js'

let tsx = false
/** The module bundled by `b` while it is current, else its TypeScript `source` (relative to this file) through tsx. */
async function load(b, source) {
  if (b.isCurrent()) return import(pathToFileURL(b.out).href)
  if (!tsx) {
    const bundle = b.out.slice(b.out.lastIndexOf('/dist/') + 1)
    process.stderr.write(`orgscan: ${bundle} is not built from the current sources; running them through tsx (\`npm run build\` compiles them)\n`)
    const { register } = await import('tsx/esm/api')
    register()
    tsx = true
  }
  return import(source)
}

const argv = process.argv.slice(2)
const { helpFor } = await load(helpBuilder, './cli/help.ts')
const help = helpFor(argv)
if (help !== undefined) {
  process.stdout.write(help + '\n')
  process.exit(0)
}
const { run } = await load(builder, './cli/main.ts')
const code = await run(argv, {
  out: (line) => void process.stdout.write(line + '\n'),
  err: (line) => void process.stderr.write(line + '\n'),
  env: process.env,
  stdout: process.stdout,
  terminal: process.stderr.isTTY ? { write: (s) => void process.stderr.write(s), columns: process.stderr.columns } : undefined,
  confirm: process.stdin.isTTY && process.stderr.isTTY
    ? async (question) => {
        const { createInterface } = await import('node:readline/promises')
        const rl = createInterface({ input: process.stdin, output: process.stderr })
        try {
          return /^y(es)?$/i.test((await rl.question(question)).trim())
        } finally {
          rl.close()
        }
      }
    : undefined,
  stdin: async () => {
    let text = ''
    for await (const chunk of process.stdin) text += chunk
    return text
  },
})
// A running server keeps the process alive (its listener); every other command ends here.
if (code !== 0) process.exit(code)
