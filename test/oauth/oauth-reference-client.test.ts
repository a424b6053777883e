/**
 * The reference page's own OAuth client (docs/adr/0165-reference-page-on-phones-and-its-oauth-client.md), over HTTP:
 * it exists from the first start with the page's redirect URI at the service's address, signs a user in without a
 * consent page, gets a token for the REST API only and with `mcp:read` only, and follows Enhanced MCP Security (not
 * issued by an administrator: refused at /token). An administrator's revocation survives the next start. The page
 * itself, in a browser: test/docs/docs-sign-in.test.ts.
 */
import { t } from '../helpers/file-test.ts'
import { startTestService } from '../helpers/service.ts'
import { authorizeUrl, Browser, pkce } from '../helpers/oauth.ts'
import { hashPassword } from '../../runtime/platform/oauth/crypto.ts'
import { keepReferencePageClient, REFERENCE_PAGE_CLIENT_ID, revokeClient } from '../../runtime/platform/oauth/clients.ts'
import { updateAccount } from '../../runtime/platform/admin.ts'

const ts = await startTestService(t)
const sql = ts.svc.db.sql
const issuer = ts.svc.oauth.urls().issuer
const user = ts.seed.users[0]
const PASSWORD = 'correct horse battery staple'
await sql`UPDATE users SET password_hash = ${await hashPassword(PASSWORD)} WHERE id = ${user.id}::bigint`
const REDIRECT = `${ts.url}/docs/oauth2-redirect.html`

/** The first answer of /oauth/authorize for the page's client, and the browser that asked. */
async function authorize(p: { redirectUri?: string; scope?: string; resource?: string } = {}) {
  const browser = new Browser()
  const { verifier, challenge } = pkce()
  const page = await browser.request(authorizeUrl(issuer, { clientId: REFERENCE_PAGE_CLIENT_ID, redirectUri: p.redirectUri ?? REDIRECT, challenge, method: 'S256', state: 'st', scope: p.scope, resource: p.resource }))
  return { browser, page, verifier }
}

/** Signs the user in through the page's client: the redirect back (no consent page in between) and the token answer. */
async function signInThroughPage() {
  const { browser, page, verifier } = await authorize({ scope: 'mcp:read' })
  const form = await browser.open(new URL(page.headers.get('location')!, issuer).toString())
  const after = await browser.submit(form, { email: user.email, password: PASSWORD })
  const back = new URL(after.headers.get('location') ?? 'http://invalid/')
  const res = await fetch(`${issuer}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code: back.searchParams.get('code') ?? '', redirect_uri: REDIRECT, code_verifier: verifier, client_id: REFERENCE_PAGE_CLIENT_ID }),
  })
  return { after, back, token: { status: res.status, body: (await res.json()) as Record<string, string> } }
}

t.test('the client exists from the start, public, with the page as its one redirect URI', async (t) => {
  const [c] = await sql`SELECT account_id, redirect_uris, scopes, secret_hash, revoked_at FROM oauth_clients WHERE client_id = ${REFERENCE_PAGE_CLIENT_ID}`
  t.match(c, { account_id: null, redirect_uris: [REDIRECT], scopes: ['mcp:read'], secret_hash: null, revoked_at: null })
  const script = await (await fetch(`${ts.url}/docs/init.js`)).text()
  t.match(script, `"clientId":"${REFERENCE_PAGE_CLIENT_ID}"`, 'the page is told its client id')
  t.notMatch(script, 'responseInterceptor', 'one listener: the page signs in at its own origin')
})

t.test('a sign-in through it asks no consent and reads the REST API with the user\'s token, not MCP', async (t) => {
  const { after, back, token } = await signInThroughPage()
  t.equal(after.status, 303, 'straight back to the page after the password, no consent page')
  t.equal(`${back.origin}${back.pathname}`, REDIRECT)
  t.equal(back.searchParams.get('state'), 'st')
  t.equal(token.status, 200, `a token (${token.body.error ?? 'issued'})`)
  t.equal(token.body.scope, 'mcp:read')
  const orgs = await ts.get('/v1/orgs', `Bearer ${token.body.access_token}`)
  t.equal(orgs.status, 200)
  t.same(orgs.body.data.map((o: { salesforceId: string }) => o.salesforceId).sort(), [...user.orgs].sort(), 'the orgs granted to the user')
  const mcp = await fetch(ts.svc.mcpUrl, { method: 'POST', headers: { authorization: `Bearer ${token.body.access_token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' })
  t.equal(mcp.status, 401, 'the token is for the REST API only')
})

t.test('it gets neither MCP tokens, nor mcp:write, nor another redirect URI', async (t) => {
  const mcp = await authorize({ resource: ts.svc.mcpUrl })
  t.equal(mcp.page.status, 303)
  const back = new URL(mcp.page.headers.get('location')!)
  t.equal(`${back.origin}${back.pathname}`, REDIRECT, 'the error goes back to the page')
  t.equal(back.searchParams.get('error'), 'invalid_target')
  const write = await authorize({ scope: 'mcp:read mcp:write' })
  t.equal(new URL(write.page.headers.get('location')!).searchParams.get('error'), 'invalid_scope')
  const elsewhere = await authorize({ redirectUri: 'https://attacker.example/docs/oauth2-redirect.html' })
  t.equal(elsewhere.page.status, 400, 'another redirect URI is refused without a redirect')
  t.match(JSON.parse(elsewhere.page.text), { error: 'invalid_request', error_description: /[Cc]allback URL mismatch/ })
})

t.test('Enhanced MCP Security: the page\'s sign-in fails at /token with access_denied', async (t) => {
  await updateAccount(sql, user.accountId, { enhancedMcpSecurity: true })
  ts.svc.adminChanged({ account: user.accountId })
  t.teardown(async () => {
    await updateAccount(sql, user.accountId, { enhancedMcpSecurity: false })
    ts.svc.adminChanged({ account: user.accountId })
  })
  const { token } = await signInThroughPage()
  t.equal(token.status, 400)
  t.equal(token.body.error, 'access_denied')
  t.equal((await ts.get('/v1/orgs', await ts.keyHeader(user.accountId))).status, 200, 'an API key still reads the REST API from the page')
})

t.test('the redirect URI follows the public URL; a revocation stays', async (t) => {
  const again = (url: string) => keepReferencePageClient(sql, url, new Date())
  await again('https://api.example.com')
  t.match((await sql`SELECT redirect_uris FROM oauth_clients WHERE client_id = ${REFERENCE_PAGE_CLIENT_ID}`)[0], { redirect_uris: ['https://api.example.com/docs/oauth2-redirect.html'] })
  await again('http://10.1.2.3:3000')
  t.match((await sql`SELECT redirect_uris FROM oauth_clients WHERE client_id = ${REFERENCE_PAGE_CLIENT_ID}`)[0], { redirect_uris: [] }, 'plain http off loopback can be no redirect URI')
  await again(ts.url)
  await revokeClient(sql, REFERENCE_PAGE_CLIENT_ID)
  await again(ts.url)
  const [c] = await sql`SELECT revoked_at FROM oauth_clients WHERE client_id = ${REFERENCE_PAGE_CLIENT_ID}`
  t.ok(c.revoked_at, 'a start does not bring a revoked client back')
  const { page } = await authorize()
  t.equal(page.status, 400, 'the page\'s sign-in is then refused')
})
