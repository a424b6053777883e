/**
 * The `orgscan` command: JSON output, errors as one line with a non-zero exit (2 for usage), accounts, keys and
 * imports. Commands run in process (`run`, the whole command); one test runs the real executable end to end.
 * The server-related commands are in cli-serve.test.ts, users and OAuth clients in cli-oauth.test.ts.
 */
import { t } from '../helpers/file-test.ts'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { cliHarness } from '../helpers/cli.ts'
import { demoBundle } from '../../demo/bundle.ts'
import { DEMO_ORG_DEFS } from '../../demo/orgs.ts'

const { run, spawnCli, migratedFolder } = await cliHarness(t, { sharedDatabase: true })

t.test('the executable end to end: help, a usage error, a command', async (t) => {
  // A folder of its own: the harness's embedded database is held open by this process (sharedDatabase).
  const own = { ORGSCAN_DATA_DIR: migratedFolder() }
  const h = await spawnCli(['--help'])
  t.equal(h.code, 0)
  t.match(h.stdout, /accounts create --name N/)
  const u = await spawnCli(['frobnicate'])
  t.equal(u.code, 2)
  t.equal(u.stderr, 'orgscan: Unknown command "frobnicate". Run "orgscan --help".\n', 'one line on stderr')
  const o = await spawnCli(['keys', 'list', '--acount', '1'], own)
  t.equal(o.code, 2, 'an unknown option is a usage error')
  t.equal(o.stderr, 'orgscan: Unknown option "--acount"; did you mean "--account"? Run "orgscan keys --help".\n', 'named, with the nearest option and where the help is')
  const c = await spawnCli(['accounts', 'create', '--name', 'Spawned', '--json'], own)
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
  const v = await run(['--version'])
  t.match(v.stdout, /^orgscan \d+\.\d+\.\d+\n$/, '--version')
  const vj = await run(['version', '--json'])
  t.match(JSON.parse(vj.stdout), { version: /^\d+\.\d+\.\d+$/ }, 'version --json is JSON, as every command with --json')
  // An unknown option: one line naming it, the nearest option the command takes when one is close, and its help.
  const options: Array<[string[], string]> = [
    [['keys', 'list', '--frob'], 'Unknown option "--frob". Run "orgscan keys --help".'],
    [['keys', 'list', '--acount', '5'], 'Unknown option "--acount"; did you mean "--account"? Run "orgscan keys --help".'],
    [['users', 'create', '--account', '1', '--emial', 'a@b.example'], 'Unknown option "--emial"; did you mean "--email"? Run "orgscan users --help".'],
    [['export', '--org', '00D8a00000ExAmPEAV', '--jsn'], 'Unknown option "--jsn"; did you mean "--json"? Run "orgscan export --help".'],
    [['versions', 'list', '-x'], 'Unknown option "-x". Run "orgscan versions --help".'],
    [['accounts', 'create', '--name'], "Option '--name <value>' argument missing. Run \"orgscan accounts --help\"."],
    [['--frob'], 'Unknown option "--frob". Run "orgscan --help".'],
    [['toString'], 'Unknown command "toString". Run "orgscan --help".'],
  ]
  for (const [argv, message] of options) {
    const r = await run(argv)
    t.equal(r.code, 2, argv.join(' '))
    t.equal(r.stderr, `orgscan: ${message}\n`, argv.join(' '))
    t.equal(r.stdout, '', `${argv.join(' ')}: nothing on stdout`)
  }
  const optJson = await run(['keys', 'list', '--frob', '--json'])
  t.equal(optJson.code, 2)
  t.same(JSON.parse(optJson.stderr), { error: { kind: 'UsageError', message: 'Unknown option "--frob". Run "orgscan keys --help".', exitCode: 2 } }, 'with --json, the same message as JSON')
  // A malformed id is a usage error naming the option or positional it came from, found before any database call.
  const ids: Array<[string[], string]> = [
    [['import', '--account', 'abc', 'bundle.json'], '--account must be a positive integer, got "abc".'],
    [['export', '--org', '00D8a00000ExAmPEAV', '--scan', 'x'], '--scan must be a positive integer, got "x".'],
    [['keys', 'create', '--account', '0'], '--account must be a positive integer, got "0".'],
    [['accounts', 'update', 'abc', '--name', 'x'], 'the account ID must be a positive integer, got "abc".'],
    [['users', 'revoke-tokens', 'x1'], 'the USER id must be a positive integer, got "x1".'],
    [['clients', 'list', '--account', '-'], '--account must be a positive integer, got "-".'],
  ]
  for (const [argv, message] of ids) {
    const r = await run(argv)
    t.equal(r.code, 2, argv.join(' '))
    t.equal(r.stderr, `orgscan: ${message}\n`, `${argv.join(' ')}: one line naming the argument`)
  }
  const dash = await run(['accounts', 'update', '1', '--daily-limit', '-5'])
  t.equal(dash.code, 2)
  t.match(dash.stderr, /^orgscan: Option '--daily-limit' argument is ambiguous\. .*'--daily-limit=-XYZ'\. Run "orgscan accounts --help"\.\n$/, 'an ambiguous value: one line that says how to give it')
  const j = await run(['accounts', 'update', '999999', '--daily-limit', '1', '--json'])
  t.equal(j.code, 1)
  t.same(JSON.parse(j.stderr), { error: { kind: 'AdminError', message: 'No account with id 999999.', exitCode: 1 } }, 'under --json, errors are JSON too')
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
  const revoked = JSON.parse(r.stdout)
  t.type(revoked.revokedAt, 'string')
  t.equal(revoked.alreadyRevoked, false)
  // Revoking again changes nothing, says so and when, and is no failure (a retried script goes on).
  const again = await run(['keys', 'revoke', key.keyId])
  t.equal(again.code, 0, 'a revoked key revoked again: exit 0')
  t.equal(again.stdout, `${key.keyId} was already revoked at ${revoked.revokedAt}; nothing changed\n`)
  t.equal(again.stderr, '')
  const againJson = await run(['keys', 'revoke', key.keyId, '--json'])
  t.match(JSON.parse(againJson.stdout), { keyId: key.keyId, revokedAt: revoked.revokedAt, alreadyRevoked: true })
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
  const example = await run(['import', '--account', acct.id, new URL('../../examples/scan-bundle.json', import.meta.url).pathname, '--json'])
  t.equal(example.code, 0, `the documented example bundle (docs/import.md) imports: ${example.stderr}`)
  t.equal(JSON.parse(example.stdout).orgId, '00D8a00000ExAmPEAV')

  const bad = structuredClone(bundle) as { data: Record<string, unknown[]> }
  ;(bad.data.fields[0] as Record<string, unknown>).percentPopulated = 'lots'
  bad.data.noSuchResource = []
  writeFileSync(file, JSON.stringify(bad))
  const b = await run(['import', '--account', acct.id, file])
  t.equal(b.code, 1)
  t.match(b.stderr, /\norgscan: The scan bundle has 2 problems; nothing was imported\.\n/)
  t.match(b.stderr, /\n {2}\/data\/fields\/0\/percentPopulated: percentPopulated must be a number \(got "lots"\)\n/, 'names the bad value, in the bad record')
  t.match(b.stderr, /\n {2}\/data\/noSuchResource: noSuchResource is not a resource \(the resources are listed in docs\/reference\/rest\.md\)\n/)
  const missing = await run(['import', '--account', acct.id, join(dir, 'nope.json')])
  t.equal(missing.code, 1)
  t.match(missing.stderr, /^orgscan: Cannot read /)
})
