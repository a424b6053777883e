/**
 * postgres.js is patched on `npm install` by patch-package from patches/postgres+3.4.9.patch (patches/README.md), and
 * the command refuses to open a database on an unpatched copy (runtime/platform/db/driver-check.ts). On a copy of the checkout
 * whose postgres.js is a copy of its own (test/helpers/checkout-copy.ts): patch-package takes the patch off and puts it
 * back, a copy it does not apply to fails the install, and the command refuses the unpatched driver. What the patches
 * do is tested by test/db/postgres-queue.test.ts and test/processes/rest-faults.test.ts.
 */
import { t } from '../helpers/file-test.ts'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { checkoutCopy } from '../helpers/checkout-copy.ts'
import { TEST_NODE_FLAGS } from '../helpers/node-flags.ts'
import { driverPatchProblem } from '../../runtime/platform/db/driver-check.ts'

const root = new URL('../../', import.meta.url).pathname
const patchPackage = join(root, 'node_modules/patch-package/index.js')
const PATCHED = ['src/connection.js', 'src/queue.js', 'cjs/src/connection.js', 'cjs/src/queue.js']
const read = (dir: string, rel: string) => readFileSync(join(dir, 'node_modules/postgres', rel), 'utf8')

// Not as on CI, where patch-package fails on a patch that does not apply even without --error-on-fail.
const env: NodeJS.ProcessEnv = { ...process.env, FORCE_COLOR: '0' }
delete env.CI

/** patch-package with `args`, in `dir`. */
function patchPackageIn(dir: string, ...args: string[]) {
  const r = spawnSync(process.execPath, [patchPackage, ...args], { cwd: dir, encoding: 'utf8', env })
  return { status: r.status, output: r.stdout + r.stderr }
}

/** What `npm install` runs once the packages are in place: package.json's "postinstall", in `dir`. */
function postinstallIn(dir: string) {
  const r = spawnSync('npm', ['run', '--silent', 'postinstall'], { cwd: dir, encoding: 'utf8', timeout: 120_000, env })
  return { status: r.status, output: r.stdout + r.stderr }
}

/** The command in `dir`, on an embedded database of its own. */
function command(dir: string, args: string[]) {
  const data = mkdtempSync(join(tmpdir(), 'orgscan-driver-'))
  try {
    const env: NodeJS.ProcessEnv = { ...process.env, ORGSCAN_DATA_DIR: join(data, 'db'), ORGSCAN_PEPPER: 'driver-test-pepper-0123456789abcdefghij', ORGSCAN_SEED_DEMO: 'false' }
    delete env.DATABASE_URL
    const r = spawnSync(process.execPath, [...TEST_NODE_FLAGS, join(dir, 'bin/orgscan.js'), ...args], { encoding: 'utf8', timeout: 60_000, env })
    return { status: r.status, stdout: r.stdout, stderr: r.stderr }
  } finally {
    rmSync(data, { recursive: true, force: true })
  }
}

t.test('the installed driver is patched: the check passes', async (t) => {
  t.equal(driverPatchProblem(), undefined)
  for (const rel of PATCHED) t.match(read(root, rel), /\/\* orgscan: /, `${rel} carries the patch`)
})

t.test('patch-package takes the patch off and applies it again; one that does not apply fails; the command refuses an unpatched driver', async (t) => {
  const dir = checkoutCopy(t)
  const entry = pathToFileURL(join(dir, 'node_modules/postgres/src/index.js'))
  t.equal(driverPatchProblem(entry), undefined, 'the copy starts patched, as installed')

  const off = patchPackageIn(dir, '--reverse')
  t.equal(off.status, 0, off.output)
  for (const rel of PATCHED) t.notMatch(read(dir, rel), /orgscan/, `${rel}: postgres.js 3.4.9 as published`)
  t.match(driverPatchProblem(entry), /connection\.js lacks \/\* orgscan: a failed query is no longer current \*\//, 'the check names what is missing')

  // The command refuses to open a database on it, before any database is opened: a command and the server alike.
  const migrate = command(dir, ['migrate'])
  t.equal(migrate.status, 1)
  t.match(migrate.stderr, /^orgscan: postgres\.js is not patched: run npm install \(.*node_modules\/postgres\/src\/connection\.js lacks /)
  const serve = command(dir, ['serve', '--port', '0', '--json'])
  t.equal(serve.status, 1, 'serve exits')
  t.equal(serve.stdout, '', 'it never announced a server')
  t.match(serve.stderr, /postgres\.js is not patched: run npm install/)

  // A release whose code the patch no longer matches fails the install (patch-package --error-on-fail).
  const pristine = read(dir, 'src/connection.js')
  writeFileSync(join(dir, 'node_modules/postgres/src/connection.js'), pristine.replace('    query && queryError(query, err)\n', '    query && queryError(query, err) // changed upstream\n'))
  const failed = postinstallIn(dir)
  t.not(failed.status, 0, 'the install fails')
  t.match(failed.output, /postgres/, 'naming the package')
  writeFileSync(join(dir, 'node_modules/postgres/src/connection.js'), pristine)

  // Installed again, the copy is the installed driver, byte for byte, and the command runs.
  const on = postinstallIn(dir)
  t.equal(on.status, 0, 'the install succeeds')
  t.match(on.output, /postgres@3\.4\.9 ✔/, 'patch-package applied the patch')
  for (const rel of PATCHED) t.equal(read(dir, rel), read(root, rel), `${rel} as installed`)
  t.equal(driverPatchProblem(entry), undefined)
  const again = command(dir, ['migrate', '--json'])
  t.equal(again.status, 0, again.stderr)
  t.match(JSON.parse(again.stdout), { version: Number })
})
