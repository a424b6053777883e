/**
 * The sign-in and consent pages in a real headless browser (Debian's chromium through playwright-core): a user
 * signs in, sees the consent page naming the client, its redirect host and the scopes, approves, and lands on the
 * client's redirect URI with a code; a wrong password shows an error on the page. Screenshots of each page are kept
 * in test/artifacts/ (ignored by git). Skipped with a message when /usr/bin/chromium is absent (test/helpers/browser.ts).
 */
import { t } from '../helpers/file-test.ts'
import { launchBrowser } from '../helpers/browser.ts'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { startTestService } from '../helpers/service.ts'
import { authorizeUrl, pkce } from '../helpers/oauth.ts'
import { hashPassword } from '../../runtime/platform/oauth/crypto.ts'
import { embeddedRunOnly } from '../helpers/runs.ts'

embeddedRunOnly(t, 'The sign-in and consent pages in a browser')

const launched = await launchBrowser(t)
if (launched) {
  const { browser, artifacts } = launched
  const ts = await startTestService(t)
  const issuer = ts.svc.oauth.urls().issuer
  const user = ts.seed.users[0]
  const PASSWORD = 'correct horse battery staple'
  await ts.svc.db.sql`UPDATE users SET password_hash = ${await hashPassword(PASSWORD)} WHERE id = ${user.id}::bigint`
  // The client's redirect target: a real listener, so the browser lands somewhere.
  const landed: string[] = []
  const app = createServer((req, res) => {
    landed.push(req.url ?? '')
    res.writeHead(200, { 'content-type': 'text/html' })
    res.end('<!doctype html><title>Client</title><p>Back at the client.</p>')
  })
  await new Promise<void>((r) => app.listen(0, '127.0.0.1', r))
  t.teardown(() => app.close())
  const redirect = `http://127.0.0.1:${(app.address() as AddressInfo).port}/callback`
  const reg = await fetch(`${issuer}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: 'Desk Assistant', redirect_uris: [redirect] }) })
  const clientId = ((await reg.json()) as { client_id: string }).client_id

  t.test('sign in, consent, back to the client', async (t) => {
    const page = await browser.newPage()
    const { challenge } = pkce()
    await page.goto(authorizeUrl(issuer, { clientId, redirectUri: redirect, challenge, method: 'S256', state: 'browser-state', resource: ts.svc.mcpUrl }))
    t.equal(await page.locator('h1').textContent(), 'Sign in to orgscan')
    t.match(await page.textContent('main'), /Desk Assistant/, 'the page names the client')
    await page.screenshot({ path: `${artifacts}sign-in.png` })
    await page.fill('#email', user.email)
    await page.fill('#password', 'wrong password!')
    await page.click('button[type=submit]')
    t.match(await page.locator('.error').textContent(), /Wrong e-mail or password/)
    await page.screenshot({ path: `${artifacts}sign-in-error.png` })
    await page.fill('#password', PASSWORD)
    await page.click('button[type=submit]')
    t.equal(await page.locator('h1').textContent(), 'Allow access?')
    const text = (await page.textContent('main')) ?? ''
    t.match(text, /Desk Assistant/, 'consent names the client')
    t.match(text, new RegExp(`127\\.0\\.0\\.1:${(app.address() as AddressInfo).port}`), 'and the host it will be sent to')
    t.match(text, /mcp:read/, 'and the scopes')
    await page.screenshot({ path: `${artifacts}consent.png` })
    await page.click('button[value=approve]')
    await page.waitForURL(/\/callback\?/)
    const back = new URL(page.url())
    t.ok(back.searchParams.get('code'), 'the client receives a code')
    t.equal(back.searchParams.get('state'), 'browser-state')
    t.equal(back.searchParams.get('iss'), issuer)
    t.equal(landed.filter((u) => u.startsWith('/callback?')).length, 1, 'the browser landed once on the client callback')
    await page.close()
  })

  t.test('the pages forbid framing and carry no external asset', async (t) => {
    const page = await browser.newPage()
    const res = await page.goto(authorizeUrl(issuer, { clientId, redirectUri: redirect, challenge: pkce().challenge, method: 'S256' }))
    const h = res!.headers()
    t.match(h['content-security-policy'], /frame-ancestors 'none'/)
    t.equal(h['x-frame-options'], 'DENY')
    const html = await page.content()
    t.notMatch(html, /<script|<link|src="http/, 'no script, stylesheet or external source')
    await page.close()
  })
}
