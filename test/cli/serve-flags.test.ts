/**
 * The served process's Node flags and environment (the C allocator's tunables) are written in two places a user
 * reaches — `npm start` and the shebang of bin/orgscan.js (the installed `orgscan` command) — and the bench measures
 * the service with `npm start`'s (test/bench/load.ts `SERVE_ARGS`, `SERVE_ENV`). They bound the memory of a busy
 * server (docs/adr/0018-v8-and-glibc-memory-flags.md); this keeps the two in step, and checks that a process started
 * with them runs the command and that its C library took the tunables.
 */
import { t } from '../helpers/file-test.ts'
import { existsSync, readFileSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { startCommand, startEnv, SERVE_ARGS, SERVE_ENV } from '../bench/load.ts'

const root = new URL('../../', import.meta.url).pathname

const TUNABLES = 'glibc.malloc.mmap_threshold=131072:glibc.malloc.trim_threshold=131072'

t.test('npm start and the command’s shebang pass the same Node flags and environment, and they bound the heap', async (t) => {
  const start = startCommand()
  const env = startEnv()
  t.same(env, { GLIBC_TUNABLES: TUNABLES }, 'the C allocator maps and unmaps blocks of 128 KB and more')
  t.equal(start[0], 'node')
  t.same(start.slice(-2), ['bin/orgscan.js', 'serve'], 'npm start serves')
  const flags = start.slice(1, -2)
  t.ok(flags.includes('--max-semi-space-size=2'), 'a young generation of at most 2 MB')
  t.ok(flags.includes('--heap-growing-percent=30'), 'an old generation that grows by 30 % between full collections')
  t.ok(flags.includes('--no-allocation-site-pretenuring'), 'no allocation straight into the old generation by allocation site')
  const shebang = readFileSync(new URL('../../bin/orgscan.js', import.meta.url), 'utf8').split('\n')[0]
  t.equal(shebang, `#!/usr/bin/env -S GLIBC_TUNABLES=${TUNABLES} node ${flags.join(' ')}`, 'the shebang passes the same')
  t.ok(shebang.length < 256, 'within the length Linux reads of a shebang line')
  t.same(SERVE_ARGS, [...flags, 'bin/orgscan.js', 'serve', '--json'], 'the bench serves with them')
  t.same(SERVE_ENV, env, 'and with the same environment')
})

t.test('Node accepts the flags: the command runs with them', async (t) => {
  const flags = startCommand().slice(1, -2)
  const r = spawnSync(process.execPath, [...flags, 'bin/orgscan.js', '--version'], { cwd: root, encoding: 'utf8' })
  t.equal(r.status, 0, r.stderr)
  t.match(r.stdout, /^orgscan \d+\.\d+\.\d+\n$/)
  t.equal(r.stderr, '', 'no warning about a flag')
})

t.test('the installed command runs through its shebang, environment included', async (t) => {
  const r = spawnSync(new URL('../../bin/orgscan.js', import.meta.url).pathname, ['--version'], { cwd: root, encoding: 'utf8' })
  t.equal(r.status, 0, r.stderr)
  t.match(r.stdout, /^orgscan \d+\.\d+\.\d+\n$/)
})

// glibc ignores a tunable it does not know, silently: ask its loader what it makes of ours. Where Node runs on glibc
// (process.report says so), the loader must be found; elsewhere (musl, macOS) the variable means nothing.
const glibc = (process.report.getReport() as { header: { glibcVersionRuntime?: string } }).header.glibcVersionRuntime
const loader = { x64: '/lib64/ld-linux-x86-64.so.2', arm64: '/lib/ld-linux-aarch64.so.1' }[process.arch as string]
t.test('the C library takes the tunables', { skip: glibc ? false : 'Node does not run on glibc here' }, async (t) => {
  t.ok(loader && existsSync(loader), `glibc's loader for ${process.arch} at ${loader}`)
  const r = spawnSync(loader!, ['--list-tunables'], { encoding: 'utf8', env: { ...process.env, ...SERVE_ENV } })
  t.equal(r.status, 0, r.stderr)
  t.match(r.stdout, /^glibc\.malloc\.mmap_threshold: 0x20000 /m, 'blocks of 128 KB and more are mapped')
  t.match(r.stdout, /^glibc\.malloc\.trim_threshold: 0x20000 /m, 'and the heap is given back past 128 KB free')
})
