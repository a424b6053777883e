/**
 * Sign-in delegated to an upstream OpenID Connect provider — a real one, `oidc-provider`, started on loopback with
 * its development login and consent pages. A user of the provider with a verified e-mail signs in: an invited user
 * (created by an administrator with that e-mail) is that user; an e-mail of a domain linked to an account creates
 * a user there with no org; anyone else is refused. The callback only continues a sign-in started here, once. A
 * trusted confidential client exchanges the provider's ID token for an access token (RFC 8693).
 */
import { endFile, t } from '../helpers/file-test.ts'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { startTestService } from '../helpers/service.ts'
import { authorizeUrl, Browser, pkce, type Page } from '../helpers/oauth.ts'
import { loadConfig } from '../../runtime/platform/config.ts'
import { issueClient } from '../../runtime/platform/oauth/clients.ts'
import { linkEmailDomain } from '../../runtime/platform/oauth/users.ts'
import { testTool } from '../helpers/test-tools.ts'

// oidc-provider is a test tool (test/helpers/test-tools.ts): without it the file has nothing to run.
const oidc = await testTool<{ default: typeof import('oidc-provider').default }>(t, 'oidc-provider')
if (!oidc) endFile()
const Provider = oidc.default

// The provider's listener first (its address is the issuer our service is configured with).
const upstreamServer = createServer()
await new Promise<void>((r) => upstreamServer.listen(0, '127.0.0.1', r))
t.teardown(() => upstreamServer.close())
const upstreamIssuer = `http://127.0.0.1:${(upstreamServer.address() as AddressInfo).port}`
const UPSTREAM_SECRET = 'upstream-client-secret-0123456789abcdef'
const base = loadConfig({}).oauth
const ts = await startTestService(t, { config: { oauth: { ...base, upstream: { issuer: upstreamIssuer, clientId: 'orgscan', clientSecret: UPSTREAM_SECRET, name: 'Acme SSO' } } } })
const issuer = ts.svc.oauth.urls().issuer
const sql = ts.svc.db.sql
const invited = ts.seed.users[0]

const provider = new Provider(upstreamIssuer, {
  clients: [{ client_id: 'orgscan', client_secret: UPSTREAM_SECRET, redirect_uris: [`${issuer}/oauth/callback`], token_endpoint_auth_method: 'client_secret_basic' }],
  findAccount: async (_ctx: unknown, id: string) => ({
    accountId: id,
    claims: async () => ({ sub: id, email: id, email_verified: !id.startsWith('unverified'), name: 'Upstream Person' }),
  }),
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
  features: { devInteractions: { enabled: true } },
  cookies: { keys: ['oauth-upstream-test-cookie-key'] },
  pkce: { required: () => true },
})
upstreamServer.on('request', provider.callback())

const REDIRECT = 'http://127.0.0.1:45678/cb'
const reg = await fetch(`${issuer}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: 'SSO App', redirect_uris: [REDIRECT] }) })
const clientId = ((await reg.json()) as { client_id: string }).client_id

/** Our sign-in page → "Sign in with Acme SSO" → the provider's login and consent → back through /oauth/callback. */
async function upstreamSignIn(browser: Browser, email: string): Promise<{ page: Page; verifier: string }> {
  const p = pkce()
  const ours = await browser.open(authorizeUrl(issuer, { clientId, redirectUri: REDIRECT, challenge: p.challenge, method: 'S256', state: 'sso' }))
  const link = /id="upstream" href="([^"]+)"/.exec(ours.text)
  if (!link) throw new Error('no upstream sign-in link on the page')
  let page = await browser.open(new URL(link[1].replace(/&amp;/g, '&'), issuer).toString(), REDIRECT)
  for (let step = 0; step < 4 && page.status === 200 && page.url.startsWith(upstreamIssuer); step++) {
    const next = await browser.submit(page, page.text.includes('name="login"') ? { login: email, password: 'any' } : {})
    page = next.status === 303 || next.status === 302 ? await browser.open(new URL(next.headers.get('location')!, next.url).toString(), REDIRECT) : next
  }
  return { page, verifier: p.verifier }
}

async function exchangeCode(back: URL, verifier: string) {
  const r = await fetch(`${issuer}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code: back.searchParams.get('code')!, redirect_uri: REDIRECT, code_verifier: verifier, client_id: clientId }),
  })
  return (await r.json()) as { access_token: string }
}

t.test('an invited user signs in through the provider and sees its granted orgs', async (t) => {
  const browser = new Browser()
  const { page, verifier } = await upstreamSignIn(browser, invited.email.toUpperCase())
  t.equal(page.status, 200, 'our consent page after the provider')
  t.match(page.text, /Allow access\?/)
  const done = await browser.submit(page, { decision: 'approve' }, 'action="/oauth/consent"')
  t.equal(done.status, 303)
  const back = new URL(done.headers.get('location')!)
  t.equal(back.searchParams.get('state'), 'sso')
  const tokens = await exchangeCode(back, verifier)
  const orgs = await ts.get('/v1/orgs', `Bearer ${tokens.access_token}`)
  t.same(orgs.body.data.map((o: { salesforceId: string }) => o.salesforceId).sort(), [...invited.orgs].sort())
})

t.test('a verified e-mail of a linked domain joins that account; others are refused', async (t) => {
  await linkEmailDomain(sql, invited.accountId, 'newhire.example')
  const browser = new Browser()
  const { page } = await upstreamSignIn(browser, 'pat@newhire.example')
  t.equal(page.status, 200)
  const [u] = await sql`SELECT account_id::text AS account_id FROM users WHERE email = 'pat@newhire.example'`
  t.equal(u?.account_id, invited.accountId, 'created in the linked account')
  const stranger = await upstreamSignIn(new Browser(), 'eve@elsewhere.example')
  t.equal(stranger.page.status, 403, 'an e-mail of no account and no linked domain')
  t.match(stranger.page.text, /no orgscan account/)
  const unverified = await upstreamSignIn(new Browser(), 'unverified@newhire.example')
  t.equal(unverified.page.status, 502, 'an unverified e-mail is not accepted')
  const [none] = await sql`SELECT 1 FROM users WHERE email = 'unverified@newhire.example'`
  t.notOk(none)
})

t.test('the callback continues only a sign-in started here, in this browser, once', async (t) => {
  const browser = new Browser()
  const p = pkce()
  const ours = await browser.open(authorizeUrl(issuer, { clientId, redirectUri: REDIRECT, challenge: p.challenge, method: 'S256' }))
  const link = /id="upstream" href="([^"]+)"/.exec(ours.text)![1].replace(/&amp;/g, '&')
  const toProvider = await browser.request(new URL(link, issuer).toString())
  const state = new URL(toProvider.headers.get('location')!).searchParams.get('state')!
  const other = new Browser()
  other.cookies.set('orgscan_browser', 'A'.repeat(43))
  t.equal((await other.request(`${issuer}/oauth/callback?code=x&state=${state}`)).status, 400, 'another browser')
  t.equal((await new Browser().request(`${issuer}/oauth/callback?code=x&state=${state}`)).status, 400, 'a browser without the sign-in cookie')
  const first = await browser.request(`${issuer}/oauth/callback?code=forged&state=${state}`)
  t.equal(first.status, 502, 'the right browser with a code the provider refuses')
  const replayed = await browser.request(`${issuer}/oauth/callback?code=forged&state=${state}`)
  t.equal(replayed.status, 400, 'a callback presented once is spent')
})

t.test('token exchange: a trusted confidential client trades a provider ID token', async (t) => {
  const c = await issueClient(sql, ts.svc.pepper, { account: invited.accountId, name: 'Agent platform', redirectUris: ['https://agents.example/cb'], scopes: ['mcp:read'], tokenExchange: true })
  const plain = await issueClient(sql, ts.svc.pepper, { account: invited.accountId, name: 'Plain', redirectUris: ['https://plain.example/cb'], scopes: ['mcp:read'] })
  // An ID token of the provider for the user, as the provider issues it to the orgscan client.
  const grant = new provider.Grant({ accountId: invited.email, clientId: 'orgscan' })
  grant.addOIDCScope('openid email profile')
  await grant.save()
  const client = await provider.Client.find('orgscan')
  const idToken = new provider.IdToken({ sub: invited.email, email: invited.email, email_verified: true }, { ctx: undefined as never, client })
  idToken.scope = 'openid email'
  const jwt = await idToken.issue({ use: 'idtoken', expiresAt: Math.floor(Date.now() / 1000) + 600 } as never).catch(() => undefined)
  if (!jwt) return t.fail('oidc-provider could not mint an ID token outside a request')
  const exchange = (id: string, secret: string) => fetch(`${issuer}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: 'Basic ' + Buffer.from(`${id}:${secret}`).toString('base64') },
    body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange', subject_token: jwt as string, subject_token_type: 'urn:ietf:params:oauth:token-type:id_token', resource: `${ts.url}/v1` }),
  })
  const r = await exchange(c.clientId, c.clientSecret)
  const body = (await r.json()) as { access_token: string; issued_token_type: string; refresh_token?: string }
  t.equal(r.status, 200, JSON.stringify(body))
  t.equal(body.issued_token_type, 'urn:ietf:params:oauth:token-type:access_token')
  t.notOk(body.refresh_token)
  t.equal((await ts.get('/v1/orgs', `Bearer ${body.access_token}`)).status, 200)
  const refused = await exchange(plain.clientId, plain.clientSecret)
  t.equal(refused.status, 400, 'a client not allowed to exchange')
})
