/**
 * The first start of `orgscan serve` on a new data folder (what `npm start` does for a new user), killed with SIGKILL at
 * points of its own progress: while PGlite creates the database, in the middle of the demo seed, and at the seed's end
 * before it commits. Every later start must serve the complete demo (every demo org, a working demo key and sign-in),
 * once; and everything in the folder stays private (no group or other permission bit) though each process runs with
 * umask 000. The large demo org is seeded after the banner, in the background: meanwhile the demo is answered and
 * that org's reads are a 503; a start stopped or killed during it leaves it to the next start, which completes it.
 */
import { t } from './helpers/file-test.ts'
import type { Test } from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, lstatSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { demoBundle, DEMO_ORG_DEFS } from '../demo/seed.ts'
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
  exited: Promise<number | string | null>
}

/** `orgscan serve` on the folder, under umask 000 (set by a shell that then becomes the server). */
function serve(environment: NodeJS.ProcessEnv = env): Start {
  const child = spawn('/bin/sh', ['-c', 'umask 000 && exec "$0" "$@"', process.execPath, ...TEST_NODE_FLAGS, bin, 'serve', '--port', '0', '--json'], { env: environment })
  let out = ''
  let err = ''
  child.stdout!.on('data', (d) => (out += d))
  child.stderr!.on('data', (d) => (err += d))
  // A signal's name where the process ended by one (its code is then null), so that a failure says which.
  const exited = new Promise<number | string | null>((r) => child.once('exit', (code, signal) => r(code ?? signal)))
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

t.test('the first start answers the demo before its large org is seeded; a start stopped or killed during that seed leaves it to the next start, which completes it', async (t) => {
  // Large enough that seeding the large org after the banner takes a while on any machine (two scans of ~2,000 fields).
  const scale = 0.1
  const big = DEMO_ORG_DEFS.find((d) => d.large)!
  const folder = mkdtempSync(scratchFolderPrefix())
  t.teardown(() => rmSync(folder, { recursive: true, force: true }))
  const env2: NodeJS.ProcessEnv = { ...env, ORGSCAN_DATA_DIR: join(folder, 'data'), ORGSCAN_SEED_SCALE: String(scale) }
  const started = async (what: string) => {
    const s = serve(env2)
    t.teardown(() => void s.child.kill('SIGKILL'))
    await until(s, `the banner of ${what}`, () => s.stdout().includes('\n'), true)
    const info = JSON.parse(s.stdout()) as { url: string; demoKey: { keyId: string; secret: string }; seeding?: string }
    const auth = 'Basic ' + Buffer.from(`${info.demoKey.keyId}:${info.demoKey.secret}`).toString('base64')
    const get = (path: string) => fetch(`${info.url}${path}`, { headers: { authorization: auth } })
    return { s, info, get }
  }
  const staged = (s: Start) => s.stderr().includes(`staged ${big.info.name}: scan 1/${big.scans.length}`)

  const a = await started('the first start')
  t.match(a.info.seeding, /Acme Production, the large demo org, is being seeded in the background/, 'the banner says the large org is still being seeded')
  const orgs = await a.get('/v1/orgs?limit=50')
  t.equal(orgs.status, 200, 'the demo curl is answered while the large org is seeded')
  t.same(((await orgs.json()) as { data: Array<{ salesforceId: string }> }).data.map((o) => o.salesforceId).sort(), acmeOrgs, 'every org of the account is listed, the large one too')
  const pending = await a.get(`/v1/orgs/${big.salesforceId}/fields?limit=5`)
  t.equal(pending.status, 503, 'a read of the large org meanwhile is a 503, not a 404 or a 500')
  t.equal(pending.headers.get('retry-after'), '5', 'with a Retry-After')
  t.match(await pending.json(), { error: { code: 'service_unavailable', detail: /Acme Production's demo data is still being seeded/ } }, 'saying why')
  const other = await a.get(`/v1/orgs/${DEMO_ORG_DEFS.find((d) => d.key === 'acme-emea')!.salesforceId}/fields?limit=5`)
  t.equal(other.status, 200, 'the other orgs are served')
  const ready = await fetch(`${a.info.url}/readyz`)
  t.equal(ready.status, 200, 'the process is ready')
  t.match(await ready.json(), { status: 'ready', seeding: [/Acme Production \(\w{18}\): demo data still being seeded/] }, '/readyz lists what is still being seeded')
  await until(a.s, 'the first scan of the large org staged', () => staged(a.s), true)
  a.s.child.kill('SIGTERM')
  t.equal(await a.s.exited, 0, 'SIGTERM during the background seed stops the server cleanly')
  t.match(a.s.stderr(), /Stopped seeding Acme Production \(\w{18}\): the next start seeds it again/)

  const b = await started('the start after a stop')
  t.match(b.info.seeding, /being seeded in the background/, 'the next start seeds the large org again')
  await until(b.s, 'the first scan of the large org staged again', () => staged(b.s), true)
  t.match(b.s.stderr(), /removed the \d+ unpublished scans an interrupted start had staged/, 'after removing what the stopped start had staged')
  b.s.child.kill('SIGKILL')
  await b.s.exited

  const c = await started('the start after a kill')
  await until(c.s, 'the large org seeded', () => c.s.stderr().includes('Seeded the large demo org'), true)
  t.match(c.s.stderr(), /removed the \d+ unpublished scans an interrupted start had staged/, 'the start after a kill removes what it had staged')
  const fields = await c.get(`/v1/orgs/${big.salesforceId}/fields?limit=1`)
  t.equal(fields.status, 200, 'once seeded, the large org is served')
  const expected = demoBundle(big, big.scans.length - 1, { scale }).data.fields as unknown[]
  t.equal(((await fields.json()) as { meta: { total: number } }).meta.total, expected.length, 'its latest scan, whole and once')
  const org = await c.get(`/v1/orgs/${big.salesforceId}`)
  t.match(await org.json(), { data: { scanCount: big.scans.length, lastScanStatus: 'completed' } }, 'with every scan of its history')
  t.same(await (await fetch(`${c.info.url}/readyz`)).json(), { status: 'ready' }, '/readyz no longer lists it')
  c.s.child.kill('SIGTERM')
  t.equal(await c.s.exited, 0)
  const d = await started('a later start')
  t.equal(d.info.seeding, undefined, 'a later start has nothing left to seed')
  d.s.child.kill('SIGTERM')
  t.equal(await d.s.exited, 0, `a later start drains and exits 0 on SIGTERM (its stderr: ${d.s.stderr().trim().split('\n').slice(-4).join(' | ')})`)
})
