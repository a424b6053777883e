/**
 * The `orgscan` command: JSON output, errors as one line with a non-zero exit (2 for usage), and — while a server holds
 * the embedded database — accounts, keys and import carried out by that server through its admin socket. Commands run
 * in process (`run`, the whole command); one test runs the real executable end to end.
 */
import t from 'tap'
import { spawn } from 'node:child_process'
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createTestDatabase } from './helpers/test-db.ts'
import { findTemplate } from './helpers/templates.ts'
import { spawnServer } from './helpers/server-process.ts'
import { demoBundle } from '../demo/bundle.ts'
import { DEMO_ORG_DEFS } from '../demo/orgs.ts'
import { run as cli } from '../bin/cli/main.ts'

const bin = new URL('../bin/orgscan.js', import.meta.url).pathname
const tdb = await createTestDatabase({ template: 'empty' })
t.teardown(() => tdb.drop())
const env: Record<string, string | undefined> = { ...process.env, ORGSCAN_PEPPER: 'cli-test-pepper-0123456789abcdefghij', DATABASE_URL: undefined }
if (tdb.databaseUrl) env.DATABASE_URL = tdb.databaseUrl
else env.ORGSCAN_DATA_DIR = tdb.dataDir!

/** A data folder of its own, migrated and empty (a copy of the run's template: PGlite's initdb is db-embedded's test). */
function migratedFolder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'orgscan-cli-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const template = findTemplate('empty', false)
  if (template) cpSync(template.dir, dir, { recursive: true })
  return dir
}

/** Runs the command in this process, as bin/orgscan.js would. */
async function run(args: string[], extraEnv: Record<string, string | undefined> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = ''
  let stderr = ''
  const code = await cli(args, { out: (l) => (stdout += l + '\n'), err: (l) => (stderr += l + '\n'), env: { ...env, ...extraEnv } })
  return { code, stdout, stderr }
}

/** Runs the real executable (node + tsx + the command), as a user would. */
function spawnCli(args: string[], extraEnv: Record<string, string | undefined> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const clean = Object.fromEntries(Object.entries({ ...env, ...extraEnv }).filter(([, v]) => v !== undefined)) as NodeJS.ProcessEnv
    const p = spawn(process.execPath, [bin, ...args], { env: clean })
    let stdout = ''
    let stderr = ''
    p.stdout.on('data', (d) => (stdout += d))
    p.stderr.on('data', (d) => (stderr += d))
    p.on('exit', (code) => resolve({ code: code ?? -1, stdout, stderr }))
  })
}

t.test('the executable end to end: help, a usage error, a command', async (t) => {
  const h = await spawnCli(['--help'])
  t.equal(h.code, 0)
  t.match(h.stdout, /accounts create --name N/)
  const u = await spawnCli(['frobnicate'])
  t.equal(u.code, 2)
  t.equal(u.stderr, 'orgscan: Unknown command "frobnicate". Run "orgscan --help".\n', 'one line on stderr')
  const c = await spawnCli(['accounts', 'create', '--name', 'Spawned', '--json'])
  t.equal(c.code, 0, c.stderr)
  t.match(JSON.parse(c.stdout), { id: String, name: 'Spawned' })
})

t.test('help and usage errors', async (t) => {
  const h = await run(['--help'])
  t.equal(h.code, 0)
  t.match(h.stdout, /accounts create --name N/)
  const kh = await run(['keys', '--help'])
  t.match(kh.stdout, /orgscan keys revoke KEYID/)
  const u = await run(['frobnicate'])
  t.equal(u.code, 2)
  t.equal(u.stderr.trim().split('\n').length, 1, 'one line')
  t.match(u.stderr, /^orgscan: Unknown command "frobnicate"/)
  const bad = await run(['accounts', 'create', '--name', 'X', '--daily-limit', 'lots'])
  t.equal(bad.code, 2)
  t.match(bad.stderr, /--daily-limit must be a whole number/)
})

t.test('accounts and keys with --json', async (t) => {
  const c = await run(['accounts', 'create', '--name', 'Initech', '--daily-limit', '500', '--monthly-limit', '9000', '--json'])
  t.equal(c.code, 0, c.stderr)
  const acct = JSON.parse(c.stdout)
  t.match(acct, { id: String, name: 'Initech', dailyLimit: 500, monthlyLimit: 9000 })
  const l = await run(['accounts', 'list', '--json'])
  t.ok(JSON.parse(l.stdout).some((a: { id: string }) => a.id === acct.id), 'listed')
  const up = await run(['accounts', 'update', acct.id, '--daily-limit', '750', '--json'])
  t.equal(JSON.parse(up.stdout).dailyLimit, 750)
  t.equal(JSON.parse(up.stdout).monthlyLimit, 9000, 'other limit unchanged')
  const missing = await run(['accounts', 'update', '999999', '--daily-limit', '1'])
  t.equal(missing.code, 1)
  t.match(missing.stderr, /^orgscan: No account with id 999999\.\n$/)

  const k = await run(['keys', 'create', '--account', acct.id, '--json'])
  t.equal(k.code, 0, k.stderr)
  const key = JSON.parse(k.stdout)
  t.match(key, { keyId: /^osk_[a-z2-7]{20}$/, secret: /^[A-Za-z0-9_-]{43}$/, accountId: acct.id })
  const kl = await run(['keys', 'list', '--account', acct.id, '--json'])
  const listed = JSON.parse(kl.stdout)
  t.equal(listed.length, 1)
  t.equal(listed[0].keyId, key.keyId)
  t.notOk(kl.stdout.includes(key.secret), 'list never shows the secret')
  const r = await run(['keys', 'revoke', key.keyId, '--json'])
  t.equal(r.code, 0)
  t.type(JSON.parse(r.stdout).revokedAt, 'string')
  const r2 = await run(['keys', 'revoke', 'osk_aaaaaaaaaaaaaaaaaaaa'])
  t.equal(r2.code, 1)
  t.match(r2.stderr, /No API key osk_a+/)
})

t.test('import: one scan bundle in one transaction; invalid bundles are refused with the problems listed', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'orgscan-import-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const acct = JSON.parse((await run(['accounts', 'create', '--name', 'Importer', '--json'])).stdout)
  const def = DEMO_ORG_DEFS.find((d) => d.key === 'globex-prod') ?? DEMO_ORG_DEFS[DEMO_ORG_DEFS.length - 1]
  const bundle = demoBundle(def, def.scans.findIndex((s) => s.status === 'completed'), { scale: 0.01 })
  const file = join(dir, 'scan.json')
  writeFileSync(file, JSON.stringify(bundle))
  const r = await run(['import', '--account', acct.id, file, '--json'])
  t.equal(r.code, 0, r.stderr)
  const out = JSON.parse(r.stdout)
  t.equal(out.orgId, bundle.org.salesforceId)
  t.equal(out.counts.fields, (bundle.data.fields as unknown[]).length, 'every field imported')
  const list = JSON.parse((await run(['accounts', 'list', '--json'])).stdout)
  t.same(list.find((a: { id: string }) => a.id === acct.id).orgs, [bundle.org.salesforceId], 'the org now belongs to the account')

  const bad = structuredClone(bundle) as { data: Record<string, unknown[]> }
  ;(bad.data.fields[0] as Record<string, unknown>).percentPopulated = 'lots'
  bad.data.noSuchResource = []
  writeFileSync(file, JSON.stringify(bad))
  const b = await run(['import', '--account', acct.id, file])
  t.equal(b.code, 1)
  t.match(b.stderr, /Invalid scan bundle/)
  t.match(b.stderr, /data\.fields\[0\]/, 'names the bad record')
  t.match(b.stderr, /data\.noSuchResource: unknown resource/)
  const missing = await run(['import', '--account', acct.id, join(dir, 'nope.json')])
  t.equal(missing.code, 1)
  t.match(missing.stderr, /^orgscan: Cannot read /)
})

t.test('while a server holds the embedded database, accounts, keys and import go through it', { skip: tdb.databaseUrl ? 'the embedded database only: PostgreSQL serves both at once' : false }, async (t) => {
  const dir = migratedFolder()
  const server = await spawnServer({ ...env, ORGSCAN_DATA_DIR: dir, ORGSCAN_SEED_DEMO: 'false', ORGSCAN_AUTH_CACHE_MS: '500' })
  t.teardown(() => server.stop(0))
  const at = { ORGSCAN_DATA_DIR: dir }
  const acct = await run(['accounts', 'create', '--name', 'Via socket', '--daily-limit', '5', '--json'], at)
  t.equal(acct.code, 0, acct.stderr)
  const accountId = JSON.parse(acct.stdout).id as string
  const k = await run(['keys', 'create', '--account', accountId, '--json'], at)
  t.equal(k.code, 0, k.stderr)
  const key = JSON.parse(k.stdout) as { keyId: string; secret: string }
  const auth = { authorization: 'Basic ' + Buffer.from(`${key.keyId}:${key.secret}`).toString('base64') }
  const ok = await fetch(`${server.url}/v1/orgs`, { headers: auth })
  t.equal(ok.status, 200, 'the new key works against the running server at once')
  t.equal(ok.headers.get('x-ratelimit-limit'), '5')
  const up = await run(['accounts', 'update', accountId, '--daily-limit', '7', '--json'], at)
  t.equal(JSON.parse(up.stdout).dailyLimit, 7)
  t.equal((await fetch(`${server.url}/v1/orgs`, { headers: auth })).headers.get('x-ratelimit-limit'), '7', 'a limit change applies at the next request')
  const listed = await run(['keys', 'list', '--account', accountId, '--json'], at)
  t.equal(JSON.parse(listed.stdout).length, 1)
  t.notOk(listed.stdout.includes(key.secret), 'list never shows the secret')
  t.equal((await run(['keys', 'revoke', key.keyId], at)).code, 0)
  t.equal((await fetch(`${server.url}/v1/orgs`, { headers: auth })).status, 401, 'a revoked key stops at once in that server')
  const bad = await run(['accounts', 'update', '999999', '--daily-limit', '1'], at)
  t.equal(bad.code, 1)
  t.equal(bad.stderr, 'orgscan: No account with id 999999.\n', 'errors from the server read like local ones')
  const seed = await run(['seed', '--scale', '0.01'], at)
  t.equal(seed.code, 1)
  t.match(seed.stderr, /^orgscan: The embedded database in .* is in use by another orgscan process \(pid \d+\)/, 'seed needs the server stopped')
})

t.test('serve seeds an empty embedded database and prints the same working demo key on every start', { skip: tdb.databaseUrl ? 'embedded database only' : false }, async (t) => {
  const dir = migratedFolder()
  const envNoPepper: Record<string, string | undefined> = { ...env, ORGSCAN_DATA_DIR: dir, ORGSCAN_SEED_SCALE: '0.01', ORGSCAN_PEPPER: undefined }
  const start = () => spawnServer(envNoPepper)
  const first = await start()
  t.ok(first.info.demoKey, 'a demo key is printed')
  const auth = 'Basic ' + Buffer.from(`${first.info.demoKey!.keyId}:${first.info.demoKey!.secret}`).toString('base64')
  const r = await fetch(first.info.url + '/v1/orgs', { headers: { authorization: auth } })
  t.equal(r.status, 200)
  t.ok(((await r.json()) as { data: unknown[] }).data.length >= 5, 'demo orgs are served')
  await first.stop()
  const second = await start()
  t.same(second.info.demoKey, first.info.demoKey, 'the same demo key after a restart (not re-seeded)')
  const r2 = await fetch(second.info.url + '/v1/orgs', { headers: { authorization: auth } })
  t.equal(r2.status, 200)
  await second.stop()
})
