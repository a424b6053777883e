/**
 * The authorization server under hostile input: no 5xx, no stack or SQL text, for malformed, oversized, repeated or
 * wrongly typed input on every endpoint; registration floods and password guessing are bounded per address.
 */
import { t } from '../helpers/file-test.ts'
import { startTestService } from '../helpers/service.ts'
import { authorizeUrl, Browser, pkce } from '../helpers/oauth.ts'
import { loadConfig } from '../../runtime/platform/config.ts'
import { Agent, fetch as undiciFetch } from 'undici'

// Time stands still unless a test moves it: the sign-in guard refills with time, and a slow machine must not make
// it answer a twenty-first guess.
const now = Date.now()
const ts = await startTestService(t, { clock: () => now, config: { oauth: { ...loadConfig({}).oauth, registrationsPerHour: 5 } } })
const issuer = ts.svc.oauth.urls().issuer

async function send(path: string, init: RequestInit = {}) {
  const r = await fetch(issuer + path, { redirect: 'manual', ...init })
  return { status: r.status, text: await r.text() }
}

const form = (body: string) => ({ method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body })
const json = (body: string) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body })

t.test('no 5xx from malformed input on any endpoint', async (t) => {
  const huge = 'a'.repeat(20_000)
  const cases: Array<[string, RequestInit]> = [
    ['/oauth/token', form('')],
    ['/oauth/token', form('grant_type=authorization_code&grant_type=refresh_token')],
    ['/oauth/token', form(`grant_type=authorization_code&code=${huge}`)],
    ['/oauth/token', form('grant_type=refresh_token&refresh_token=%00%ff&client_id=mcp_x')],
    ['/oauth/token', form('grant_type=urn:ietf:params:oauth:grant-type:token-exchange&client_id=mcp_AAAAAAAAAAAAAAAAAAAAAA')],
    ['/oauth/token', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }],
    ['/oauth/token', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: 'Basic %%%' }, body: 'grant_type=refresh_token' }],
    ['/oauth/token', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: 'Basic ' + Buffer.from('%zz:%zz').toString('base64') }, body: 'grant_type=refresh_token' }],
    ['/oauth/revoke', form('token=' + huge.slice(0, 5000))],
    ['/oauth/revoke', form('token=a.b.c&client_id=mcp_AAAAAAAAAAAAAAAAAAAAAA')],
    ['/oauth/register', json('not json')],
    ['/oauth/register', json('[]')],
    ['/oauth/register', json('{"redirect_uris":"http://127.0.0.1/cb"}')],
    ['/oauth/register', json('{"redirect_uris":[1,2]}')],
    ['/oauth/register', json('{"redirect_uris":["javascript:alert(1)"]}')],
    ['/oauth/register', json('{"redirect_uris":["http://evil.example/cb"]}')],
    ['/oauth/register', json('{"redirect_uris":["https://ok.example/cb"],"scope":["mcp:read"]}')],
    ['/oauth/register', json('{"redirect_uris":["https://ok.example/cb"],"token_endpoint_auth_method":"client_secret_basic"}')],
    ['/oauth/register', json(`{"redirect_uris":["https://ok.example/${huge}"]}`)],
    ['/oauth/register', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{}' }],
    ['/oauth/sign-in', form('request=x&csrf=y&email=a&password=b')],
    ['/oauth/sign-in', form(`request=${'A'.repeat(43)}&csrf=${huge.slice(0, 3000)}`)],
    ['/oauth/consent', form('decision=approve')],
    ['/oauth/sign-in?request=%ZZ', {}],
    ['/oauth/sign-in?request=a&request=b', {}],
    ['/oauth/upstream?request=x', {}],
    ['/oauth/callback?state=%00&code=1', {}],
    ['/oauth/authorize', {}],
    ['/oauth/authorize?client_id=%E0%A4%A', {}],
    ['/oauth/authorize?client_id=mcp_AAAAAAAAAAAAAAAAAAAAAA&client_id=x', {}],
    [`/oauth/authorize?client_id=${huge.slice(0, 6000)}`, {}],
    ['/.well-known/oauth-authorization-server/extra', {}],
    ['/oauth/token', { method: 'GET' }],
  ]
  for (const [path, init] of cases) {
    const r = await send(path, init)
    t.ok(r.status >= 400 && r.status < 500, `${init.method ?? 'GET'} ${path.slice(0, 80)} ${String(init.body ?? '').slice(0, 60)} → ${r.status}`)
    t.notMatch(r.text, /SELECT|INSERT|postgres|at .*\.ts:\d+|stack/i, 'no SQL, driver or stack text')
  }
})

t.test('registrations per address are bounded', async (t) => {
  const statuses: number[] = []
  for (let i = 0; i < 7; i++) statuses.push((await send('/oauth/register', json('{"redirect_uris":["https://app.example/cb"]}'))).status)
  t.equal(statuses.filter((s) => s === 201).length, 5, 'five registrations in the hour')
  t.equal(statuses.at(-1), 429, 'then 429')
  const over = await fetch(issuer + '/oauth/register', json('{"redirect_uris":["https://app.example/cb"]}'))
  t.equal(over.headers.get('retry-after'), '3600')
  t.match(await over.json(), { error: 'temporarily_unavailable', error_description: /at most 5 an hour/ }, 'an OAuth error code (RFC 7591 has none for this)')
})

t.test('password guessing is bounded per address', async (t) => {
  await ts.svc.db.sql`DELETE FROM oauth_clients WHERE registered_from IS NOT NULL`
  const reg = await fetch(`${issuer}/oauth/register`, json('{"redirect_uris":["http://127.0.0.1:9/cb"]}'))
  const clientId = ((await reg.json()) as { client_id: string }).client_id
  const browser = new Browser()
  const page = await browser.open(authorizeUrl(issuer, { clientId, redirectUri: 'http://127.0.0.1:9/cb', challenge: pkce().challenge, method: 'S256' }))
  const statuses: number[] = []
  let current = page
  for (let i = 0; i < 22; i++) {
    current = await browser.submit(current, { email: ts.seed.users[0].email, password: `guess-${i}` })
    statuses.push(current.status)
  }
  t.equal(statuses.filter((s) => s === 400).length, 20, 'twenty wrong passwords are answered')
  t.equal(statuses.at(-1), 429, 'then the address waits')
  t.match(current.text, /Too many failed sign-ins/)
})

t.test('password guesses sent at once are bounded too: each takes its token before the password is checked', async (t) => {
  // Its own address, with a full allowance of twenty (and of registrations).
  const reg = await undiciFetch(`${issuer}/oauth/register`, { ...json('{"redirect_uris":["http://127.0.0.1:9/cb"]}'), dispatcher: new Agent({ localAddress: '127.0.0.52' }) })
  t.equal(reg.status, 201)
  const clientId = ((await reg.json()) as { client_id: string }).client_id
  const browser = new Browser({ localAddress: '127.0.0.52' })
  const page = await browser.open(authorizeUrl(issuer, { clientId, redirectUri: 'http://127.0.0.1:9/cb', challenge: pkce().challenge, method: 'S256' }))
  t.equal(page.status, 200)
  const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => browser.submit(page, { email: ts.seed.users[0].email, password: `at-once-${i}` })))
  const statuses = answers.map((a) => a.status)
  t.equal(statuses.filter((s) => s === 400).length, 20, 'twenty passwords checked, however many arrive together')
  t.equal(statuses.filter((s) => s === 429).length, 20, 'the rest wait')
  t.ok(answers.filter((a) => a.status === 429).every((a) => /Too many failed sign-ins from this address; try again in \d+ seconds/.test(a.text)))
})

t.test('a client name that could show as another name is refused; a long one is cut by characters', async (t) => {
  await ts.svc.db.sql`DELETE FROM oauth_clients WHERE registered_from IS NOT NULL`
  const register = async (name: unknown) => {
    const r = await fetch(`${issuer}/oauth/register`, json(JSON.stringify({ redirect_uris: ['https://app.example/cb'], client_name: name })))
    return { status: r.status, body: (await r.json()) as Record<string, string> }
  }
  for (const name of ['Claude\u202Eedualc', 'Acme\u2066Admin\u2069', 'A\u200Fmcp', 'line\nbreak', 'nul\u0000', 'zero\u200Bwidth', 'lone \uD800 surrogate']) {
    const r = await register(name)
    t.equal(r.status, 400, JSON.stringify(name))
    t.match(r.body, { error: 'invalid_client_metadata', error_description: /client_name may not contain/ })
  }
  t.match(await register(42), { status: 400, body: { error: 'invalid_client_metadata', error_description: 'client_name must be a string.' } }, 'a name that is not a string is refused, not replaced')
  const long = await register('😀'.repeat(150))
  t.equal(long.status, 201, 'an over-long name is accepted')
  t.equal(long.body.client_name, '😀'.repeat(100), 'and cut to 100 characters, no surrogate pair split')
  t.equal((await register('Claude Desktop — Ünïcødé ✓')).body.client_name, 'Claude Desktop — Ünïcødé ✓', 'ordinary Unicode is kept')
  await ts.svc.db.sql`DELETE FROM oauth_clients WHERE registered_from IS NOT NULL`
  const narrow = await fetch(`${issuer}/oauth/register`, json(JSON.stringify({ redirect_uris: ['https://app.example/cb'], grant_types: ['authorization_code'] })))
  t.equal(narrow.status, 201)
  t.same(((await narrow.json()) as { grant_types: string[] }).grant_types, ['authorization_code', 'refresh_token'], 'the answer names the grants the client really has (they are not restricted per client)')
  const { issueClient } = await import('../../runtime/platform/oauth/clients.ts')
  const account = ts.seed.users[0].accountId
  await t.rejects(issueClient(ts.svc.db.sql, ts.svc.pepper, { account, name: 'Ops\u202Etoor', redirectUris: ['https://app.example/cb'], scopes: ['mcp:read'] }), { message: /client name may not contain/ }, 'the CLI refuses it too')
  await t.rejects(issueClient(ts.svc.db.sql, ts.svc.pepper, { account, name: 'x'.repeat(101), redirectUris: ['https://app.example/cb'], scopes: ['mcp:read'] }), { message: /at most 100 characters/ })
})
