/**
 * OAuth 2.0 sign-in, end to end with oauth4webapi as an independent, standards-checking client: discovery (RFC 8414,
 * RFC 9728), automatic registration (RFC 7591), authorization code with PKCE S256 and `resource` (RFC 8707), the
 * sign-in and consent pages, `iss` in the response (RFC 9207), the token endpoint, refresh-token rotation and reuse
 * detection, revocation (RFC 7009); then the token on both surfaces: a user sees only the orgs granted to it
 * (403 for another org of its account), on the same account quota as API keys.
 */
import { t } from '../helpers/file-test.ts'
import * as oauth from 'oauth4webapi'
import { startTestService } from '../helpers/service.ts'
import { authorizeUrl, Browser, pkce, signIn } from '../helpers/oauth.ts'
import { createSignInUser } from '../../runtime/platform/oauth/users.ts'
import { mcpClient } from '../helpers/mcp.ts'

const ts = await startTestService(t)
const issuer = ts.svc.oauth.urls().issuer
const sql = ts.svc.db.sql
const demoUser = ts.seed.users[0]
const PASSWORD = 'correct horse battery staple'
await sql`UPDATE users SET password_hash = ${(await import('../../runtime/platform/oauth/crypto.ts').then((m) => m.hashPassword(PASSWORD)))} WHERE id = ${demoUser.id}::bigint`
const grantedOrg = demoUser.orgs[0]
const otherOrg = ts.seed.orgs.find((o) => o.accountId === demoUser.accountId && !demoUser.orgs.includes(o.salesforceId))!
const insecure = { [oauth.allowInsecureRequests]: true }
const REDIRECT = 'http://127.0.0.1:53682/callback'

async function discover() {
  const as = await oauth.processDiscoveryResponse(new URL(issuer), await oauth.discoveryRequest(new URL(issuer), { algorithm: 'oauth2', ...insecure }))
  return as
}

async function register(as: oauth.AuthorizationServer, name = 'Test Assistant') {
  const res = await oauth.dynamicClientRegistrationRequest(as, { client_name: name, redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }, insecure)
  return oauth.processDynamicClientRegistrationResponse(res) as Promise<oauth.Client>
}

/** The whole sign-in: authorize → sign-in → consent → code → tokens. */
async function tokensFor(as: oauth.AuthorizationServer, client: oauth.Client, resource: string) {
  const { verifier, challenge } = pkce()
  const state = oauth.generateRandomState()
  const back = await signIn(new Browser(), authorizeUrl(issuer, { clientId: client.client_id, redirectUri: REDIRECT, challenge, method: 'S256', state, resource }), { email: demoUser.email, password: PASSWORD }, REDIRECT)
  const params = oauth.validateAuthResponse(as, client, back, state)
  const res = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, REDIRECT, verifier, { additionalParameters: { resource }, ...insecure })
  return oauth.processAuthorizationCodeResponse(as, client, res)
}

t.test('discovery documents', async (t) => {
  const as = await discover()
  t.equal(as.issuer, issuer)
  t.same(as.code_challenge_methods_supported, ['S256'])
  t.equal(as.authorization_response_iss_parameter_supported, true)
  t.ok(as.registration_endpoint)
  t.same(as.scopes_supported, ['mcp:read', 'mcp:write'])
  const rs = await oauth.processResourceDiscoveryResponse(new URL(ts.svc.mcpUrl), await oauth.resourceDiscoveryRequest(new URL(ts.svc.mcpUrl), insecure))
  t.equal(rs.resource, ts.svc.mcpUrl)
  t.same(rs.authorization_servers, [issuer])
  const rest = await fetch(`${issuer}/.well-known/oauth-protected-resource/v1`).then((r) => r.json())
  t.equal(rest.resource, `${ts.url}/v1`)
  const anon = await fetch(ts.svc.mcpUrl, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' })
  t.equal(anon.status, 401)
  t.equal(anon.headers.get('www-authenticate'), `Bearer resource_metadata="${issuer}/.well-known/oauth-protected-resource/v1/mcp", scope="mcp:read", Basic realm="orgscan", charset="UTF-8"`)
  const restAnon = await ts.get('/v1/orgs')
  t.match(restAnon.headers.get('www-authenticate'), /^Basic realm="orgscan", charset="UTF-8", Bearer realm="orgscan", resource_metadata="/)
})

t.test('sign-in with PKCE, consent once, tokens for REST: the user sees only its orgs, on the account quota', async (t) => {
  const as = await discover()
  const client = await register(as)
  t.match(client.client_id, /^mcp_/)
  const tokens = await tokensFor(as, client, `${ts.url}/v1`)
  t.equal(tokens.token_type, 'bearer')
  t.ok(tokens.refresh_token)
  t.equal(tokens.scope, 'mcp:read mcp:write')
  const bearer = `Bearer ${tokens.access_token}`
  const list = await ts.get('/v1/orgs', bearer)
  t.equal(list.status, 200)
  t.same(list.body.data.map((o: { salesforceId: string }) => o.salesforceId).sort(), [...demoUser.orgs].sort(), 'only the granted orgs are listed')
  t.equal((await ts.get(`/v1/orgs/${grantedOrg}/fields?limit=1`, bearer)).status, 200)
  const denied = await ts.get(`/v1/orgs/${otherOrg.salesforceId}/fields?limit=1`, bearer)
  t.equal(denied.status, 403, 'an org of the account the user was not granted is 403')
  t.ok(list.headers.get('x-ratelimit-remaining'), 'counted on the account quota')
  const apiKey = await ts.keyHeader(demoUser.accountId)
  const before = Number((await ts.get('/v1/account/quota', apiKey)).body.data.rateLimit.daily.remaining)
  await ts.get('/v1/orgs', bearer)
  const after = Number((await ts.get('/v1/account/quota', apiKey)).body.data.rateLimit.daily.remaining)
  t.equal(after, before - 1, 'a token request consumes the same account quota as an API key')
  // The second sign-in to the same client asks no consent.
  const again = await tokensFor(as, client, `${ts.url}/v1`)
  t.ok(again.access_token)
  // A token for REST is not accepted by MCP (audience).
  const mcp = await fetch(ts.svc.mcpUrl, { method: 'POST', headers: { authorization: bearer, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }) })
  t.equal(mcp.status, 401, 'a token is bound to its resource')
})

t.test('a token for MCP works with the SDK client, scoped to the user', async (t) => {
  const as = await discover()
  const client = await register(as)
  const tokens = await tokensFor(as, client, ts.svc.mcpUrl)
  const { client: mcp } = await mcpClient(t, ts.svc.mcpUrl, `Bearer ${tokens.access_token}`)
  const orgs = await mcp.callTool({ name: 'list_orgs', arguments: {} })
  t.notOk(orgs.isError)
  t.equal((orgs.structuredContent as { data: unknown[] }).data.length, demoUser.orgs.length)
  const denied = await mcp.callTool({ name: 'list_org_fields', arguments: { orgId: otherOrg.salesforceId, limit: 1 } })
  t.match(denied.structuredContent, { error: 'access_denied' })
  t.equal((await ts.get('/v1/orgs', `Bearer ${tokens.access_token}`)).status, 401, 'and not by REST')
})

t.test('refresh rotates; a rotated refresh token used again revokes the family', async (t) => {
  const as = await discover()
  const client = await register(as)
  const first = await tokensFor(as, client, `${ts.url}/v1`)
  const second = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), first.refresh_token!, insecure))
  t.not(second.refresh_token, first.refresh_token, 'a new refresh token')
  t.equal((await ts.get('/v1/orgs', `Bearer ${second.access_token}`)).status, 200)
  const reuse = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), first.refresh_token!, insecure)
  await t.rejects(oauth.processRefreshTokenResponse(as, client, reuse), { error: 'invalid_grant' } as never, 'the rotated token is refused')
  const afterReuse = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), second.refresh_token!, insecure)
  await t.rejects(oauth.processRefreshTokenResponse(as, client, afterReuse), { error: 'invalid_grant' } as never, 'the newest token of the family is revoked too')
  t.equal((await ts.get('/v1/orgs', `Bearer ${second.access_token}`)).status, 401, 'and the family\'s access tokens')
})

t.test('revocation (RFC 7009) and an administrator ending a user\'s tokens', async (t) => {
  const as = await discover()
  const client = await register(as)
  const a = await tokensFor(as, client, `${ts.url}/v1`)
  await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, oauth.None(), a.access_token, insecure))
  t.equal((await ts.get('/v1/orgs', `Bearer ${a.access_token}`)).status, 401, 'a revoked access token is refused')
  const b = await tokensFor(as, client, `${ts.url}/v1`)
  await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, oauth.None(), b.refresh_token!, insecure))
  await t.rejects(oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), b.refresh_token!, insecure)), { error: 'invalid_grant' } as never)
  t.equal((await ts.get('/v1/orgs', `Bearer ${b.access_token}`)).status, 401, 'revoking the refresh token ends its access tokens')
  const c = await tokensFor(as, client, `${ts.url}/v1`)
  t.equal((await ts.get('/v1/orgs', `Bearer ${c.access_token}`)).status, 200)
  const { revokeUserTokens } = await import('../../runtime/platform/oauth/users.ts')
  await revokeUserTokens(sql, demoUser.id, new Date(Date.now() + 1000))
  ts.svc.adminChanged({ oauth: true })
  t.equal((await ts.get('/v1/orgs', `Bearer ${c.access_token}`)).status, 401, 'an administrator ends every token of the user')
  await sql`UPDATE users SET tokens_valid_after = NULL WHERE id = ${demoUser.id}::bigint`
})

t.test('a user created with the CLI operation signs in with the one-time password', async (t) => {
  const u = await createSignInUser(sql, { account: demoUser.accountId, email: 'new.person@acme.example' })
  t.match(u.password, /^[a-z2-9]{24}$/)
  const as = await discover()
  const client = await register(as)
  const { verifier, challenge } = pkce()
  const back = await signIn(new Browser(), authorizeUrl(issuer, { clientId: client.client_id, redirectUri: REDIRECT, challenge, method: 'S256', state: 's' }), { email: 'NEW.person@acme.example', password: u.password! }, REDIRECT)
  const params = oauth.validateAuthResponse(as, client, back, 's')
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, REDIRECT, verifier, insecure))
  const list = await ts.get('/v1/orgs', `Bearer ${tokens.access_token}`)
  t.equal(list.status, 200)
  t.same(list.body.data, [], 'a new user sees no org until one is granted')
})

t.test('administration rules: unique e-mails without case, valid e-mails, known scopes, secrets never listed', async (t) => {
  const { issueClient, listClients, updateClient } = await import('../../runtime/platform/oauth/clients.ts')
  await t.rejects(createSignInUser(sql, { account: demoUser.accountId, email: demoUser.email.toUpperCase() }), /already exists/)
  await t.rejects(createSignInUser(sql, { account: demoUser.accountId, email: 'not-an-email' }), /is not an e-mail address/)
  await t.rejects(createSignInUser(sql, { account: demoUser.accountId, email: 'short@pw.example', password: 'short' }), /12 to 200 characters/)
  const c = await issueClient(sql, ts.svc.pepper, { account: demoUser.accountId, name: 'Admin rules', redirectUris: ['https://a.example/cb'], scopes: ['mcp:read'] })
  await t.rejects(updateClient(sql, c.clientId, { scopes: ['admin'] }), /Unknown scope "admin"/)
  await t.rejects(issueClient(sql, ts.svc.pepper, { account: demoUser.accountId, name: 'x', redirectUris: ['http://evil.example/cb'], scopes: ['mcp:read'] }), /must be https/)
  const listed = JSON.stringify(await listClients(sql, demoUser.accountId))
  t.notOk(listed.includes(c.clientSecret), 'the secret is not listed')
  const [row] = await sql`SELECT secret_hash FROM oauth_clients WHERE client_id = ${c.clientId}`
  t.notOk(Buffer.from(row.secret_hash).toString('utf8').includes(c.clientSecret), 'only a hash is stored')
})
