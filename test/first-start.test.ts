/**
 * The first start of `orgscan serve` on a new data folder (what `npm start` does for a new user), killed with SIGKILL at
 * points of its own progress: while PGlite creates the database, in the middle of the demo seed, and at the seed's end
 * before it commits. Every later start must serve the complete demo (every demo org, a working demo key and sign-in),
 * once; and everything in the folder stays private (no group or other permission bit) though each process runs with
 * umask 000.
 */
import { t } from './helpers/file-test.ts'
import type { Test } from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, lstatSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { DEMO_ORG_DEFS } from '../demo/seed.ts'
import { embeddedRunOnly } from './helpers/runs.ts'
import { runCli } from './helpers/cli.ts'
import { scratchFolderPrefix } from './helpers/test-db.ts'
import { TEST_NODE_FLAGS } from './helpers/node-flags.ts'

embeddedRunOnly(t, "The embedded database's first start")

const bin = new URL('../bin/orgscan.js', import.meta.url).pathname
const parent = mkdtempSync(scratchFolderPrefix())
t.teardown(() => rmSync(parent, { recursive: true, force: true }))
/** Created by the first start itself, as `./data` is. */
const dir = join(parent, 'data')
const env: NodeJS.ProcessEnv = { ...process.env, ORGSCAN_DATA_DIR: dir, ORGSCAN_SEED_SCALE: '0.02' }
for (const name of ['ORGSCAN_PEPPER', 'ORGSCAN_SEED_DEMO', 'DATABASE_URL', 'NODE_OPTIONS']) delete env[name]

interface Start {
  child: ChildProcess
  stdout(): string
  stderr(): string
  exited: Promise<number | null>
}

/** `orgscan serve` on the folder, under umask 000 (set by a shell that then becomes the server). */
function serve(): Start {
  const child = spawn('/bin/sh', ['-c', 'umask 000 && exec "$0" "$@"', process.execPath, ...TEST_NODE_FLAGS, bin, 'serve', '--port', '0', '--json'], { env })
  let out = ''
  let err = ''
  child.stdout!.on('data', (d) => (out += d))
  child.stderr!.on('data', (d) => (err += d))
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)))
  return { child, stdout: () => out, stderr: () => err, exited }
}

/**
 * Resolves once `ready()` holds (polled), or rejects when the process exits first, serves first (unless `serving` is
 * what is awaited), or the time is up.
 */
async function until(s: Start, what: string, ready: () => boolean, serving = false, ms = 90_000): Promise<void> {
  let gone = false
  void s.exited.then(() => (gone = true))
  const end = Date.now() + ms
  while (!ready()) {
    if (!serving && s.stdout().includes('{')) throw new Error(`orgscan serve was serving before ${what}: this start did not seed the demo again`)
    if (gone) throw new Error(`orgscan serve exited before ${what}: ${s.stderr().trim().split('\n').slice(-3).join(' | ')}`)
    if (Date.now() > end) throw new Error(`no ${what} within ${ms} ms: ${s.stderr().trim().split('\n').slice(-3).join(' | ')}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

/** Files and folders under `root` (itself included) with a group or other permission bit. */
function notPrivate(root: string): string[] {
  const found: string[] = []
  const visit = (p: string) => {
    const st = lstatSync(p)
    if (st.isSymbolicLink()) return
    if ((st.mode & 0o077) !== 0) found.push(`${p.slice(root.length) || '/'} ${(st.mode & 0o777).toString(8)}`)
    if (st.isDirectory()) for (const name of readdirSync(p)) visit(join(p, name))
  }
  if (existsSync(root)) visit(root)
  return found
}

/** Starts, kills with SIGKILL once `ready()` holds, and checks the folder is private. */
async function killAt(t: Test, what: string, ready: (s: Start) => boolean): Promise<Start> {
  const s = serve()
  t.teardown(() => void s.child.kill('SIGKILL'))
  await until(s, what, () => ready(s))
  s.child.kill('SIGKILL')
  await s.exited
  t.notOk(s.stdout().includes('{'), `killed ${what}, before serving`)
  t.same(notPrivate(dir), [], `after a kill ${what}, nothing in the folder is open to the group or others`)
  return s
}

const acmeOrgs = DEMO_ORG_DEFS.filter((d) => d.account === 'acme').map((d) => d.salesforceId).sort()

t.test('a first start killed anywhere leaves a folder the next start serves completely', async (t) => {
  await killAt(t, 'while PGlite creates the database', () => existsSync(join(dir, 'base')))
  const mid = await killAt(t, 'in the middle of the demo seed', (s) => /^ {2}seeding /m.test(s.stderr()))
  t.match(mid.stderr(), /stopped without closing it: what it had not committed was rolled back/, 'the start after a kill says what was lost')
  await killAt(t, 'at the end of the seed, before its commit', (s) => s.stderr().includes('seeded 2 accounts, 6 orgs'))

  const s = serve()
  t.teardown(() => void s.child.kill('SIGKILL'))
  await until(s, 'the banner', () => s.stdout().includes('\n'), true)
  const info = JSON.parse(s.stdout()) as { url: string; demoKey: { keyId: string; secret: string } | null; demoSignIn: { email: string } | null }
  // The last kill aims between the seed's last line and its commit, a few milliseconds apart: when the kill lands after
  // the commit, that start left a complete demo, which this start serves as it is (either outcome is a whole demo).
  if (/First start: seeding demo data/.test(s.stderr())) {
    t.match(s.stderr(), /an earlier first start was interrupted: reclaiming the \d+ MB its rolled-back seed left/, 'the start after the kills seeds the demo, after vacuuming what the killed one left')
  } else t.comment('the last kill landed after the seed had committed: its demo is served as it is')
  t.ok(info.demoKey, 'a demo key is printed')
  t.ok(info.demoSignIn, 'the demo user can sign in')
  const auth = 'Basic ' + Buffer.from(`${info.demoKey!.keyId}:${info.demoKey!.secret}`).toString('base64')
  const r = await fetch(`${info.url}/v1/orgs?limit=50`, { headers: { authorization: auth } })
  t.equal(r.status, 200, 'the demo key works')
  const orgs = ((await r.json()) as { data: Array<{ salesforceId: string }> }).data.map((o) => o.salesforceId).sort()
  t.same(orgs, acmeOrgs, "every org of the demo key's account is served")
  s.child.kill('SIGTERM')
  t.equal(await s.exited, 0)

  const listed = await runCli(['accounts', 'list', '--json'], env)
  t.equal(listed.code, 0, listed.stderr)
  const accounts = JSON.parse(listed.stdout) as Array<{ name: string; orgs: string[] }>
  t.same(accounts.map((a) => a.name), ['Acme Corp', 'Globex'], 'the demo accounts, once')
  t.same(accounts.flatMap((a) => a.orgs).sort(), DEMO_ORG_DEFS.map((d) => d.salesforceId).sort(), 'all six demo orgs')
  t.same(notPrivate(dir), [], 'nothing in the served folder is open to the group or others')
})
