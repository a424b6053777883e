/**
 * The typed client as a user gets it (docs/adr/0160-client-package.md): `npm pack ./client` builds `@orgscan/client`
 * and packs it; a new project outside the repository installs the tarball from npm's cache; there, the README's example
 * runs as a plain ES module on this Node against the real service, the CommonJS build answers `require`, and the
 * example type-checks as TypeScript (strict, node16 and bundler resolution) while a wrong field does not. The
 * package depends on undici alone, carries the API document's version, and builds to the same bytes again.
 */
import { t } from '../helpers/file-test.ts'
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { OrgscanClient } from '../../client/index.ts'
import { createKey } from '../../runtime/platform/admin.ts'
import { startTestService } from '../helpers/service.ts'
import { embeddedRunOnly } from '../helpers/runs.ts'

embeddedRunOnly(t, 'The client package')

const root = realpathSync(fileURLToPath(new URL('../../', import.meta.url)))
const readme = readFileSync(join(root, 'README.md'), 'utf8')
const rootPackage = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
const openapi = JSON.parse(readFileSync(join(root, 'docs/openapi.json'), 'utf8'))
const typescript = join(root, 'node_modules/typescript/bin/tsc')

// A user's shell in the new project: without what `npm test` tells its scripts about this repository (its package,
// lifecycle and local prefix) or the test runner's Node options; npm's own settings (cache, registry) stay.
const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_(config_local_prefix$|package_|lifecycle_|command$)/i.test(k) && k !== 'NODE_OPTIONS'))
env.FORCE_COLOR = '0'

/** Runs a command without blocking this process, which serves the example's requests. */
async function run(cmd: string, args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(cmd, args, { cwd, env, encoding: 'utf8', timeout: 60_000, maxBuffer: 16 * 1024 * 1024 })
    return { code: 0, stdout, stderr }
  } catch (e) {
    const err = e as { code?: number | string; stdout?: string; stderr?: string }
    return { code: typeof err.code === 'number' ? err.code : -1, stdout: err.stdout ?? '', stderr: err.stderr ?? String(e) }
  }
}

const example = readme.match(/```js\n(import \{ OrgscanClient \} from '@orgscan\/client'\n[\s\S]*?)```/)?.[1]
t.ok(example, "the README's example imports the package")
t.ok(example!.split('\n').filter(Boolean).length <= 5, 'in five lines')

const dir = realpathSync(mkdtempSync(join(tmpdir(), 'orgscan-client-package-')))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const project = join(dir, 'project')

/** `npm pack ./client`, as the README says, into the temporary folder; then a new project installs the tarball. */
async function packAndInstall() {
  const packed = await run('npm', ['pack', './client', '--pack-destination', dir, '--json'], root)
  if (packed.code !== 0) throw new Error(`npm pack failed:\n${packed.stderr}`)
  const [info] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as Array<{ filename: string; files: Array<{ path: string }> }>
  mkdirSync(project)
  // The project's TypeScript needs Node's types, as any TypeScript project on Node has: the version of this repository's.
  const typesNode = JSON.parse(readFileSync(join(root, 'node_modules/@types/node/package.json'), 'utf8')).version as string
  writeFileSync(join(project, 'package.json'), JSON.stringify({
    name: 'a-new-project', version: '1.0.0', private: true, type: 'module',
    dependencies: { '@orgscan/client': `file:${join(dir, info.filename)}` },
    devDependencies: { '@types/node': typesNode },
  }, null, 2))
  const installed = await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], project)
  if (installed.code !== 0) throw new Error(`npm install failed:\n${installed.stderr}`)
  return info
}

const [ts, packed] = await Promise.all([startTestService(t), packAndInstall()])
const org = ts.seed.orgs.find((o) => o.large)!
const key = await createKey(ts.svc.db.sql, ts.svc.pepper, org.accountId)
const installedDir = join(project, 'node_modules/@orgscan/client')
const manifest = JSON.parse(readFileSync(join(installedDir, 'package.json'), 'utf8'))

t.test('the tarball: dist/ and the manifest only, the API version, undici its one dependency', async (t) => {
  t.notOk(project.startsWith(root + '/'), 'the project is outside the repository')
  t.same(packed.files.map((f) => f.path).sort(), ['dist/generated.d.cts', 'dist/generated.d.ts', 'dist/index.cjs', 'dist/index.d.cts', 'dist/index.d.ts', 'dist/index.js', 'package.json'], 'built files only, no sources')
  t.equal(manifest.name, '@orgscan/client', 'the package is @orgscan/client')
  t.equal(manifest.version, openapi.info.version, "the version is the OpenAPI document's info.version")
  t.equal(packed.filename, `orgscan-client-${manifest.version}.tgz`, 'the tarball is named by the package and version')
  t.ok(readme.includes(`npm install ~/orgscan/${packed.filename}`), 'the README installs the tarball npm pack writes')
  t.ok(readFileSync(join(root, 'docs/getting-started.md'), 'utf8').includes(packed.filename), 'and so does the getting-started guide')
  t.same(manifest.dependencies, { undici: rootPackage.dependencies.undici }, 'undici, in the range the service itself uses')
  for (const k of ['peerDependencies', 'optionalDependencies', 'bundleDependencies', 'bundledDependencies']) t.notOk(manifest[k], `no ${k}`)
  // What npm installed for the package (dev entries are the project's own @types/node and its types).
  const lock = JSON.parse(readFileSync(join(project, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> }
  t.same(Object.keys(lock.packages).filter((p) => p && !lock.packages[p].dev).sort(), ['node_modules/@orgscan/client', 'node_modules/undici'], 'the install brought undici and nothing else')
  const built = readFileSync(join(installedDir, 'dist/index.js'), 'utf8') + readFileSync(join(installedDir, 'dist/index.cjs'), 'utf8')
  const imported = [...built.matchAll(/(?:from |require\()"([^"./][^"]*)"/g)].map((m) => m[1])
  t.same([...new Set(imported)].sort(), ['undici'], 'the built code imports undici only (no node: module, nothing bundled from the repository)')
})

t.test("the README's example runs as a plain ES module in the new project", async (t) => {
  const file = join(project, 'example.mjs')
  writeFileSync(file, example!.replace("'http://127.0.0.1:3000'", JSON.stringify(ts.url)).replace("'osk_…'", JSON.stringify(key.keyId)).replace("secret: '…'", `secret: ${JSON.stringify(key.secret)}`))
  const out = await run(process.execPath, [file], project)
  t.equal(out.code, 0, `node example.mjs exits 0 ${out.stderr}`)
  const lines = out.stdout.trim().split('\n')
  // What it should print, asked through the client's sources.
  const orgscan = new OrgscanClient({ baseUrl: ts.url, apiKey: { keyId: key.keyId, secret: key.secret } })
  const [first] = (await orgscan.listOrgs({ filter: 'eq(lastScanStatus,completed)' })).data
  const custom: string[] = []
  for await (const f of orgscan.allOrgFields({ orgId: first.salesforceId, filter: 'eq(isCustom,true)' })) custom.push(f.apiName)
  t.ok(custom.length > 0, `the first org has custom fields (${custom.length})`)
  t.same(lines.slice(0, -1), custom, 'it printed every custom field of the first org, in order')
  t.match(lines.at(-1), /^\d+$/, 'then the remaining daily quota')
})

t.test('require() gets the CommonJS build, which answers too', async (t) => {
  const script = `const { OrgscanClient, OrgscanError } = require('@orgscan/client')
const c = new OrgscanClient({ baseUrl: ${JSON.stringify(ts.url)}, apiKey: { keyId: ${JSON.stringify(key.keyId)}, secret: 'wrong' } })
c.listOrgs().catch((e) => console.log(e instanceof OrgscanError, e.status, e.code))`
  writeFileSync(join(project, 'check.cjs'), script)
  const out = await run(process.execPath, [join(project, 'check.cjs')], project)
  t.equal(out.stdout.trim(), 'true 401 unauthorized', `a typed error from the CommonJS build ${out.stderr}`)
})

t.test("the example type-checks as TypeScript with the package's declarations; a wrong field does not", async (t) => {
  writeFileSync(join(project, 'example.ts'), example!)
  writeFileSync(join(project, 'wrong.ts'), example!.replace('field.apiName', 'field.apiNam'))
  writeFileSync(join(project, 'check.cts'), "import { OrgscanClient } from '@orgscan/client'\nconst c = new OrgscanClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: { keyId: 'k', secret: 's' } })\nexport const names: Promise<string[]> = c.listOrgs().then((p) => p.data.map((o) => o.name))\n")
  const flags = ['--noEmit', '--strict', '--target', 'es2022']
  for (const [module, resolution] of [['node16', 'node16'], ['esnext', 'bundler']]) {
    const files = resolution === 'bundler' ? ['example.ts', 'wrong.ts'] : ['example.ts', 'wrong.ts', 'check.cts']
    const out = await run(process.execPath, [typescript, ...flags, '--module', module, '--moduleResolution', resolution, ...files], project)
    const errors = out.stdout.split('\n').filter((l) => /error TS/.test(l))
    t.same(errors.map((l) => l.replace(/\(.*$/, '')), ['wrong.ts'], `${resolution}: the example and the CommonJS use compile, the wrong field is the one error${errors.length === 1 ? '' : `\n${out.stdout}`}`)
    t.match(errors[0], /apiNam.*apiName/, 'the record is typed: it names the field meant')
  }
})

t.test('a second build gives the same bytes', async (t) => {
  // From another folder than npm's (client/): the output does not depend on where the build starts.
  const out = await run(process.execPath, [join(root, 'client/build.mjs')], root)
  t.equal(out.code, 0, out.stderr)
  const hash = (d: string) => Object.fromEntries(readdirSync(d).sort().map((f) => [f, createHash('sha256').update(readFileSync(join(d, f))).digest('hex')]))
  t.same(hash(join(root, 'client/dist')), hash(join(installedDir, 'dist')), 'client/dist rebuilt equals the installed dist/')
})
