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
import { hashPassword } from '../../runtime/platform/oauth/crypto.ts'
import { issueClient, updateClient } from '../../runtime/platform/oauth/clients.ts'
import { updateAccount } from '../../runtime/platform/admin.ts'
import { revokeUserTokens } from '../../runtime/platform/oauth/users.ts'
import { request } from 'node:http'

let now = Date.now()
const ts = await startTestService(t, { clock: () => now, mcpExtraTools: [writeProbe], config: { oauth: { ...(await import('../../runtime/platform/config.ts')).loadConfig({}).oauth, agentClients: ['osc_agentagentagentagentag'] } } })
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
  return { status: r.status, headers: r.headers, body: (await r.json()) as Record<string, string> }
}

/** A code for `clientId` (public unless `secret`) and its verifier. */
async function code(clientId: string, opts: { resource?: string; redirect?: string; scope?: string } = {}) {
  const p = pkce()
  const back = await signIn(new Browser(), authorizeUrl(issuer, { clientId, redirectUri: opts.redirect ?? REDIRECT, challenge: p.challenge, method: 'S256', state: 'st', resource: opts.resource ?? REST, scope: opts.scope }), { email: user.email, password: PASSWORD }, opts.redirect ?? REDIRECT)
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
  for (const host of ['localhost', '[::1]']) {
    const otherName = await fetch(authorizeUrl(issuer, { clientId, redirectUri: `http://${host}:53123/cb`, challenge, method: 'S256' }), { redirect: 'manual' })
    t.equal(otherName.status, 303, `and any loopback name (${host} for 127.0.0.1): the same machine`)
  }
  const httpsLoopback = await fetch(authorizeUrl(issuer, { clientId, redirectUri: 'https://localhost:9/cb', challenge, method: 'S256' }), { redirect: 'manual' })
  t.equal(httpsLoopback.status, 400, 'but not another scheme')
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

t.test('a refresh refused for its own parameters leaves the token usable; a code reused ends its tokens at once', async (t) => {
  const c = await code(clientId)
  const first = await token({ grant_type: 'authorization_code', code: c.code, redirect_uri: REDIRECT, code_verifier: c.verifier, client_id: clientId })
  t.equal(first.status, 200)
  const refresh = first.body.refresh_token
  t.match(await token({ grant_type: 'refresh_token', refresh_token: refresh, client_id: clientId, scope: 'bogus' }), { status: 400, body: { error: 'invalid_scope' } })
  t.match(await token({ grant_type: 'refresh_token', refresh_token: refresh, client_id: clientId, resource: 'https://evil.example/' }), { status: 400, body: { error: 'invalid_target' } }, 'another resource is refused, not ignored')
  t.match(await token({ grant_type: 'refresh_token', refresh_token: refresh, client_id: clientId, resource: ts.svc.mcpUrl }), { status: 400, body: { error: 'invalid_target' } }, 'the other API is another resource')
  const retried = await token({ grant_type: 'refresh_token', refresh_token: refresh, client_id: clientId })
  t.equal(retried.status, 200, 'the retry without them works: the refused requests did not use the token up')
  t.equal((await ts.get('/v1/orgs', `Bearer ${first.body.access_token}`)).status, 200, 'and did not end the sign-in')

  const d = await code(clientId)
  const ok = await token({ grant_type: 'authorization_code', code: d.code, redirect_uri: REDIRECT, code_verifier: d.verifier, client_id: clientId })
  t.equal((await ts.get('/v1/orgs', `Bearer ${ok.body.access_token}`)).status, 200, 'the access token works, and this process has checked it')
  t.match(await token({ grant_type: 'authorization_code', code: d.code, redirect_uri: REDIRECT, code_verifier: d.verifier, client_id: clientId }), { status: 400, body: { error: 'invalid_grant' } })
  t.equal((await ts.get('/v1/orgs', `Bearer ${ok.body.access_token}`)).status, 401, 'reusing the code ends its access token at once, though it was checked and cached')
})

t.test("revoking a user's tokens also ends sign-ins whose code was not yet exchanged", async (t) => {
  const pending = await code(clientId)
  now += 1000
  await revokeUserTokens(sql, user.id, new Date(now))
  ts.svc.adminChanged({ oauth: true })
  now += 2000
  const late = await token({ grant_type: 'authorization_code', code: pending.code, redirect_uri: REDIRECT, code_verifier: pending.verifier, client_id: clientId })
  t.match(late, { status: 400, body: { error: 'invalid_grant' } }, 'the code issued before the revocation gets nothing')
  const fresh = await code(clientId)
  const after = await token({ grant_type: 'authorization_code', code: fresh.code, redirect_uri: REDIRECT, code_verifier: fresh.verifier, client_id: clientId })
  t.equal(after.status, 200, 'a sign-in after the revocation works')
  t.equal((await ts.get('/v1/orgs', `Bearer ${after.body.access_token}`)).status, 200)
})

t.test("ending a user's tokens tells apart tokens issued in the same second before and after it", async (t) => {
  now = Math.floor(now / 1000) * 1000 + 5000 + 100
  const family = '00000000-0000-4000-8000-000000000004'
  const before = await ts.svc.oauth.tokens.issue({ userId: user.id, clientId, scopes: ['mcp:read'], resource: REST, family })
  now += 300
  await revokeUserTokens(sql, user.id, new Date(now))
  ts.svc.adminChanged({ oauth: true })
  now += 300
  const after = await ts.svc.oauth.tokens.issue({ userId: user.id, clientId, scopes: ['mcp:read'], resource: REST, family })
  t.equal(Math.floor(now / 1000), Math.floor((now - 600) / 1000), 'all three in one second')
  t.equal((await ts.get('/v1/orgs', `Bearer ${before.token}`)).status, 401, 'the token issued 300 ms before is refused')
  t.equal((await ts.get('/v1/orgs', `Bearer ${after.token}`)).status, 200, 'the token issued 300 ms after works')
  const iat = (JSON.parse(Buffer.from(after.token.split('.')[1]!, 'base64url').toString()) as { iat: number; exp: number })
  t.equal(iat.iat, now / 1000, 'iat carries the millisecond')
  t.ok(Number.isInteger(iat.exp), 'exp stays whole seconds')
})

t.test('HEAD changes nothing: the GETs that start or finish a sign-in are GET only; a 405 names exactly the methods of its path', async (t) => {
  const { challenge } = pkce()
  const [{ n: before }] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM oauth_requests`
  const head = await fetch(authorizeUrl(issuer, { clientId, redirectUri: REDIRECT, challenge, method: 'S256', state: 'h' }), { method: 'HEAD', redirect: 'manual' })
  t.equal(head.status, 405, 'HEAD /oauth/authorize')
  t.equal(head.headers.get('allow'), 'GET')
  t.equal(head.headers.get('set-cookie'), null, 'no sign-in cookie')
  const [{ n: after }] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM oauth_requests`
  t.equal(after, before, 'and no sign-in was started')
  for (const path of ['/oauth/upstream', '/oauth/callback']) {
    const r = await fetch(new URL(path, issuer), { method: 'HEAD' })
    t.equal(r.status, 405, `HEAD ${path}`)
    t.equal(r.headers.get('allow'), 'GET', `${path}: Allow`)
  }
  const get = await fetch(authorizeUrl(issuer, { clientId, redirectUri: REDIRECT, challenge, method: 'S256', state: 'g' }), { redirect: 'manual' })
  t.equal(get.status, 303, 'GET still starts the sign-in')
  for (const [method, path, allow] of [['HEAD', '/oauth/token', 'POST, OPTIONS'], ['GET', '/oauth/revoke', 'POST, OPTIONS'], ['PUT', '/oauth/authorize', 'GET'], ['DELETE', '/oauth/jwks', 'GET, HEAD, OPTIONS'], ['PUT', '/oauth/sign-in', 'GET, HEAD, POST']] as const) {
    const r = await fetch(new URL(path, issuer), { method })
    t.equal(r.status, 405, `${method} ${path}`)
    t.equal(r.headers.get('allow'), allow, `${method} ${path}: Allow names the methods of this path`)
    if (method !== 'HEAD') t.match((await r.json()) as object, { error: { code: 'method_not_allowed' } })
  }
  t.equal((await fetch(new URL('/.well-known/oauth-authorization-server', issuer), { method: 'HEAD' })).status, 200, 'HEAD of a read keeps working')
})

t.test('cacheable answers say so alone; token answers are no-store with Pragma', async (t) => {
  for (const path of ['/.well-known/oauth-authorization-server', '/oauth/jwks', '/.well-known/oauth-protected-resource/v1']) {
    const r = await fetch(new URL(path, issuer))
    t.equal(r.status, 200, path)
    t.equal(r.headers.get('cache-control'), 'public, max-age=300', `${path}: cacheable for 5 minutes`)
    t.equal(r.headers.get('pragma'), null, `${path}: no Pragma: no-cache contradicting it`)
  }
  const refused = await token({ grant_type: 'authorization_code', code: 'nope', redirect_uri: REDIRECT, code_verifier: 'x'.repeat(43), client_id: clientId })
  t.equal(refused.status, 400)
  t.equal(refused.headers.get('cache-control'), 'no-store')
  t.equal(refused.headers.get('pragma'), 'no-cache')
})

t.test('/authorize checks PKCE before the client: invalid_request whatever the client', async (t) => {
  for (const id of ['mcp_AAAAAAAAAAAAAAAAAAAAAA', '']) {
    const r = await fetch(authorizeUrl(issuer, { clientId: id, redirectUri: REDIRECT, state: 'x' }), { redirect: 'manual' })
    t.equal(r.status, 400)
    t.equal(r.headers.get('location'), null)
    t.match(await r.json(), { error: 'invalid_request', error_description: /PKCE/ }, `client_id "${id}" without PKCE`)
  }
  const { challenge } = pkce()
  const unknown = await fetch(authorizeUrl(issuer, { clientId: 'mcp_AAAAAAAAAAAAAAAAAAAAAA', redirectUri: REDIRECT, challenge, method: 'S256' }), { redirect: 'manual' })
  t.match(await unknown.json(), { error: 'invalid_request', error_description: 'Unknown client_id.' }, 'an unknown client with PKCE: invalid_request, not a token-endpoint code')
})

t.test('a token without mcp:read: 403 on REST with the rate-limit headers, no org ids through MCP completion', async (t) => {
  const family = '00000000-0000-4000-8000-000000000003'
  const rest = await ts.svc.oauth.tokens.issue({ userId: user.id, clientId, scopes: ['mcp:write'], resource: REST, family })
  const r = await ts.get('/v1/orgs', `Bearer ${rest.token}`)
  t.equal(r.status, 403)
  t.match(r.body.error, { code: 'forbidden', scope: 'mcp:read' })
  t.match(r.headers.get('x-ratelimit-remaining'), /^\d+$/, 'the 403 carries the rate-limit headers')
  t.match(r.headers.get('www-authenticate'), /^Bearer realm="orgscan", resource_metadata="[^"]+", error="insufficient_scope", scope="mcp:read"/, 'and the RFC 6750 insufficient_scope challenge naming the scope')
  const again = await ts.get('/v1/orgs', `Bearer ${rest.token}`)
  t.equal(again.headers.get('x-ratelimit-remaining'), r.headers.get('x-ratelimit-remaining'), 'and is not charged')
  const mcp = await ts.svc.oauth.tokens.issue({ userId: user.id, clientId, scopes: ['mcp:write'], resource: ts.svc.mcpUrl, family })
  const { client } = await mcpClient(t, ts.svc.mcpUrl, `Bearer ${mcp.token}`)
  const { prompts } = await client.listPrompts()
  const withOrg = prompts.find((p) => p.arguments?.some((a) => a.name === 'orgId'))!
  const done = await client.complete({ ref: { type: 'ref/prompt', name: withOrg.name }, argument: { name: 'orgId', value: '' } })
  t.same(done.completion.values, [], 'completion gives no org ids to a credential that may not read them')
  const { client: reader } = await mcpClient(t, ts.svc.mcpUrl, await ts.keyHeader(user.accountId, user.id))
  const seen = await reader.complete({ ref: { type: 'ref/prompt', name: withOrg.name }, argument: { name: 'orgId', value: '' } })
  t.ok(seen.completion.values.length > 0, 'a credential that reads gets them')
})

/** A request with headers given as pairs, repeated names kept (fetch joins them). */
function rawRequest(base: string, method: string, path: string, pairs: Array<[string, string]>, body?: string): Promise<{ status: number }> {
  const headers = ['Host', new URL(base).host, ...pairs.flat()]
  if (body !== undefined) headers.push('Content-Type', 'application/json', 'Accept', 'application/json, text/event-stream', 'Content-Length', String(Buffer.byteLength(body)))
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method, headers }, (res) => {
      res.resume()
      res.on('end', () => resolve({ status: res.statusCode ?? 0 }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

t.test('several Authorization headers are refused; a refused Bearer token is named in the challenge', async (t) => {
  const a = await ts.keyHeader(user.accountId)
  const b = await ts.keyHeader(ts.seed.orgs.find((o) => o.accountId !== user.accountId)!.accountId)
  for (const [surface, path, method, body] of [
    ['REST', '/v1/orgs', 'GET', undefined],
    ['MCP', '/v1/mcp', 'POST', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } })],
  ] as const) {
    const res = await rawRequest(ts.url, method, path, [['Authorization', a], ['Authorization', b]], body)
    t.equal(res.status, 401, `${surface}: two Authorization headers (two valid keys of two accounts) → 401`)
    t.equal((await rawRequest(ts.url, method, path, [['Authorization', a]], body)).status, 200, `${surface}: either one alone works`)
  }
  const bad = await ts.get('/v1/orgs', 'Bearer not.a.token')
  t.match(bad.headers.get('www-authenticate'), /Bearer realm="orgscan", resource_metadata="[^"]+", error="invalid_token"/, 'REST')
  const none = await ts.get('/v1/orgs')
  t.notMatch(none.headers.get('www-authenticate'), /invalid_token/, 'no error when no token was presented')
  const mcpBad = await rpc(ts.svc.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'ping' }, { authorization: 'Bearer not.a.token' })
  t.match(mcpBad.headers.get('www-authenticate'), /scope="mcp:read", error="invalid_token"/, 'MCP')
})

t.test('a 401 says both ways in; a token for the other resource is told so, by name, on REST and MCP', async (t) => {
  const restChallenge = `Basic realm="orgscan", charset="UTF-8", Bearer realm="orgscan", resource_metadata="${issuer}/.well-known/oauth-protected-resource/v1"`
  const mcpBearer = `Bearer resource_metadata="${issuer}/.well-known/oauth-protected-resource/v1/mcp", scope="mcp:read"`
  const mcpChallenge = `${mcpBearer}, Basic realm="orgscan", charset="UTF-8"`
  const HOW = 'send an API key as HTTP Basic credentials (key id and secret), or an OAuth access token as Bearer'
  const restBody = (detail: string) => ({ error: { status: 401, title: 'Unauthorized', detail, code: 'unauthorized' } })
  const mcpBody = (detail: string) => ({ jsonrpc: '2.0', id: 7, error: { code: -32000, message: detail, data: { status: 401, code: 'unauthorized' } } })
  const ping = { jsonrpc: '2.0', id: 7, method: 'ping' }

  for (const [what, auth, detail] of [
    ['no credentials', undefined, `Authentication required: ${HOW}.`],
    ['another scheme', 'Digest username="x"', `Unsupported authorization scheme; ${HOW}.`],
  ] as const) {
    const r = await ts.get('/v1/orgs', auth)
    t.equal(r.status, 401, `REST, ${what}`)
    t.same(r.body, restBody(detail), `REST, ${what}: the body names both ways in`)
    t.equal(r.headers.get('www-authenticate'), restChallenge, `REST, ${what}: both challenges, no error (no token was presented)`)
    const m = await rpc(ts.svc.mcpUrl, ping, auth ? { authorization: auth } : {})
    t.equal(m.status, 401, `MCP, ${what}`)
    t.same(m.body, mcpBody(detail), `MCP, ${what}: the same detail`)
    t.equal(m.headers.get('www-authenticate'), mcpChallenge, `MCP, ${what}`)
  }

  const family = '00000000-0000-4000-8000-000000000007'
  const forMcp = (await ts.svc.oauth.tokens.issue({ userId: user.id, clientId, scopes: ['mcp:read'], resource: ts.svc.mcpUrl, family })).token
  const forRest = (await ts.svc.oauth.tokens.issue({ userId: user.id, clientId, scopes: ['mcp:read'], resource: REST, family })).token
  t.equal((await ts.get('/v1/orgs', `Bearer ${forRest}`)).status, 200, 'each works where it was issued for')
  const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'negative', version: '1' } } }
  t.equal((await rpc(ts.svc.mcpUrl, initialize, { authorization: `Bearer ${forMcp}` })).status, 200)

  const toRest = `This access token was issued for another resource (${ts.svc.mcpUrl}); this endpoint accepts tokens issued for ${REST}: ask for one with resource=${REST}.`
  const r = await ts.get('/v1/orgs', `Bearer ${forMcp}`)
  t.equal(r.status, 401, 'an MCP token on REST')
  t.same(r.body, restBody(toRest), 'the detail names the resource it was issued for and the one REST expects')
  t.equal(r.headers.get('www-authenticate'), `${restChallenge}, error="invalid_token", error_description="${toRest}"`, 'RFC 6750: invalid_token, and why')
  t.equal(r.headers.get('x-ratelimit-remaining'), null, 'a 401: no account, no quota headers')

  const toMcp = `This access token was issued for another resource (${REST}); this endpoint accepts tokens issued for ${ts.svc.mcpUrl}: ask for one with resource=${ts.svc.mcpUrl}.`
  const m = await rpc(ts.svc.mcpUrl, ping, { authorization: `Bearer ${forRest}` })
  t.equal(m.status, 401, 'a REST token on MCP')
  t.same(m.body, mcpBody(toMcp))
  t.equal(m.headers.get('www-authenticate'), `${mcpBearer}, error="invalid_token", error_description="${toMcp}", Basic realm="orgscan", charset="UTF-8"`)

  // Anything else wrong with a token keeps the one answer: the audience is named only for a token that is otherwise good.
  const invalid = 'The access token is invalid, expired or revoked.'
  const garbage = await ts.get('/v1/orgs', 'Bearer not.a.token')
  t.same(garbage.body, restBody(invalid))
  t.equal(garbage.headers.get('www-authenticate'), `${restChallenge}, error="invalid_token", error_description="${invalid}"`)
  const { privateKey } = await generateKeyPair('ES256')
  const claims = JSON.parse(Buffer.from(forMcp.split('.')[1], 'base64url').toString())
  const kid = JSON.parse(Buffer.from(forMcp.split('.')[0], 'base64url').toString()).kid
  const forged = await new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid, typ: 'at+jwt' }).sign(privateKey)
  t.same((await ts.get('/v1/orgs', `Bearer ${forged}`)).body, restBody(invalid), 'a token for MCP signed by another key: not told its audience')
  now += 16 * 60_000
  t.same((await ts.get('/v1/orgs', `Bearer ${forMcp}`)).body, restBody(invalid), 'an expired token for MCP: expired, whatever its audience')
  t.same((await rpc(ts.svc.mcpUrl, ping, { authorization: `Bearer ${forRest}` })).body, mcpBody(invalid))
})

t.test('the agent exemption needs a confidential client: a public client id proves nothing', async (t) => {
  await sql`UPDATE oauth_clients SET secret_hash = NULL WHERE client_id = 'osc_agentagentagentagentag'`
  ts.svc.adminChanged({ oauth: true })
  const { token: at } = await ts.svc.oauth.tokens.issue({ userId: user.id, clientId: 'osc_agentagentagentagentag', scopes: ['mcp:read'], resource: REST, family: '00000000-0000-4000-8000-000000000004' })
  const first = Number((await ts.get('/v1/orgs', `Bearer ${at}`)).headers.get('x-ratelimit-remaining'))
  const second = Number((await ts.get('/v1/orgs', `Bearer ${at}`)).headers.get('x-ratelimit-remaining'))
  t.equal(second, first - 1, 'a public client named as an agent is charged like any other')
})

t.test('a missing parameter is invalid_request (RFC 6749 §5.2, RFC 7009 §2.1), not a failed grant', async (t) => {
  const cases: Array<[string, Record<string, string>]> = [
    ['no grant_type', { client_id: clientId }],
    ['authorization_code without code', { grant_type: 'authorization_code', redirect_uri: REDIRECT, code_verifier: 'x'.repeat(43), client_id: clientId }],
    ['authorization_code without redirect_uri', { grant_type: 'authorization_code', code: 'abc', code_verifier: 'x'.repeat(43), client_id: clientId }],
    ['refresh_token without refresh_token', { grant_type: 'refresh_token', client_id: clientId }],
  ]
  for (const [what, form] of cases) t.match(await token(form), { status: 400, body: { error: 'invalid_request', error_description: /is required/ } }, what)
  const revoke = await fetch(`${issuer}/oauth/revoke`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ client_id: clientId }) })
  t.equal(revoke.status, 400, '/oauth/revoke without token')
  t.match(await revoke.json(), { error: 'invalid_request', error_description: 'token is required.' })
})

t.test('a refresh asking for fewer scopes narrows that access token only; the sign-in keeps its scopes', async (t) => {
  const c = await code(clientId)
  const first = await token({ grant_type: 'authorization_code', code: c.code, redirect_uri: REDIRECT, code_verifier: c.verifier, client_id: clientId })
  t.equal(first.body.scope, 'mcp:read mcp:write')
  const narrow = await token({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token, client_id: clientId, scope: 'mcp:read' })
  t.equal(narrow.body.scope, 'mcp:read', 'the access token has the scope asked for')
  const plain = await token({ grant_type: 'refresh_token', refresh_token: narrow.body.refresh_token, client_id: clientId })
  t.equal(plain.body.scope, 'mcp:read mcp:write', 'the next refresh without scope has the sign-in\'s scopes again')
  const write = await token({ grant_type: 'refresh_token', refresh_token: plain.body.refresh_token, client_id: clientId, scope: 'mcp:write' })
  t.equal(write.body.scope, 'mcp:write', 'and any of them can be asked for')
})

t.test("token exchange of an access token stays inside its sign-in: its scopes at most, revoked with it, never re-exchanged", async (t) => {
  const agent = await issueClient(sql, ts.svc.pepper, { account: user.accountId, name: 'Agent', redirectUris: ['https://agent.example/cb'], scopes: ['mcp:read', 'mcp:write'], tokenExchange: true })
  const agentAuth = 'Basic ' + Buffer.from(`${agent.clientId}:${agent.clientSecret}`).toString('base64')
  const c = await code(clientId, { scope: 'mcp:read' })
  const signIn = await token({ grant_type: 'authorization_code', code: c.code, redirect_uri: REDIRECT, code_verifier: c.verifier, client_id: clientId })
  t.equal(signIn.body.scope, 'mcp:read')
  const exchange = (subject: string, extra: Record<string, string> = {}) =>
    token({ grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange', subject_token: subject, subject_token_type: 'urn:ietf:params:oauth:token-type:access_token', resource: REST, ...extra }, agentAuth)
  t.match(await token({ grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange', subject_token_type: 'urn:ietf:params:oauth:token-type:access_token' }, agentAuth), { status: 400, body: { error: 'invalid_request', error_description: 'subject_token is required.' } })
  const wider = await exchange(signIn.body.access_token, { scope: 'mcp:write' })
  t.match(wider, { status: 400, body: { error: 'invalid_scope' } }, 'a scope the subject token does not grant is refused')
  const e = await exchange(signIn.body.access_token)
  t.equal(e.status, 200)
  t.equal(e.body.scope, 'mcp:read', "the exchanged token has the subject's scopes, not all of the exchanging client's")
  t.equal(e.body.refresh_token, undefined, 'and no refresh token')
  t.equal((await ts.get('/v1/orgs', `Bearer ${e.body.access_token}`)).status, 200)
  t.match(await exchange(e.body.access_token), { status: 400, body: { error: 'invalid_grant', error_description: /cannot exchange a token issued to itself/ } }, 'an exchanged token cannot be exchanged again to outlive its 15 minutes')
  const revoked = await fetch(`${issuer}/oauth/revoke`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token: signIn.body.refresh_token, client_id: clientId }) })
  t.equal(revoked.status, 200, 'the user ends the sign-in (RFC 7009)')
  t.equal((await ts.get('/v1/orgs', `Bearer ${e.body.access_token}`)).status, 401, 'which ends what was exchanged from it')
})
