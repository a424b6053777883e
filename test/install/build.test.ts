/**
 * The command runs compiled: scripts/build.js bundles the TypeScript sources into dist/orgscan.mjs (and the help texts
 * into dist/help.mjs) at install, and bin/orgscan.js runs the bundles, not the sources through tsx
 * (docs/adr/0020-compiled-ascii-bundle.md: tsx costs a served process about 45 MB). It never builds them: a bundle
 * older than its sources is not run, the sources run through tsx instead
 * (docs/adr/0130-dependency-patches-and-built-cli.md). Tested on a small project of the test's own, then on the
 * checkout and on a copy of it.
 */
import { type Test } from 'tap'
import { t } from '../helpers/file-test.ts'
import { spawn, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { createBuilder, builder, helpBuilder } from '../../scripts/build.js'
import { checkoutCopy } from '../helpers/checkout-copy.ts'
import { createTestDatabase } from '../helpers/test-db.ts'
import { spawnServer } from '../helpers/server-process.ts'

const root = new URL('../../', import.meta.url).pathname

/** A project: main.ts imports lib/note.ts, which reads lib/note.txt beside itself through import.meta.url. */
function project(dir: string) {
  mkdirSync(join(dir, 'lib'), { recursive: true })
  writeFileSync(join(dir, 'main.ts'), "import { note } from './lib/note.ts'\nexport const kind: string = 'compiled'\nexport function run(): string {\n  return note()\n}\n")
  writeFileSync(join(dir, 'lib/note.ts'), "import { readFileSync } from 'node:fs'\nexport const note = (): string => readFileSync(new URL('./note.txt', import.meta.url), 'utf8')\n")
  writeFileSync(join(dir, 'lib/note.txt'), 'beside the source')
  return createBuilder({ root: dir + '/', entry: 'main.ts', out: join(dir, 'dist/app.mjs') })
}

let imports = 0
const load = async (url: URL): Promise<{ run(): string; kind: string }> => import(`${url.href}?${++imports}`)

t.test('a bundle is built, runs, finds files beside its sources, and is rebuilt when a source changes', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'orgscan-build-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const b = project(dir)
  t.equal(b.isCurrent(), false, 'no bundle yet: not current')

  await b.build()
  const url = pathToFileURL(b.out)
  t.equal(b.isCurrent(), true, 'current once built')
  const first = await load(url)
  t.equal(first.kind, 'compiled')
  t.equal(first.run(), 'beside the source', 'import.meta.url of a source is its own, not the bundle’s')
  const text = readFileSync(join(dir, 'dist/app.mjs'), 'utf8')
  const record = JSON.parse(text.split('\n')[0].replace('// orgscan-build ', ''))
  t.same(Object.keys(record.sources), ['lib/note.ts', 'main.ts'], 'the first line records the sources')
  t.match(text, /\/\/# sourceMappingURL=app\.mjs\.map\n?$/, 'linked to its source map')
  const map = JSON.parse(readFileSync(join(dir, 'dist/app.mjs.map'), 'utf8'))
  t.same(map.sources.map((s: string) => s.replace(/^(\.\.\/)+/, '')).sort(), ['lib/note.ts', 'main.ts'])
  t.ok(map.mappings.startsWith(';'), 'the map skips the record’s line')

  // An edit (new content, new time) makes it stale; a build and the new code runs.
  writeFileSync(join(dir, 'lib/note.ts'), "import { readFileSync } from 'node:fs'\nexport const note = (): string => readFileSync(new URL('./note.txt', import.meta.url), 'utf8').toUpperCase()\n")
  t.equal(b.isCurrent(), false, 'an edited source makes it stale')
  await b.build()
  t.equal((await load(url)).run(), 'BESIDE THE SOURCE', 'rebuilt from the edited source')

  // Only the time changes (a checkout, a touch): stale too, by design — the size and time are what is compared.
  utimesSync(join(dir, 'main.ts'), new Date(), new Date(Date.now() + 5000))
  t.equal(b.isCurrent(), false, 'a newer modification time makes it stale')
  await b.build()
  t.equal(b.isCurrent(), true)

  // A source that does not compile: the build fails (as the install then does), the last good bundle stays whole.
  const good = readFileSync(join(dir, 'dist/app.mjs'), 'utf8')
  writeFileSync(join(dir, 'main.ts'), 'export function run( {\n')
  await t.rejects(b.build(), 'the build fails')
  t.equal(readFileSync(join(dir, 'dist/app.mjs'), 'utf8'), good, 'the previous bundle is untouched')
  t.same(readdirSync(join(dir, 'dist')).sort(), ['app.mjs', 'app.mjs.map'], 'no temporary file left behind')

  writeFileSync(join(dir, 'main.ts'), "import { note } from './lib/note.ts'\nexport const kind: string = 'compiled'\nexport function run(): string {\n  return note()\n}\n")
  await b.build()
  t.equal(b.isCurrent(), true, 'rebuilt once the source compiles')

  // A change to the builder makes its bundles stale (a stand-in for scripts/build.js, which other tests are using).
  const self = join(dir, 'builder.js')
  writeFileSync(self, '// version 1\n')
  const withBuilder = createBuilder({ root: dir + '/', entry: 'main.ts', out: join(dir, 'dist/app.mjs'), self })
  await withBuilder.build()
  t.equal(withBuilder.isCurrent(), true)
  writeFileSync(self, '// version 2\n')
  t.equal(withBuilder.isCurrent(), false, 'a changed builder makes it stale')
  await withBuilder.build()
  t.equal(withBuilder.isCurrent(), true, 'and it is rebuilt')

  // A removed source makes it stale.
  unlinkSync(join(dir, 'lib/note.ts'))
  t.equal(b.isCurrent(), false, 'a removed source makes it stale')
})

t.test('the bundle moves with its project: sources’ addresses are relative to it', async (t) => {
  const parent = mkdtempSync(join(tmpdir(), 'orgscan-build-'))
  t.teardown(() => rmSync(parent, { recursive: true, force: true }))
  const b = project(join(parent, 'here'))
  await b.build()
  renameSync(join(parent, 'here'), join(parent, 'there'))
  const moved = createBuilder({ root: join(parent, 'there') + '/', entry: 'main.ts', out: join(parent, 'there/dist/app.mjs') })
  t.equal(moved.isCurrent(), true, 'still current: the record is relative to the project')
  t.equal((await load(new URL(`file://${join(parent, 'there/dist/app.mjs')}`))).run(), 'beside the source')
})

t.test('processes that build at once (an install, a test run) leave one whole, current bundle', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'orgscan-build-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  project(dir)
  const script = `import { createBuilder } from ${JSON.stringify(root + 'scripts/build.js')}
const b = createBuilder({ root: ${JSON.stringify(dir + '/')}, entry: 'main.ts', out: ${JSON.stringify(join(dir, 'dist/app.mjs'))} })
await b.build()
const m = await import(${JSON.stringify(pathToFileURL(join(dir, 'dist/app.mjs')).href)})
process.stdout.write(m.run())`
  const runs = await Promise.all(
    Array.from({ length: 4 }, () => new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] })
      let out = ''
      child.stdout.on('data', (d) => (out += d))
      child.on('exit', (code) => resolve({ code, out }))
    })),
  )
  t.same(runs, Array(4).fill({ code: 0, out: 'beside the source' }), 'each process ran a whole bundle')
  t.equal(createBuilder({ root: dir + '/', entry: 'main.ts', out: join(dir, 'dist/app.mjs') }).isCurrent(), true)
  t.same(readdirSync(join(dir, 'dist')).sort(), ['app.mjs', 'app.mjs.map'], 'no temporary file left behind')
})

t.test('the checkout: the command’s bundle covers the sources it loads lazily, and bin/orgscan.js runs it, not TypeScript', async (t) => {
  t.equal(builder.isCurrent(), true, 'current: built at install, or by tap’s before script after an edit')
  const record = JSON.parse(readFileSync(builder.out, 'utf8').split('\n', 1)[0].replace('// orgscan-build ', ''))
  for (const source of ['bin/cli/main.ts', 'bin/cli/serve.ts', 'runtime/service/service.ts', 'runtime/surfaces/docs/generate.ts', 'resources/index.ts'])
    t.ok(record.sources[source], `${source} is in the bundle`)

  const hook = loadHook(t)
  // The hook sees TypeScript where it is loaded (else the check below could not fail).
  const control = hook.spawn(['--import', 'tsx', '--input-type=module', '-e', `await import(${JSON.stringify(root + 'bin/cli/args.ts')})`])
  t.equal(control.status, 0)
  t.match(control.loaded.join('\n'), /bin\/cli\/args\.ts/, 'control: a TypeScript import is recorded')

  const cmd = hook.spawn(['bin/orgscan.js', '--version'])
  t.equal(cmd.status, 0)
  t.match(cmd.stdout, /^orgscan /)
  t.equal(cmd.stderr, '', 'no notice: the bundle is current')
  t.same(cmd.loaded.filter((u) => u.endsWith('.ts')), [], 'the command loaded no TypeScript module')
  t.ok(cmd.loaded.includes(pathToFileURL(builder.out).href), 'it ran dist/orgscan.mjs')
  t.same(cmd.loaded.filter((u) => /\/node_modules\/(tsx|esbuild)\//.test(u)), [], 'neither tsx nor esbuild: nothing is compiled or built at start')
})

t.test('--help is answered by dist/help.mjs alone: not the command’s bundle, its packages, tsx or esbuild', async (t) => {
  t.equal(helpBuilder.isCurrent(), true)
  const hook = loadHook(t)
  for (const args of [['--help'], ['keys', '--help'], []]) {
    const h = hook.spawn(['bin/orgscan.js', ...args])
    t.equal(h.status, 0, `${args.join(' ')}: exit 0`)
    t.match(h.stdout, args[0] === 'keys' ? /^Usage:\n  orgscan keys create/ : /^orgscan — Organization Scan Data Service\n/)
    t.equal(h.stderr, '')
    t.ok(h.loaded.includes(pathToFileURL(helpBuilder.out).href), 'dist/help.mjs answered')
    t.same(h.loaded.filter((u) => u.includes('/node_modules/') || u.endsWith('.ts') || u === pathToFileURL(builder.out).href), [], 'nothing else of the command, and no package')
  }
})

t.test('the command never builds: a source edited after the build runs through tsx, after a notice, until `npm run build`', async (t) => {
  // On a copy of the checkout, so that the bundles the other tests run stay current.
  const dir = checkoutCopy(t)
  const hook = loadHook(t, dir)
  const bin = join(dir, 'bin/orgscan.js')
  const dist = () => readdirSync(join(dir, 'dist')).sort().map((f) => `${f} ${statSync(join(dir, 'dist', f)).mtimeMs} ${readFileSync(join(dir, 'dist', f), 'utf8').length}`)
  const control = hook.spawn([bin, '--help'])
  t.equal(control.stderr, '', 'control: the copy’s bundles are current')
  t.ok(control.loaded.includes(pathToFileURL(join(dir, 'dist/help.mjs')).href), 'control: it ran the copy’s dist/help.mjs')

  const built = dist()
  const help = join(dir, 'bin/cli/help.ts')
  writeFileSync(help, readFileSync(help, 'utf8').replace('orgscan — Organization Scan Data Service', 'orgscan — edited after the build'))
  const notice = 'orgscan: dist/help.mjs is not built from the current sources; running them through tsx (`npm run build` compiles them)\n'
  const edited = hook.spawn([bin, '--help'])
  t.equal(edited.status, 0)
  t.match(edited.stdout, /^orgscan — edited after the build\n/, 'the edited source ran, not the bundle')
  t.equal(edited.stderr, notice, 'with a notice naming the stale bundle and `npm run build`')
  t.ok(edited.loaded.some((u) => u.includes('/node_modules/tsx/')), 'through tsx')
  // help.ts is a source of the command's bundle too: a command runs its sources, with one notice.
  const version = hook.spawn([bin, '--version'])
  t.equal(version.status, 0)
  t.match(version.stdout, /^orgscan \d/)
  t.equal(version.stderr, notice, 'one notice')
  t.notOk(version.loaded.includes(pathToFileURL(join(dir, 'dist/orgscan.mjs')).href), 'the stale dist/orgscan.mjs did not run')
  t.same(dist(), built, 'no bundle was written (tsx compiles the sources in memory)')

  // `npm run build`: current again, and the bundle runs the edit.
  const r = spawnSync(process.execPath, [join(dir, 'scripts/build.js')], { cwd: dir, encoding: 'utf8' })
  t.equal(r.status, 0, r.stderr)
  const rebuilt = hook.spawn([bin, '--help'])
  t.match(rebuilt.stdout, /^orgscan — edited after the build\n/)
  t.equal(rebuilt.stderr, '', 'no notice')
  t.same(rebuilt.loaded.filter((u) => u.includes('/node_modules/')), [], 'no tsx')
})

t.test('a served process loads no TypeScript, nor the packages only some commands need', async (t) => {
  const hook = loadHook(t)
  const db = await createTestDatabase({ template: 'empty' })
  t.teardown(() => db.drop())
  const server = await spawnServer({
    ...process.env,
    DATABASE_URL: db.databaseUrl,
    ORGSCAN_DATA_DIR: db.dataDir,
    ORGSCAN_PEPPER: 'build-test-pepper-0123456789abcdefghij',
    ORGSCAN_SEED_DEMO: 'false',
    NODE_OPTIONS: `--import=${hook.register}`,
    TS_LOG: hook.log,
  })
  t.equal((await fetch(`${server.url}/healthz`)).status, 200, 'serving')
  t.equal((await fetch(`${server.url}/v1/orgs`)).status, 401, 'answering the API')
  await server.stop()
  const loaded = readFileSync(hook.log, 'utf8').split('\n').filter(Boolean)
  const packages = new Set(loaded.flatMap((u) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(u)?.[1] ?? []))
  t.ok(packages.has('postgres') && packages.has('find-my-way'), 'control: the packages it serves with are recorded')
  t.same(loaded.filter((u) => u.endsWith('.ts')), [], 'no TypeScript module')
  t.notOk(packages.has('nodemailer'), 'nodemailer: only `orgscan versions notify` sends e-mail')
  t.notOk(packages.has('undici'), 'undici: only a sign-in through an upstream provider calls out')
  t.notOk(packages.has('tsx'), 'no tsx')
  t.notOk(packages.has('valibot'), 'valibot: the part of it the sources use is in the bundle, not its 400 KB')
  for (const p of ['@modelcontextprotocol/server', '@modelcontextprotocol/core', 'zod'])
    t.notOk(packages.has(p), `${p}: in the bundle, in ASCII and without comments (its own files hold non-Latin-1 characters)`)
})

t.test('the bundle is compact: ASCII (V8 keeps it at a byte a character), without comments', async (t) => {
  t.equal(builder.isCurrent(), true)
  const text = readFileSync(builder.out, 'utf8')
  t.notOk(/[^\x00-\x7f]/.test(text), 'no character beyond ASCII: one would make V8 keep the whole source at two bytes a character')
  t.notOk(text.includes('docs/adr/0020-compiled-ascii-bundle.md'), 'no comment (a phrase of the sources’ comments is not in it)')
  // The project's own sources are about 700 KB with their comments, the MCP SDK and zod files it loaded about 2 MB.
  t.ok(statSync(builder.out).size < 1_500_000, `smaller than the 2.7 MB of sources it replaces (${statSync(builder.out).size} bytes)`)
})

/** A module-loading hook (node:module register) that appends every module URL a process loads to a file; spawned in `cwd`. */
function loadHook(t: Test, cwd = root) {
  const dir = mkdtempSync(join(tmpdir(), 'orgscan-build-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'hooks.mjs'), "import { appendFileSync } from 'node:fs'\nexport async function load(url, context, next) {\n  appendFileSync(process.env.TS_LOG, url + '\\n')\n  return next(url, context)\n}\n")
  writeFileSync(join(dir, 'register.mjs'), "import { register } from 'node:module'\nregister('./hooks.mjs', import.meta.url)\n")
  const log = join(dir, 'loaded.log')
  writeFileSync(log, '')
  return {
    register: join(dir, 'register.mjs'),
    log,
    spawn(args: string[]) {
      writeFileSync(log, '')
      const r = spawnSync(process.execPath, ['--import', join(dir, 'register.mjs'), ...args], { cwd, encoding: 'utf8', env: { ...process.env, TS_LOG: log } })
      return { status: r.status, stdout: r.stdout, stderr: r.stderr, loaded: readFileSync(log, 'utf8').split('\n').filter(Boolean) }
    },
  }
}
