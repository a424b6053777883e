#!/usr/bin/env -S node --max-semi-space-size=8
// The `orgscan` command. The code is TypeScript, loaded through tsx. A young generation of at most 8 MB keeps a
// busy server about 30 MB smaller at no cost in throughput (docs/decisions.md "Memory"); `npm start` passes it too.
import { register } from 'tsx/esm/api'

register()
const { run } = await import('./cli/main.ts')
const code = await run(process.argv.slice(2), {
  out: (line) => void process.stdout.write(line + '\n'),
  err: (line) => void process.stderr.write(line + '\n'),
  env: process.env,
  stdout: process.stdout,
  terminal: process.stderr.isTTY ? { write: (s) => void process.stderr.write(s), columns: process.stderr.columns } : undefined,
  stdin: async () => {
    let text = ''
    for await (const chunk of process.stdin) text += chunk
    return text
  },
})
// A running server keeps the process alive (its listener); every other command ends here.
if (code !== 0) process.exit(code)
