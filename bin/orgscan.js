#!/usr/bin/env -S GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072:glibc.malloc.trim_threshold=131072 node --max-semi-space-size=2 --heap-growing-percent=30 --no-allocation-site-pretenuring
// The `orgscan` command. The code is TypeScript; it runs as dist/orgscan.mjs, compiled from the sources by
// scripts/build.js and rebuilt here first whenever a source has changed, or through tsx where no bundle can be written
// (a read-only checkout). Its Node flags bound the heap of a busy server: a young generation of 2 MB semi-spaces, and an old
// generation allowed to grow 30 % past what survived its last full collection instead of V8's 1.1–4× — together about
// 100 MB less under load. Without pretenuring by allocation site, no process settles into a full collection every
// 200 ms for its life, as about one in four did with it (12–15 % fewer requests). GLIBC_TUNABLES fixes the C allocator's thresholds at 128 KB, so blocks that large are mapped
// and unmapped instead of staying in its heap (about 7 MB less under load). `npm start` passes the same; see
// docs/operating.md "Memory" and docs/decisions.md "Memory".
import { builder } from '../scripts/build.js'

const bundle = await builder.ensureBuilt()
let run
if (bundle) ({ run } = await import(bundle.href))
else {
  const { register } = await import('tsx/esm/api')
  register()
  ;({ run } = await import('./cli/main.ts'))
}
const code = await run(process.argv.slice(2), {
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
