/** `orgscan users`, `orgscan clients` and `accounts update --enhanced-mcp-security`. */
import { t } from '../helpers/file-test.ts'
import { cliHarness } from '../helpers/cli.ts'

const { run } = await cliHarness(t, { sharedDatabase: true })

t.test('users, clients and Enhanced MCP Security', async (t) => {
  const acct = JSON.parse((await run(['accounts', 'create', '--name', 'Sign-in Co', '--json'])).stdout) as { id: string }
  const u = await run(['users', 'create', '--account', acct.id, '--email', 'ana@signin.example'])
  t.equal(u.code, 0, u.stderr)
  const [, userId, password] = /^created user (\d+) \(ana@signin\.example\) in account \d+\none-time password: ([a-z2-9]{24})\n/.exec(u.stdout) ?? []
  t.ok(password, 'a one-time password, shown once')
  t.equal(
    u.stdout,
    `created user ${userId} (ana@signin.example) in account ${acct.id}\none-time password: ${password}\n(shown only now; the user signs in with it)\n` +
      `it sees no org until you grant one: orgscan users grant ${userId} --org ORGID (the account's orgs: orgscan accounts list)\n`,
    'and what to do next: the grant command with the new user\'s id',
  )
  const c = await run(['clients', 'create', '--account', acct.id, '--name', 'Desk', '--redirect-uri', 'http://localhost/cb', '--scope', 'mcp:read', '--json'])
  t.equal(c.code, 0, c.stderr)
  const client = JSON.parse(c.stdout) as { clientId: string; clientSecret: string; scopes: string[] }
  t.match(client, { clientId: /^osc_/, clientSecret: /^[A-Za-z0-9_-]{43}$/, scopes: ['mcp:read'] })
  const bad = await run(['clients', 'create', '--account', acct.id, '--name', 'Bad', '--redirect-uri', 'http://evil.example/cb', '--scope', 'mcp:read'])
  t.equal(bad.code, 1)
  t.match(bad.stderr, /must be https, or http on localhost/)
  const up = await run(['clients', 'update', client.clientId, '--scope', 'mcp:read', '--scope', 'mcp:write', '--json'])
  t.same(JSON.parse(up.stdout).scopes, ['mcp:read', 'mcp:write'])
  const on = await run(['accounts', 'update', acct.id, '--enhanced-mcp-security', 'on', '--json'])
  t.equal(JSON.parse(on.stdout).enhancedMcpSecurity, true)
  const wrong = await run(['accounts', 'update', acct.id, '--enhanced-mcp-security', 'yes'])
  t.equal(wrong.code, 2)
  const revoked = await run(['clients', 'revoke', client.clientId])
  t.equal(revoked.stdout, `revoked ${client.clientId}; its tokens stop working\n`)
  const listed = JSON.parse((await run(['clients', 'list', '--account', acct.id, '--json'])).stdout) as Array<{ clientId: string; revoked: boolean }>
  t.equal(listed.find((x) => x.clientId === client.clientId)?.revoked, true)
  const again = await run(['clients', 'revoke', client.clientId, '--json'])
  t.equal(again.code, 0, 'revoking a revoked client is a no-op: exit 0')
  const first = JSON.parse(again.stdout) as { revokedAt: string; alreadyRevoked: boolean }
  t.equal(first.alreadyRevoked, true)
  const text = await run(['clients', 'revoke', client.clientId])
  t.equal(text.code, 0)
  t.equal(text.stdout, `${client.clientId} was already revoked at ${first.revokedAt}; nothing changed\n`, 'says it was revoked already, and when')
})

t.test('grant as the output of users create says; revoke-org twice; an org id that is wrong is said precisely', async (t) => {
  const acct = JSON.parse((await run(['accounts', 'create', '--name', 'Grant Co', '--json'])).stdout) as { id: string }
  const user = JSON.parse((await run(['users', 'create', '--account', acct.id, '--email', 'bo@grant.example', '--json'])).stdout) as { id: string; orgs: string[] }
  t.same(user.orgs, [], 'a new user has no org')
  const bundle = new URL('../../examples/scan-bundle.json', import.meta.url).pathname
  t.equal((await run(['import', '--account', acct.id, bundle])).code, 0)
  const org = '00D8a00000ExAmPEAV'
  const grant = await run(['users', 'grant', user.id, '--org', org])
  t.equal(grant.code, 0, grant.stderr)
  t.equal(grant.stdout, `user ${user.id} (bo@grant.example) sees: ${org}\n`)
  const revoke = await run(['users', 'revoke-org', user.id, '--org', org])
  t.equal(revoke.stdout, `user ${user.id} (bo@grant.example) sees: no org\n`)
  const again = await run(['users', 'revoke-org', user.id, '--org', org])
  t.equal(again.code, 0, 'an org the user does not have: a no-op, exit 0')
  t.equal(again.stdout, `user ${user.id} had no grant of org ${org}; nothing changed\nuser ${user.id} (bo@grant.example) sees: no org\n`)
  t.match(JSON.parse((await run(['users', 'revoke-org', user.id, '--org', org, '--json'])).stdout), { id: user.id, orgs: [], alreadyRevoked: true })

  const wrong: Array<[string[], string]> = [
    [['users', 'grant', user.id, '--org', '00D8a00000ExAmP-AV'], `--org contains '-': an org id has only letters and digits, got "00D8a00000ExAmP-AV".`],
    [['users', 'grant', user.id, '--org', '00D8a00000ExAmPZZZ'], '--org is no org id: the last 3 characters of an 18-character org id are the checksum of its first 15, here EAV, not ZZZ, got "00D8a00000ExAmPZZZ".'],
    [['users', 'revoke-org', user.id, '--org', '00D8a00000ExAmPE'], '--org has 16 characters: an org id has 15, or 18 with its checksum, got "00D8a00000ExAmPE".'],
    [['export', '--org', '00D8a00000ExAmPZZZ'], '--org is no org id: the last 3 characters of an 18-character org id are the checksum of its first 15, here EAV, not ZZZ, got "00D8a00000ExAmPZZZ".'],
  ]
  for (const [argv, message] of wrong) {
    const r = await run(argv)
    t.equal(r.code, 2, argv.join(' '))
    t.equal(r.stderr, `orgscan: ${message}\n`, argv.join(' '))
  }
  const lower = await run(['users', 'grant', user.id, '--org', '00D8a00000ExAmPeav'])
  t.equal(lower.stdout, `user ${user.id} (bo@grant.example) sees: ${org}\n`, 'the checksum in lower case is the same org')
})
