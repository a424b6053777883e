/**
 * The served process's Node flags are written in two places a user reaches — `npm start` and the shebang of
 * bin/orgscan.js (the installed `orgscan` command) — and the bench measures the service with `npm start`'s
 * (test/bench/load.ts `SERVE_ARGS`). They bound the heap of a busy server (docs/decisions.md "Memory"); this keeps the
 * two in step, and checks that a process started with them runs the command.
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { startCommand, SERVE_ARGS } from './bench/load.ts'

const root = new URL('../', import.meta.url).pathname

t.test('npm start and the command’s shebang pass the same Node flags, and they bound the heap', async (t) => {
  const start = startCommand()
  t.equal(start[0], 'node')
  t.same(start.slice(-2), ['bin/orgscan.js', 'serve'], 'npm start serves')
  const flags = start.slice(1, -2)
  t.ok(flags.includes('--max-semi-space-size=8'), 'a young generation of at most 8 MB')
  t.ok(flags.includes('--heap-growing-percent=30'), 'an old generation that grows by 30 % between full collections')
  const shebang = readFileSync(new URL('../bin/orgscan.js', import.meta.url), 'utf8').split('\n')[0]
  t.equal(shebang, `#!/usr/bin/env -S node ${flags.join(' ')}`, 'the shebang passes the same flags')
  t.same(SERVE_ARGS, [...flags, 'bin/orgscan.js', 'serve', '--json'], 'the bench serves with them')
})

t.test('Node accepts the flags: the command runs with them', async (t) => {
  const flags = startCommand().slice(1, -2)
  const r = spawnSync(process.execPath, [...flags, 'bin/orgscan.js', '--version'], { cwd: root, encoding: 'utf8' })
  t.equal(r.status, 0, r.stderr)
  t.match(r.stdout, /^orgscan \d+\.\d+\.\d+\n$/)
  t.equal(r.stderr, '', 'no warning about a flag')
})
