/**
 * The negative cases of OAuth, as a table: each row is an attack or a mistake and what the service must answer.
 * PKCE missing or `plain` (400 `invalid_request`, not redirected), a wrong verifier, a reused or expired code, a
 * redirect URI mismatch, a forged or replayed callback, a token for another audience, an expired token, a token
 * signed by another key or unsigned, a forged agent claim, Enhanced MCP Security (a non-issued client, an API key),
 * a missing scope, and a scope change applied to the next call inside an existing session.
 */
import { t } from '../helpers/file-test.ts'
import { generateKeyPair, SignJWT, UnsecuredJWT } from 'jose'
import { startTestService } from '../helpers/service.ts'
import { authorizeUrl, Browser, pkce, signIn } from '../helpers/oauth.ts'
import { mcpClient, rpc, writeProbe } from '../helpers/mcp.ts'
import { hashPassword } from '../../runtime/oauth/crypto.ts'
import { issueClient, updateClient } from '../../runtime/oauth/clients.ts'
import { updateAccount } from '../../runtime/admin.ts'

let now = Date.now()
const ts = await startTestService(t, { clock: () => now, mcpExtraTools: [writeProbe], config: { oauth: { ...(await import('../../runtime/config.ts')).loadConfig({}).oauth, agentClients: ['osc_agentagentagentagentag'] } } })
const issuer = ts.svc.oauth.urls().issuer
const sql = ts.svc.db.sql
const user = ts.seed.users[0]
const PASSWORD = 'correct horse battery staple'
await sql`UPDATE users SET password_hash = ${await hashPassword(PASSWORD)} WHERE id = ${user.id}::bigint`
const REDIRECT = 'http://127.0.0.1:40123/cb'
const REST = `${ts.url}/v1`

async function registerPublic(): Promise<string> {
  const r = await fetch(`${issuer}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: 'Negative', redirect_uris: [REDIRECT] }) })
  return ((await r.json()) as { client_id: string }).client_id
}

async function token(form: Record<string, string>, auth?: string) {
  const r = await fetch(`${issuer}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...(auth ? { authorization: auth } : {}) }, body: new URLSearchParams(form) })
  return { status: r.status, body: (await r.json()) as Record<string, string> }
}

/** A code for `clientId` (public unless `secret`) and its verifier. */
async function code(clientId: string, opts: { resource?: string; redirect?: string } = {}) {
  const p = pkce()
  const back = await signIn(new Browser(), authorizeUrl(issuer, { clientId, redirectUri: opts.redirect ?? REDIRECT, challenge: p.challenge, method: 'S256', state: 'st', resource: opts.resource ?? REST }), { email: user.email, password: PASSWORD }, opts.redirect ?? REDIRECT)
  return { code: back.searchParams.get('code')!, verifier: p.verifier, back }
}

const clientId = await registerPublic()

t.test('PKCE is mandatory: 400 invalid_request, never redirected', async (t) => {
  const { challenge } = pkce()
  for (const [what, params] of [
    ['no code_challenge', { clientId, redirectUri: REDIRECT }],
    ['method plain', { clientId, redirectUri: REDIRECT, challenge, method: 'plain' }],
    ['no method (plain by default)', { clientId, redirectUri: REDIRECT, challenge }],
  ] as const) {
    const r = await fetch(authorizeUrl(issuer, { ...params, state: 'x' }), { redirect: 'manual' })
    t.equal(r.status, 400, what)
    t.equal(r.headers.get('location'), null, `${what}: not redirected`)
    t.equal(((await r.json()) as { error: string }).error, 'invalid_request', `${what}: invalid_request in the body`)
  }
})

t.test('unknown clients and redirect URI mismatches are never redirected', async (t) => {
  const { challenge } = pkce()
  const unknown = await fetch(authorizeUrl(issuer, { clientId: 'mcp_AAAAAAAAAAAAAAAAAAAAAA', redirectUri: REDIRECT, challenge, method: 'S256' }), { redirect: 'manual' })
  t.equal(unknown.status, 400)
  t.equal(unknown.headers.get('location'), null)
  const mismatch = await fetch(authorizeUrl(issuer, { clientId, redirectUri: 'https://attacker.example/cb', challenge, method: 'S256' }), { redirect: 'manual' })
  t.equal(mismatch.status, 400)
  t.match(await mismatch.json(), { error: 'invalid_request', error_description: /[Cc]allback URL mismatch/ })
  const otherPort = await fetch(authorizeUrl(issuer, { clientId, redirectUri: 'http://127.0.0.1:9/cb', challenge, method: 'S256' }), { redirect: 'manual' })
  t.equal(otherPort.status, 303, 'a loopback redirect URI accepts any port')
  const otherPath = await fetch(authorizeUrl(issuer, { clientId, redirectUri: 'http://127.0.0.1:9/other', challenge, method: 'S256' }), { redirect: 'manual' })
  t.equal(otherPath.status, 400, 'but not another path')
  const badScope = await fetch(authorizeUrl(issuer, { clientId, redirectUri: REDIRECT, challenge, method: 'S256', state: 'z', scope: 'admin' }), { redirect: 'manual' })
  t.equal(badScope.status, 303, 'later errors go back to the client')
  const loc = new URL(badScope.headers.get('location')!)
  t.equal(loc.searchParams.get('error'), 'invalid_scope')
  t.equal(loc.searchParams.get('state'), 'z')
  t.equal(loc.searchParams.get('iss'), issuer)
})

t.test('codes: wrong verifier, wrong redirect, reuse, expiry', async (t) => {
  const a = await code(clientId)
  t.equal(a.back.searchParams.get('iss'), issuer, 'iss is returned (RFC 9207)')
  t.equal(a.back.searchParams.get('state'), 'st', 'state is echoed')
  const wrong = await token({ grant_type: 'authorization_code', code: a.code, redirect_uri: REDIRECT, code_verifier: pkce().verifier, client_id: clientId })
  t.match(wrong, { status: 400, body: { error: 'invalid_grant' } }, 'a wrong verifier')
  const b = await code(clientId)
  t.match(await token({ grant_type: 'authorization_code', code: b.code, redirect_uri: 'http://127.0.0.1:40123/other', code_verifier: b.verifier, client_id: clientId }), { status: 400, body: { error: 'invalid_grant' } }, 'another redirect URI')
  const c = await code(clientId)
  const ok = await token({ grant_type: 'authorization_code', code: c.code, redirect_uri: REDIRECT, code_verifier: c.verifier, client_id: clientId })
  t.equal(ok.status, 200)
  const reused = await token({ grant_type: 'authorization_code', code: c.code, redirect_uri: REDIRECT, code_verifier: c.verifier, client_id: clientId })
  t.match(reused, { status: 400, body: { error: 'invalid_grant' } }, 'a reused code')
  t.equal((await ts.get('/v1/orgs', `Bearer ${ok.body.access_token}`)).status, 401, 'reusing a code revokes what it issued')
  const d = await code(clientId)
  now += 61_000
  t.match(await token({ grant_type: 'authorization_code', code: d.code, redirect_uri: REDIRECT, code_verifier: d.verifier, client_id: clientId }), { status: 400, body: { error: 'invalid_grant' } }, 'an expired code')
  t.match(await token({ grant_type: 'authorization_code', code: 'x', redirect_uri: REDIRECT, code_verifier: d.verifier }), { status: 400, body: { error: 'invalid_request' } }, 'no client')
  t.match(await token({ grant_type: 'password', client_id: clientId }), { status: 400, body: { error: 'unsupported_grant_type' } })
})

t.test('forged and replayed callbacks are 400', async (t) => {
  const browser = new Browser()
  const forged = await browser.request(`${issuer}/oauth/callback?code=abc&state=${'A'.repeat(43)}`)
  t.equal(forged.status, 400, 'a callback for a sign-in never started')
  const noState = await browser.request(`${issuer}/oauth/callback?code=abc`)
  t.equal(noState.status, 400)
  // A sign-in page of another browser: not continued.
  const p = pkce()
  const first = new Browser()
  const page = await first.open(authorizeUrl(issuer, { clientId, redirectUri: REDIRECT, challenge: p.challenge, method: 'S256' }))
  t.equal(page.status, 200)
  const stolen = await new Browser().request(page.url)
  t.equal(stolen.status, 400, 'another browser cannot continue the sign-in')
  const replay = await new Browser().submit(page, { email: user.email, password: PASSWORD })
  t.equal(replay.status, 400, 'nor post its form')
})

t.test('tokens: audience, expiry, another key, unsigned, forged agent claim', async (t) => {
  const c = await code(clientId)
  const ok = await token({ grant_type: 'authorization_code', code: c.code, redirect_uri: REDIRECT, code_verifier: c.verifier, client_id: clientId })
  const at = ok.body.access_token
  t.equal((await ts.get('/v1/orgs', `Bearer ${at}`)).status, 200)
  const claims = JSON.parse(Buffer.from(at.split('.')[1], 'base64url').toString())
  const { privateKey } = await generateKeyPair('ES256')
  const otherKey = await new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid: JSON.parse(Buffer.from(at.split('.')[0], 'base64url').toString()).kid, typ: 'at+jwt' }).sign(privateKey)
  t.equal((await ts.get('/v1/orgs', `Bearer ${otherKey}`)).status, 401, 'signed by another key')
  const unsigned = new UnsecuredJWT(claims).encode()
  t.equal((await ts.get('/v1/orgs', `Bearer ${unsigned}`)).status, 401, 'unsigned')
  const forgedAgent = await new SignJWT({ ...claims, client_id: 'osc_agentagentagentagentag' }).setProtectedHeader({ alg: 'ES256', typ: 'at+jwt' }).sign(privateKey)
  t.equal((await ts.get('/v1/orgs', `Bearer ${forgedAgent}`)).status, 401, 'a forged agent claim grants nothing')
  const before = (await ts.get('/v1/orgs', `Bearer ${at}`)).headers.get('x-ratelimit-remaining')
  const withHeader = await ts.get('/v1/orgs', `Bearer ${at}`, { headers: { 'x-orgscan-agent': 'true', 'x-verified-agent': 'osc_agentagentagentagentag' } })
  t.equal(Number(withHeader.headers.get('x-ratelimit-remaining')), Number(before) - 1, 'no request header grants the exemption')
  t.equal((await ts.get('/v1/orgs', 'Bearer not.a.token')).status, 401)
  now += 16 * 60_000
  t.equal((await ts.get('/v1/orgs', `Bearer ${at}`)).status, 401, 'an expired token')
})

t.test('verified agent clients consume no quota', async (t) => {
  await sql`INSERT INTO oauth_clients (client_id, account_id, name, redirect_uris, scopes, secret_hash, created_at)
    VALUES ('osc_agentagentagentagentag', ${user.accountId}::bigint, 'Service agent', ${[REDIRECT]}, ${['mcp:read']}, ${Buffer.alloc(32)}, now())`
  const family = '00000000-0000-4000-8000-000000000001'
  const { token: at } = await ts.svc.oauth.tokens.issue({ userId: user.id, clientId: 'osc_agentagentagentagentag', scopes: ['mcp:read'], resource: REST, family })
  const key = await ts.keyHeader(user.accountId)
  const remaining = async () => Number((await ts.get('/v1/account/quota', key)).body.data.rateLimit.daily.remaining)
  const before = await remaining()
  for (let i = 0; i < 3; i++) t.equal((await ts.get('/v1/orgs', `Bearer ${at}`)).status, 200)
  t.equal(await remaining(), before, 'three requests of the verified agent, nothing consumed')
})

t.test('Enhanced MCP Security', async (t) => {
  const issued = await issueClient(sql, ts.svc.pepper, { account: user.accountId, name: 'Issued', redirectUris: ['http://localhost/cb'], scopes: ['mcp:read'] })
  const basicAuth = 'Basic ' + Buffer.from(`${issued.clientId}:${issued.clientSecret}`).toString('base64')
  const issuedCode = async () => {
    const p = pkce()
    const redirect = 'http://localhost:41234/cb'
    const back = await signIn(new Browser(), authorizeUrl(issuer, { clientId: issued.clientId, redirectUri: redirect, challenge: p.challenge, method: 'S256', resource: ts.svc.mcpUrl }), { email: user.email, password: PASSWORD }, redirect)
    return token({ grant_type: 'authorization_code', code: back.searchParams.get('code')!, redirect_uri: redirect, code_verifier: p.verifier }, basicAuth)
  }
  // Off: every client and API keys work.
  const pub = await code(clientId, { resource: ts.svc.mcpUrl })
  const pubTokens = await token({ grant_type: 'authorization_code', code: pub.code, redirect_uri: REDIRECT, code_verifier: pub.verifier, client_id: clientId })
  const apiKey = await ts.keyHeader(user.accountId)
  const ping = (auth: string) =>
    rpc(ts.svc.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'negative', version: '1' } } }, { authorization: auth })
  t.equal((await ping(apiKey)).status, 200, 'setting off: an API key works')
  t.equal((await ping(`Bearer ${pubTokens.body.access_token}`)).status, 200, 'setting off: an automatically registered client works')
  await updateAccount(sql, user.accountId, { enhancedMcpSecurity: true })
  ts.svc.adminChanged({ account: user.accountId })
  t.equal((await ping(apiKey)).status, 403, 'on: an API key is 403 at /v1/mcp')
  t.equal((await ts.get('/v1/orgs', apiKey)).status, 200, 'REST keeps accepting API keys')
  t.equal((await ping(`Bearer ${pubTokens.body.access_token}`)).status, 403, 'on: a token of a non-issued client is 403')
  const refused = await code(clientId, { resource: ts.svc.mcpUrl })
  t.match(await token({ grant_type: 'authorization_code', code: refused.code, redirect_uri: REDIRECT, code_verifier: refused.verifier, client_id: clientId }), { status: 400, body: { error: 'access_denied' } }, 'on: a registered client fails at /token with access_denied')
  const wrongSecret = await token({ grant_type: 'authorization_code', code: 'x', redirect_uri: 'http://localhost/cb', code_verifier: 'x' }, 'Basic ' + Buffer.from(`${issued.clientId}:nope`).toString('base64'))
  t.equal(wrongSecret.status, 401, 'an issued client must authenticate')
  const { challenge } = pkce()
  const elsewhere = await fetch(authorizeUrl(issuer, { clientId: issued.clientId, redirectUri: 'https://other.example/cb', challenge, method: 'S256' }), { redirect: 'manual' })
  t.match(await elsewhere.json(), { error: 'invalid_request', error_description: /[Cc]allback URL mismatch/ }, 'only the configured callbacks')
  const good = await issuedCode()
  t.equal(good.status, 200, 'an issued client signs in')
  const bearer = `Bearer ${good.body.access_token}`
  t.equal((await ping(bearer)).status, 200)
  const { client } = await mcpClient(t, ts.svc.mcpUrl, bearer)
  t.notOk((await client.callTool({ name: 'list_orgs', arguments: {} })).isError, 'mcp:read tools work')
  const write = await client.callTool({ name: 'test_write_probe', arguments: {} })
  t.match(write.structuredContent, { error: 'access_denied', scope: 'mcp:write' }, 'a tool needing a scope the client lacks')
  await updateClient(sql, issued.clientId, { scopes: ['mcp:read', 'mcp:write'] })
  ts.svc.adminChanged({ oauth: true })
  const still = await client.callTool({ name: 'test_write_probe', arguments: {} })
  t.match(still.structuredContent, { error: 'access_denied' }, 'the token was granted mcp:read only: widening the client does not widen it')
  await updateClient(sql, issued.clientId, { scopes: ['mcp:write'] })
  ts.svc.adminChanged({ oauth: true })
  const narrowed = await client.callTool({ name: 'list_orgs', arguments: {} })
  t.match(narrowed.structuredContent, { error: 'access_denied', scope: 'mcp:read' }, 'narrowing the client applies at the next call of the same session')
  await updateAccount(sql, user.accountId, { enhancedMcpSecurity: false })
  ts.svc.adminChanged({ account: user.accountId })
  t.equal((await ping(apiKey)).status, 200, 'off again: API keys work')
})

t.test('signing keys rotate: a new key signs, the old one verifies until its tokens expired, JWKS follows', async (t) => {
  const kidOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[0], 'base64url').toString()).kid as string
  const jwks = async () => ((await (await fetch(`${issuer}/oauth/jwks`)).json()) as { keys: Array<{ kid: string; d?: string }> }).keys
  const issue = () => ts.svc.oauth.tokens.issue({ userId: user.id, clientId, scopes: ['mcp:read'], resource: REST, family: '00000000-0000-4000-8000-000000000002' })
  await issue()
  const [current] = await sql`SELECT created_at FROM oauth_signing_keys WHERE retired_at IS NULL ORDER BY created_at DESC LIMIT 1`
  now = (current.created_at as Date).getTime() + 30 * 86_400_000 - 60_000
  const a = await issue()
  now += 120_000
  const b = await issue()
  t.not(kidOf(b.token), kidOf(a.token), 'a key older than the rotation age is replaced')
  t.equal((await ts.get('/v1/orgs', `Bearer ${a.token}`)).status, 200, 'a token of the replaced key still verifies')
  t.equal((await ts.get('/v1/orgs', `Bearer ${b.token}`)).status, 200)
  const published = await jwks()
  t.ok(published.some((k) => k.kid === kidOf(a.token)) && published.some((k) => k.kid === kidOf(b.token)), 'both keys are published')
  t.ok(published.every((k) => k.d === undefined), 'no private part is published')
  now += 20 * 60_000
  now += 61_000
  const later = await jwks()
  t.notOk(later.some((k) => k.kid === kidOf(a.token)), 'the replaced key leaves the set once its tokens expired')
})
