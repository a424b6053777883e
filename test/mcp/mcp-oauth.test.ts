/**
 * One-click connect, as a remote MCP client does it: the official SDK client, headless, against a running
 * instance — a 401 with resource metadata → discovery → automatic registration → authorize with PKCE and `resource`
 * → sign-in → consent → token → tool call → refresh (the SDK refreshes an expired access token by itself).
 */
import { t } from '../helpers/file-test.ts'
import { Client, StreamableHTTPClientTransport, UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/client'
import { startTestService } from '../helpers/service.ts'
import { Browser, signIn } from '../helpers/oauth.ts'
import { hashPassword } from '../../runtime/platform/oauth/crypto.ts'

let now = Date.now()
const ts = await startTestService(t, { clock: () => now })
const user = ts.seed.users[0]
const PASSWORD = 'correct horse battery staple'
await ts.svc.db.sql`UPDATE users SET password_hash = ${await hashPassword(PASSWORD)} WHERE id = ${user.id}::bigint`
const REDIRECT = 'http://127.0.0.1:33418/oauth/callback'

/** An in-memory provider, as a desktop assistant keeps it; `redirectToAuthorization` remembers the URL. */
function provider() {
  const store: { client?: any; tokens?: any; verifier?: string; discovery?: any; authorizeUrl?: URL; saved: number } = { saved: 0 }
  const p: OAuthClientProvider = {
    get redirectUrl() {
      return REDIRECT
    },
    get clientMetadata() {
      return { client_name: 'SDK Assistant', redirect_uris: [REDIRECT], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' }
    },
    clientInformation: () => store.client,
    saveClientInformation: (c) => void (store.client = c),
    tokens: () => store.tokens,
    saveTokens: (tk) => {
      store.tokens = tk
      store.saved++
    },
    redirectToAuthorization: (url) => void (store.authorizeUrl = url),
    saveCodeVerifier: (v) => void (store.verifier = v),
    codeVerifier: () => store.verifier!,
    saveDiscoveryState: (s) => void (store.discovery = s),
    discoveryState: () => store.discovery,
  }
  return { p, store }
}

t.test('discovery → registration → sign-in → token → tool call → refresh', async (t) => {
  const { p, store } = provider()
  const url = new URL(ts.svc.mcpUrl)
  const first = new StreamableHTTPClientTransport(url, { authProvider: p })
  const client = new Client({ name: 'sdk-oauth', version: '1.0.0' })
  await t.rejects(client.connect(first), UnauthorizedError, 'the first connect needs the user')
  t.ok(store.client?.client_id, 'the client registered itself')
  const authorize = store.authorizeUrl!
  t.equal(authorize.searchParams.get('code_challenge_method'), 'S256')
  t.equal(authorize.searchParams.get('resource'), ts.svc.mcpUrl, 'the token is asked for this MCP server')
  const back = await signIn(new Browser(), authorize.toString(), { email: user.email, password: PASSWORD }, REDIRECT)
  await first.finishAuth(back.searchParams)
  t.ok(store.tokens?.access_token && store.tokens?.refresh_token, 'tokens saved')
  const transport = new StreamableHTTPClientTransport(url, { authProvider: p })
  const connected = new Client({ name: 'sdk-oauth', version: '1.0.0' })
  await connected.connect(transport)
  t.teardown(() => connected.close())
  const orgs = await connected.callTool({ name: 'list_orgs', arguments: {} })
  t.notOk(orgs.isError)
  t.same((orgs.structuredContent as { data: Array<{ salesforceId: string }> }).data.map((o) => o.salesforceId).sort(), [...user.orgs].sort(), 'the user\'s orgs')
  const firstAccess = store.tokens.access_token
  // The access token expires: the SDK refreshes it (a rotated refresh token) and the call goes through.
  now += 16 * 60_000
  const saved = store.saved
  const again = await connected.callTool({ name: 'list_org_fields', arguments: { orgId: user.orgs[0], limit: 1 } })
  t.notOk(again.isError, 'the call succeeds after the refresh')
  t.ok(store.saved > saved, 'new tokens were saved')
  t.not(store.tokens.access_token, firstAccess, 'a new access token')
})
