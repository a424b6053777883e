/**
 * What every test process runs with (package.json "tap"): tap's `node-arg` passes test/helpers/tap-quiet.cjs first,
 * then tsx and the flags every process a test starts gets (test/helpers/node-flags.ts); tap-quiet turns off tap's
 * process-info hook in test processes and keeps it out of the processes they start
 * (docs/adr/0045-test-processes-bundled-and-grouped.md). The hook sets a global when it is loaded, so a child can say
 * whether it runs in it. Each test file runs as its bundle built for the run (test-bundles.mjs), started by tap-quiet
 * in place of the file without the `--import`s; other TypeScript is compiled by the loader (ts-hooks.mjs).
 */
import t from 'tap'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { TEST_NODE_FLAGS } from './helpers/node-flags.ts'
import { runId } from './helpers/templates.ts'
import { embeddedRunOnly } from './helpers/runs.ts'

embeddedRunOnly(t, 'The test processes’ flags')

const root = new URL('../', import.meta.url).pathname
// Read as CommonJS at run time (a bundle cannot inline a module that calls require).
const { bundlesDir, bundleName, MANIFEST } = createRequire(import.meta.url)('./helpers/bundle-paths.cjs') as { bundlesDir(run: string): string; bundleName(rel: string): string; MANIFEST: string }
const HOOK_GLOBAL = 'Symbol.for("@tapjs/processinfo.ProcessInfoNodeData")'
const hookImport = import.meta.resolve('@tapjs/processinfo/import')

/** Whether a plain `node` child started from this process (with this process's environment) runs tap's hook. */
function childHasHook(env: NodeJS.ProcessEnv = process.env): string {
  const r = spawnSync(process.execPath, ['-p', `typeof globalThis[${HOOK_GLOBAL}] + ' ' + (process.env.NODE_OPTIONS ?? '')`], { cwd: root, env, encoding: 'utf8' })
  if (r.status !== 0) throw new Error(r.stderr)
  return r.stdout.trim()
}

t.test('tap passes tap-quiet first, then the TypeScript loader and the flags of every process the tests start', async (t) => {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
  t.same(pkg.tap['node-arg'], ['--require=./test/helpers/tap-quiet.cjs', '--import=./test/helpers/ts-loader.mjs', ...TEST_NODE_FLAGS])
  t.ok(process.execArgv.includes('--require=./test/helpers/tap-quiet.cjs') || !runId(), 'this process was started with them')
})

t.test('the process-info hook records nothing here and reaches no child', { skip: runId() ? false : 'outside tap: no hook to turn off' }, async (t) => {
  t.equal(process.env._TAPJS_PROCESSINFO_EXCLUDE_, '/./', 'nothing would be recorded in this process')
  t.equal(typeof (globalThis as Record<symbol, unknown>)[Symbol.for('@tapjs/processinfo.ProcessInfoNodeData')], 'undefined', 'a bundled test file does not load the hook at all')
  t.notMatch(process.env.NODE_OPTIONS ?? '', /processinfo/, 'NODE_OPTIONS does not name the hook')
  t.equal(childHasHook(), 'undefined', 'a child started with this environment runs without the hook')
  t.equal(childHasHook({ ...process.env, NODE_OPTIONS: `--import=${hookImport}` }).split(' ')[0], 'object', 'control: a child given the hook has it')
})

t.test('a test file runs as its bundle, built once for the run by the before script', { skip: runId() ? false : 'outside tap: the sources run' }, async (t) => {
  // Without source maps, a stack names the file that really runs.
  process.setSourceMapsEnabled(false)
  const stack = new Error('here').stack ?? ''
  process.setSourceMapsEnabled(true)
  t.match(stack, new RegExp(`/node_modules/\\.cache/orgscan-test-bundles/${runId()}/test__test-processes\\.test\\.mjs:`))
  const mapped = new Error('here').stack ?? ''
  t.match(mapped, /\/test\/test-processes\.test\.ts:\d+/, 'with source maps, the TypeScript source')
  t.equal(process.argv[1], `${root}test/test-processes.test.ts`, 'the process still names the test file tap started')
})

t.test('a test file with a bundle runs without module hooks; one without a bundle runs through the loader', { skip: runId() ? false : 'outside tap: the sources run' }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'orgscan-entry-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'probe.test.ts')
  writeFileSync(file, "const n: number = 1\nconsole.log(typeof (globalThis as Record<symbol, unknown>)[Symbol.for('@tapjs/processinfo.ProcessInfoNodeData')], n)\n")
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
  const r = spawnSync(process.execPath, [`--import=${hookImport}`, ...pkg.tap['node-arg'], file], { cwd: root, encoding: 'utf8' })
  t.equal(r.status, 0, r.stderr)
  t.equal(r.stdout.trim(), 'object 1', 'no bundle: Node starts it, with the --imports (the hook, the TypeScript loader)')
})

t.test('tap-quiet starts a bundle in place of its test file as Node starts an entry point: exit codes and errors', async (t) => {
  // A run of this process's own (its pid, as a child's parent): a manifest and bundles for made-up test files.
  const run = String(process.pid)
  const dir = bundlesDir(run)
  mkdirSync(dir, { recursive: true })
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const bundles: Record<string, string> = {
    ran: "console.log('the bundle ran', process.argv[1].endsWith('/test/probe-ran.test.ts'))",
    exits: "console.log('before'); process.exit(0); console.log('after')",
    throws: "throw new Error('thrown at the top')",
    hangs: "console.log('waiting'); await new Promise(() => {})",
    'throws-later': [
      "import t from 'tap'",
      "import { createHook } from 'node:async_hooks'",
      'let inits = 0',
      'createHook({ init() { inits++ }, destroy() {} }).enable()',
      'await Promise.resolve()',
      "console.log('refused', globalThis[Symbol.for('orgscan.tap-quiet.refusedDomainHooks')], 'another hook works', inits > 0)",
      "t.test('passes', async (t) => t.pass('fine'))",
      "t.test('throws in a timer', async () => { setTimeout(() => { throw new Error('thrown in a timer') }, 1); await new Promise((r) => setTimeout(r, 200)) })",
    ].join('\n'),
  }
  for (const [name, code] of Object.entries(bundles)) writeFileSync(dir + bundleName(`test/probe-${name}.test.ts`), code)
  writeFileSync(dir + MANIFEST, JSON.stringify(Object.keys(bundles).map((n) => bundleName(`test/probe-${n}.test.ts`))))
  const start = (name: string) =>
    spawnSync(process.execPath, ['--require=./test/helpers/tap-quiet.cjs', `test/probe-${name}.test.ts`], { cwd: root, encoding: 'utf8', env: { ...process.env, TAP_BEFORE: '1' } })
  const ran = start('ran')
  t.equal(ran.status, 0, ran.stderr)
  t.equal(ran.stdout, 'the bundle ran true\n', 'the bundle runs (no .ts file exists), and the process names the test file')
  const exits = start('exits')
  t.same([exits.status, exits.stdout, exits.stderr], [0, 'before\n', ''], 'process.exit(0) part way through: 0')
  const throws = start('throws')
  t.equal(throws.status, 1, 'a throw at the top: 1')
  t.match(throws.stderr, /Error: thrown at the top/, 'with the error')
  const hangs = start('hangs')
  t.equal(hangs.status, 13, 'a top-level await that never settles: 13, as Node gives')
  t.match(hangs.stderr, /test\/probe-hangs\.test\.ts: its top-level await never settled/)
  // tap's async-hook-domain hook is refused (tap-quiet.cjs): a throw outside a test's promise fails the file instead
  const later = start('throws-later')
  t.match(later.stdout, /^refused 1 another hook works true$/m, 'the domain hook refused, a hook of anyone else made')
  t.match(later.stdout, /^ {4}ok 1 - fine$/m, 'a passing test still passes')
  t.not(later.status, 0, 'a throw in a timer ends the file with a failure')
  t.match(later.stderr, /Error: thrown in a timer/, 'with the error')
})

t.test('this process runs without the async hook of tap’s domains', { skip: runId() ? false : 'outside tap: tap-quiet is not loaded' }, async (t) => {
  t.equal((globalThis as Record<symbol, unknown>)[Symbol.for('orgscan.tap-quiet.refusedDomainHooks')], 1, 'tap asked for it once and was refused')
})

t.test('a group runs the files of its folder in one process: each a subtest of its own, in name order, torn down before the next', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'orgscan-group-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  mkdirSync(join(dir, 'g'))
  const helper = JSON.stringify(new URL('./helpers/file-test.ts', import.meta.url).pathname)
  const files: Record<string, string> = {
    'a.test.ts': `import { t } from ${helper}\nt.teardown(() => console.log('# a torn down'))\nt.test('a1', async (t) => t.pass('a passes'))\n`,
    'b.test.ts': `import { t, endFile } from ${helper}\nt.plan(0, 'not on this run')\nendFile()\nconsole.log('# b went on after endFile')\n`,
    'c.test.ts': `import { t } from ${helper}\nt.test('c1', async (t) => t.fail('c fails'))\n`,
    'd.test.ts': `import { t } from ${helper}\nconsole.log('# d starts')\nt.test('d1', async (t) => t.pass('d passes'))\n`,
    'e.test.ts': `throw new Error('thrown at the top of e')\n`,
    'f.test.ts': `import { t } from ${helper}\nt.test('f1', async (t) => t.pass('f passes'))\n`,
    'notes.ts': `throw new Error('not a test file: never loaded')\n`,
  }
  for (const [name, code] of Object.entries(files)) writeFileSync(join(dir, 'g', name), code)
  writeFileSync(join(dir, 'g.test.ts'), `import { runGroup } from ${helper}\nawait runGroup(new URL('./g/', import.meta.url), (name) => import(\`./g/\${name}.test.ts\`))\n`)
  const r = spawnSync(process.execPath, ['--import=./test/helpers/ts-loader.mjs', join(dir, 'g.test.ts')], { cwd: root, encoding: 'utf8', env: { ...process.env, TAP_BEFORE: '' } })
  const results = [...r.stdout.matchAll(/^(ok|not ok) (\d+) - \S*\/g\/(\w+)\.test\.ts( # SKIP .*)?/gm)].map((m) => `${m[1]} ${m[2]} ${m[3]}${m[4] ?? ''}`)
  t.same(results, ['ok 1 a', 'ok 2 b # SKIP not on this run', 'not ok 3 c', 'ok 4 d', 'not ok 5 e', 'ok 6 f'], 'every file, in name order, with its own result; the group goes on after a failure')
  t.notMatch(r.stdout, /b went on after endFile/, 'endFile ends the file there')
  t.match(r.stdout, /thrown at the top of e/, 'a throw at the top of a file fails that file, with the error')
  t.ok(r.stdout.indexOf('# a torn down') >= 0 && r.stdout.indexOf('# a torn down') < r.stdout.indexOf('# d starts'), 'a file is torn down before the next one starts')
  t.equal(r.status, 1, 'a failed file fails the group')

  writeFileSync(join(dir, 'alone.test.ts'), `import { t, endFile } from ${helper}\nt.plan(0, 'not on this run')\nendFile()\nconsole.log('went on')\n`)
  const alone = spawnSync(process.execPath, ['--import=./test/helpers/ts-loader.mjs', join(dir, 'alone.test.ts')], { cwd: root, encoding: 'utf8', env: { ...process.env, TAP_BEFORE: '' } })
  t.same([alone.status, /^1\.\.0 # not on this run$/m.test(alone.stdout), alone.stdout.includes('went on')], [0, true, false], 'a file run as its own process: endFile exits with 0 after its plan')
})

t.test('tap starts the files directly under test/ and those of test/alone/ (each with the machine to itself); every other folder of test files is a group one of them runs', async (t) => {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
  t.same(pkg.tap.include, ['test/*.test.ts', 'test/alone/*.test.ts'], 'tap starts only the files directly under test/ and test/alone/')
  t.same(pkg.tap.serial, ['test/alone'], 'the files of test/alone/ run while no other test file runs')
  t.ok(readdirSync(new URL('./alone/', import.meta.url)).some((n) => n.endsWith('.test.ts')), 'test/alone/ holds a test file')
  const folders = readdirSync(new URL('./', import.meta.url), { withFileTypes: true }).filter((e) => e.isDirectory() && e.name !== 'alone').map((e) => e.name)
  const groups = folders.filter((f) => readdirSync(new URL(`./${f}/`, import.meta.url), { recursive: true }).some((n) => String(n).endsWith('.test.ts')))
  t.ok(groups.length >= 5, `the groups: ${groups.join(', ')}`)
  for (const g of [...groups, 'alone']) {
    const nested = readdirSync(new URL(`./${g}/`, import.meta.url), { recursive: true }).map(String).filter((n) => n.endsWith('.test.ts') && n.includes('/'))
    t.same(nested, [], `test/${g}/: no test file in a folder of its own (tap would not start it, and no group runs it)`)
  }
  for (const g of groups) {
    let runner = ''
    try {
      runner = readFileSync(new URL(`./${g}.test.ts`, import.meta.url), 'utf8')
    } catch {
      // no runner: fails below
    }
    t.match(runner, `await runGroup(new URL('./${g}/', import.meta.url), (name) => import(\`./${g}/\${name}.test.ts\`))`, `test/${g}.test.ts runs test/${g}/`)
  }
})

t.test('outside a bundle, TypeScript is compiled, and a source edited is compiled again in place of its older compile', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'orgscan-ts-loader-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'probe.ts')
  const cacheDir = join(root, 'node_modules/.cache/orgscan-ts')
  const prefix = createHash('sha256').update(pathToFileURL(file).href).digest('hex').slice(0, 32)
  const compiles = () => readdirSync(cacheDir).filter((f) => f.startsWith(`${prefix}.`))
  const run = (value: number) => {
    writeFileSync(file, `const value: number = ${value}\nexport type Unused = { a: string }\nconsole.log(value satisfies number)\n`)
    const r = spawnSync(process.execPath, ['--import=./test/helpers/ts-loader.mjs', file], { cwd: root, encoding: 'utf8', env: { ...process.env, TAP_BEFORE: '' } })
    t.equal(r.status, 0, r.stderr)
    return r.stdout.trim()
  }
  t.equal(run(1), '1', 'types removed, the module ran')
  t.equal(compiles().length, 1, 'one compile kept')
  t.equal(run(2), '2', 'the edit is what runs')
  t.equal(compiles().length, 1, 'and it replaced the older compile')
})
