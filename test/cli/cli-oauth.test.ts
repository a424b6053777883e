/** `orgscan users`, `orgscan clients` and `accounts update --enhanced-mcp-security`. */
import { t } from '../helpers/file-test.ts'
import { cliHarness } from '../helpers/cli.ts'

const { run } = await cliHarness(t, { sharedDatabase: true })

t.test('users, clients and Enhanced MCP Security', async (t) => {
  const acct = JSON.parse((await run(['accounts', 'create', '--name', 'Sign-in Co', '--json'])).stdout) as { id: string }
  const u = await run(['users', 'create', '--account', acct.id, '--email', 'ana@signin.example'])
  t.equal(u.code, 0, u.stderr)
  t.match(u.stdout, /^created user \d+ \(ana@signin\.example\) in account \d+\none-time password: [a-z2-9]{24}\n/, 'a one-time password, shown once')
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
  t.match(revoked.stdout, /^revoked osc_/)
})
