/**
 * The command runs compiled: scripts/build.js bundles the TypeScript sources into dist/orgscan.mjs, rebuilds it when a
 * source changes, and bin/orgscan.js runs the bundle, not the sources through tsx
 * (docs/adr/0020-compiled-ascii-bundle.md: tsx costs a served process about 45 MB). Tested on a small project of the
 * test's own, then on the checkout.
 */
import { type Test } from 'tap'
import { t } from '../helpers/file-test.ts'
import { spawn, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createBuilder, builder } from '../../scripts/build.js'
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

  const url = await b.ensureBuilt()
  t.ok(url, 'built')
  t.equal(b.isCurrent(), true, 'current once built')
  const first = await load(url!)
  t.equal(first.kind, 'compiled')
  t.equal(first.run(), 'beside the source', 'import.meta.url of a source is its own, not the bundle’s')
  const text = readFileSync(join(dir, 'dist/app.mjs'), 'utf8')
  const record = JSON.parse(text.split('\n')[0].replace('// orgscan-build ', ''))
  t.same(Object.keys(record.sources), ['lib/note.ts', 'main.ts'], 'the first line records the sources')
  t.match(text, /\/\/# sourceMappingURL=app\.mjs\.map\n?$/, 'linked to its source map')
  const map = JSON.parse(readFileSync(join(dir, 'dist/app.mjs.map'), 'utf8'))
  t.same(map.sources.map((s: string) => s.replace(/^(\.\.\/)+/, '')).sort(), ['lib/note.ts', 'main.ts'])
  t.ok(map.mappings.startsWith(';'), 'the map skips the record’s line')

  // An edit (new content, new time) makes it stale; ensureBuilt rebuilds and the new code runs.
  writeFileSync(join(dir, 'lib/note.ts'), "import { readFileSync } from 'node:fs'\nexport const note = (): string => readFileSync(new URL('./note.txt', import.meta.url), 'utf8').toUpperCase()\n")
  t.equal(b.isCurrent(), false, 'an edited source makes it stale')
  await b.ensureBuilt()
  t.equal((await load(url!)).run(), 'BESIDE THE SOURCE', 'rebuilt from the edited source')

  // Only the time changes (a checkout, a touch): stale too, by design — the size and time are what is compared.
  utimesSync(join(dir, 'main.ts'), new Date(), new Date(Date.now() + 5000))
  t.equal(b.isCurrent(), false, 'a newer modification time makes it stale')
  await b.ensureBuilt()
  t.equal(b.isCurrent(), true)

  // A source that does not compile: no bundle can be built, the caller falls back, the last good bundle stays whole.
  const good = readFileSync(join(dir, 'dist/app.mjs'), 'utf8')
  writeFileSync(join(dir, 'main.ts'), 'export function run( {\n')
  t.equal(await b.ensureBuilt(), undefined, 'undefined: the caller runs the sources instead')
  t.equal(readFileSync(join(dir, 'dist/app.mjs'), 'utf8'), good, 'the previous bundle is untouched')
  t.same(readdirSync(join(dir, 'dist')).sort(), ['app.mjs', 'app.mjs.map'], 'no temporary file left behind')

  writeFileSync(join(dir, 'main.ts'), "import { note } from './lib/note.ts'\nexport const kind: string = 'compiled'\nexport function run(): string {\n  return note()\n}\n")
  await b.ensureBuilt()
  t.equal(b.isCurrent(), true, 'rebuilt once the source compiles')

  // A change to the builder makes its bundles stale (a stand-in for scripts/build.js, which other tests are using).
  const self = join(dir, 'builder.js')
  writeFileSync(self, '// version 1\n')
  const withBuilder = createBuilder({ root: dir + '/', entry: 'main.ts', out: join(dir, 'dist/app.mjs'), self })
  await withBuilder.build()
  t.equal(withBuilder.isCurrent(), true)
  writeFileSync(self, '// version 2\n')
  t.equal(withBuilder.isCurrent(), false, 'a changed builder makes it stale')
  await withBuilder.ensureBuilt()
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

t.test('processes that build at once leave one whole, current bundle', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'orgscan-build-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  project(dir)
  const script = `import { createBuilder } from ${JSON.stringify(root + 'scripts/build.js')}
const b = createBuilder({ root: ${JSON.stringify(dir + '/')}, entry: 'main.ts', out: ${JSON.stringify(join(dir, 'dist/app.mjs'))} })
const url = await b.ensureBuilt()
const m = await import(url.href)
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
  t.ok(await builder.ensureBuilt(), 'built')
  t.equal(builder.isCurrent(), true)
  const record = JSON.parse(readFileSync(builder.out, 'utf8').split('\n', 1)[0].replace('// orgscan-build ', ''))
  for (const source of ['bin/cli/main.ts', 'bin/cli/serve.ts', 'runtime/service.ts', 'runtime/docs/generate.ts', 'resources/index.ts'])
    t.ok(record.sources[source], `${source} is in the bundle`)

  const hook = loadHook(t)
  // The hook sees TypeScript where it is loaded (else the check below could not fail).
  const control = hook.spawn(['--import', 'tsx', '--input-type=module', '-e', `await import(${JSON.stringify(root + 'bin/cli/args.ts')})`])
  t.equal(control.status, 0)
  t.match(control.loaded.join('\n'), /bin\/cli\/args\.ts/, 'control: a TypeScript import is recorded')

  const cmd = hook.spawn(['bin/orgscan.js', '--version'])
  t.equal(cmd.status, 0)
  t.match(cmd.stdout, /^orgscan /)
  t.same(cmd.loaded.filter((u) => u.endsWith('.ts')), [], 'the command loaded no TypeScript module')
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
  t.ok(await builder.ensureBuilt(), 'built')
  const text = readFileSync(builder.out, 'utf8')
  t.notOk(/[^\x00-\x7f]/.test(text), 'no character beyond ASCII: one would make V8 keep the whole source at two bytes a character')
  t.notOk(text.includes('docs/adr/0020-compiled-ascii-bundle.md'), 'no comment (a phrase of the sources’ comments is not in it)')
  // The project's own sources are about 700 KB with their comments, the MCP SDK and zod files it loaded about 2 MB.
  t.ok(statSync(builder.out).size < 1_500_000, `smaller than the 2.7 MB of sources it replaces (${statSync(builder.out).size} bytes)`)
})

/** A module-loading hook (node:module register) that appends every module URL a process loads to a file. */
function loadHook(t: Test) {
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
      const r = spawnSync(process.execPath, ['--import', join(dir, 'register.mjs'), ...args], { cwd: root, encoding: 'utf8', env: { ...process.env, TS_LOG: log } })
      return { status: r.status, stdout: r.stdout, loaded: readFileSync(log, 'utf8').split('\n').filter(Boolean) }
    },
  }
}
