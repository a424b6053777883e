/**
 * Browser-based clients (CORS, runtime/core/http/cors.ts): the MCP endpoint answers the origins its Host/Origin policy
 * accepts — their preflight, and every answer readable with the headers the transport needs — and nothing to any
 * other origin; the OAuth endpoints a public client posts to (registration, token, revocation) and the metadata answer
 * any origin. First the headers on the wire, then the same from a page in a real browser on another origin, and from
 * a page on an origin the policy refuses.
 */
import { t } from '../helpers/file-test.ts'
import { createServer, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { launchBrowser } from '../helpers/browser.ts'
import { basic, startTestService } from '../helpers/service.ts'
import { initializeBody } from '../helpers/mcp.ts'
import { createKey } from '../../runtime/platform/admin.ts'
import { embeddedRunOnly } from '../helpers/runs.ts'

embeddedRunOnly(t, 'CORS for browser-based clients')

const ts = await startTestService(t)
const sql = ts.svc.db.sql
const key = await createKey(sql, ts.svc.pepper, ts.seed.users[0].accountId)
const auth = basic(key.keyId, key.secret)
const mcp = ts.svc.mcpUrl
const issuer = ts.svc.oauth.urls().issuer

// The page's own server: another port is another origin. `evil.example` is mapped to it by the browser only.
const page = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'text/html' })
  res.end('<!doctype html><title>Browser client</title><p>A browser-based client.</p>')
})
await new Promise<void>((r) => page.listen(0, '127.0.0.1', r))
t.teardown(() => page.close())
const pagePort = (page.address() as AddressInfo).port
const allowed = `http://127.0.0.1:${pagePort}`
const refused = `http://evil.example:${pagePort}`

// (Launched before the first subtest: a subtest defined after a top-level await can come after tap has ended the file.)
const launched = await launchBrowser(t, { args: ['--host-resolver-rules=MAP evil.example 127.0.0.1'] })

const preflight = (url: string, origin: string, method = 'POST', headers = 'authorization, content-type, mcp-session-id') =>
  fetch(url, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers } })

t.test('MCP: the preflight of an accepted origin allows the transport\'s methods and headers', async (t) => {
  const r = await preflight(mcp, allowed)
  t.equal(r.status, 204)
  t.equal(r.headers.get('access-control-allow-origin'), allowed, 'that origin, not *')
  t.equal(r.headers.get('vary'), 'Origin')
  t.equal(r.headers.get('access-control-allow-methods'), 'POST, DELETE')
  for (const h of ['Authorization', 'Content-Type', 'Mcp-Session-Id', 'Mcp-Protocol-Version', 'Last-Event-ID']) {
    t.ok(r.headers.get('access-control-allow-headers')?.split(', ').includes(h), `allows ${h}`)
  }
  t.equal(r.headers.get('access-control-max-age'), '600')
  t.equal(r.headers.get('access-control-allow-credentials'), null, 'no cookies: never credentials')
  t.equal(await r.text(), '')
})

t.test('MCP: answers to an accepted origin are readable, session id and challenge included', async (t) => {
  const init = await fetch(mcp, { method: 'POST', headers: { origin: allowed, authorization: auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify(initializeBody()) })
  t.equal(init.status, 200)
  t.equal(init.headers.get('access-control-allow-origin'), allowed)
  t.match(init.headers.get('access-control-expose-headers'), /\bMcp-Session-Id\b/)
  t.ok(init.headers.get('mcp-session-id'))
  const denied = await fetch(mcp, { method: 'POST', headers: { origin: allowed, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify(initializeBody()) })
  t.equal(denied.status, 401)
  t.equal(denied.headers.get('access-control-allow-origin'), allowed, 'errors are readable too')
  t.match(denied.headers.get('access-control-expose-headers'), /\bWWW-Authenticate\b/)
})

t.test('MCP: refusals made before the endpoint (a GET with a body) are readable by an accepted origin too', async (t) => {
  const send = (origin: string) => new Promise<{ status: number; acao: string | undefined }>((resolve, reject) => {
    const req = request(mcp, { method: 'GET', headers: { origin, 'content-length': '10' } }, (res) => {
      res.resume()
      resolve({ status: res.statusCode ?? 0, acao: res.headers['access-control-allow-origin'] as string | undefined })
    })
    req.on('error', reject)
    req.end('0123456789')
  })
  t.same(await send(allowed), { status: 413, acao: allowed })
  t.same(await send(refused), { status: 413, acao: undefined }, 'and never by another')
  const rest = await fetch(`${ts.url}/v1/orgs`, { headers: { origin: allowed, authorization: auth } })
  t.equal(rest.headers.get('access-control-allow-origin'), null, 'REST answers no origin')
})

t.test('MCP: an origin the policy refuses gets a 403 and no CORS header, preflight included', async (t) => {
  for (const r of [await preflight(mcp, refused), await fetch(mcp, { method: 'POST', headers: { origin: refused, authorization: auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify(initializeBody()) })]) {
    t.equal(r.status, 403)
    t.equal(r.headers.get('access-control-allow-origin'), null)
    t.match(await r.json(), { error: { message: /Origin http:\/\/evil\.example:\d+ is not allowed/ } })
  }
  const noCors = await fetch(mcp, { method: 'OPTIONS' })
  t.equal(noCors.status, 405, 'an OPTIONS that is no preflight is a method MCP does not take')
  t.equal(noCors.headers.get('allow'), 'POST, DELETE')
})

t.test('OAuth: registration, token and revocation answer any origin; so do the metadata and keys', async (t) => {
  for (const path of ['/oauth/register', '/oauth/token', '/oauth/revoke']) {
    const r = await preflight(`${issuer}${path}`, refused, 'POST', 'content-type, authorization')
    t.equal(r.status, 204, path)
    t.equal(r.headers.get('access-control-allow-origin'), '*')
    t.equal(r.headers.get('access-control-allow-methods'), 'POST')
    t.equal(r.headers.get('access-control-allow-headers'), 'Authorization, Content-Type, X-Requested-With')
    const plain = await fetch(`${issuer}${path}`, { method: 'OPTIONS' })
    t.equal(plain.status, 204, 'an OPTIONS that is no preflight names the methods')
    t.equal(plain.headers.get('allow'), 'POST, OPTIONS')
  }
  const token = await fetch(`${issuer}/oauth/token`, { method: 'POST', headers: { origin: refused, 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=authorization_code&code=nope&client_id=osc_nobody&redirect_uri=http://127.0.0.1/cb&code_verifier=x' })
  t.equal(token.status, 401, 'an unknown client')
  t.equal(token.headers.get('access-control-allow-origin'), '*', 'an error a browser client can read')
  t.equal(token.headers.get('vary'), null, 'the same answer for every origin')
  for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/oauth-protected-resource/v1/mcp', '/oauth/jwks']) {
    const r = await preflight(`${issuer}${path}`, refused, 'GET', 'mcp-protocol-version')
    t.equal(r.status, 204, path)
    t.equal(r.headers.get('access-control-allow-headers'), 'MCP-Protocol-Version')
    t.equal((await fetch(`${issuer}${path}`)).headers.get('access-control-allow-origin'), '*')
  }
  const wrong = await fetch(`${issuer}/oauth/token`, { method: 'GET' })
  t.equal(wrong.status, 405)
  t.equal(wrong.headers.get('allow'), 'POST, OPTIONS')
  t.match(await wrong.json(), { error: { detail: 'GET is not allowed here; use POST.' } }, 'OPTIONS is no way to use it')
})

if (launched) {
  const { browser } = launched

  t.test('in a browser, a page on an accepted origin discovers, registers and talks MCP', async (t) => {
    const tab = await browser.newPage()
    t.teardown(() => tab.close())
    await tab.goto(`${allowed}/`)
    const seen = await tab.evaluate(async ({ mcp, issuer, auth }) => {
      const json = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
      const meta = await fetch(`${issuer}/.well-known/oauth-authorization-server`, { headers: { 'mcp-protocol-version': '2025-06-18' } })
      const reg = await fetch(`${issuer}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ redirect_uris: [`${location.origin}/cb`] }) })
      const unauthorized = await fetch(mcp, { method: 'POST', headers: json, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }) })
      const init = await fetch(mcp, { method: 'POST', headers: { ...json, authorization: auth }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'page', version: '1' } } }) })
      const session = init.headers.get('mcp-session-id') ?? ''
      const session2 = { ...json, authorization: auth, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' }
      await fetch(mcp, { method: 'POST', headers: session2, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })
      const call = await fetch(mcp, { method: 'POST', headers: session2, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_orgs', arguments: {} } }) })
      const end = await fetch(mcp, { method: 'DELETE', headers: { authorization: auth, 'mcp-session-id': session } })
      return {
        issuer: ((await meta.json()) as { issuer: string }).issuer,
        registered: reg.status,
        clientId: ((await reg.json()) as { client_id: string }).client_id,
        unauthorized: unauthorized.status,
        challenge: unauthorized.headers.get('www-authenticate'),
        session,
        orgs: ((await call.json()) as { result: { structuredContent: { data: unknown[] } } }).result.structuredContent.data.length,
        ended: end.status,
      }
    }, { mcp, issuer, auth })
    t.equal(seen.issuer, issuer, 'the metadata, after a preflight for MCP-Protocol-Version')
    t.equal(seen.registered, 201)
    t.match(seen.clientId, /^mcp_/)
    t.equal(seen.unauthorized, 401)
    t.match(seen.challenge, /^Bearer /, 'the challenge a client needs to find the authorization server')
    t.match(seen.session, /\S{16,}/, 'the session id is readable')
    t.ok(seen.orgs > 0, 'a tool call in the session')
    t.equal(seen.ended, 200, 'and DELETE ends it')
  })

  t.test('in a browser, a page on an origin the policy refuses cannot call MCP; it can use the OAuth endpoints', async (t) => {
    const tab = await browser.newPage()
    t.teardown(() => tab.close())
    await tab.goto(`${refused}/`)
    const seen = await tab.evaluate(async ({ mcp, issuer, auth }) => {
      const settled = await Promise.allSettled([
        fetch(mcp, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: auth }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }) }),
        fetch(`${issuer}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=refresh_token&refresh_token=nope&client_id=nobody' }),
      ])
      const [mcpOutcome, tokenOutcome] = settled.map((r) => (r.status === 'fulfilled' ? `status ${r.value.status}` : (r.reason as Error).name))
      return { mcp: mcpOutcome, token: tokenOutcome }
    }, { mcp, issuer, auth })
    t.equal(seen.mcp, 'TypeError', 'the browser blocks MCP for that origin')
    t.equal(seen.token, 'status 401', 'the token endpoint\'s error is readable from any origin')
  })
}
