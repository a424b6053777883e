/**
 * Signing in from the reference page, end to end in Debian's chromium (through playwright-core), on a phone-sized
 * screen, with nothing registered beforehand: "Authorize" → OAuth (the page's own client is filled in) → the
 * service's sign-in page in a popup → the demo user's password → back on the page, authorized → "Try it out" on
 * `GET /v1/orgs` sends the user's Bearer token and gets 200 with the user's orgs. Every page of the journey keeps a
 * clean console. Then the same with the OAuth server on a listener of its own (MCP_PORT, no public URL): the page
 * signs in there. Under Enhanced MCP Security the dialog shows the page's client refused (access_denied), and an
 * administrator's client with the page's redirect URI, typed in with its secret, signs in. Screenshots are kept in test/artifacts/. Skipped with a message when /usr/bin/chromium is absent
 * (test/helpers/browser.ts).
 */
import { t } from '../helpers/file-test.ts'
import type { Test } from 'tap'
import type { Browser } from 'playwright-core'
import { consoleProblems, launchBrowser } from '../helpers/browser.ts'
import { startTestService, type TestService } from '../helpers/service.ts'
import { embeddedRunOnly } from '../helpers/runs.ts'
import { DEMO_USER } from '../../demo/orgs.ts'
import { demoPassword } from '../../runtime/platform/secrets.ts'
import { hashPassword } from '../../runtime/platform/oauth/crypto.ts'
import { issueClient, REFERENCE_PAGE_CLIENT_ID } from '../../runtime/platform/oauth/clients.ts'
import { updateAccount } from '../../runtime/platform/admin.ts'
import { loadConfig } from '../../runtime/platform/config.ts'

embeddedRunOnly(t, 'Signing in from the reference page in a browser')

/** The demo user's password, as `orgscan serve` sets it on a first start (derived from the pepper). */
async function demoSignIn(ts: TestService): Promise<string> {
  const password = demoPassword(ts.svc.pepper)
  await ts.svc.db.sql`UPDATE users SET password_hash = ${await hashPassword(password)} WHERE lower(email) = lower(${DEMO_USER.email})`
  return password
}

/**
 * Opens the page, signs the demo user in through "Authorize" (with `client`'s id and secret typed in, else the page's
 * own client) and, when the page shows the sign-in authorized, tries `GET /v1/orgs` with the token. Returns what the
 * dialog said and the console's problems.
 */
async function signInFromThePage(t: Test, browser: Browser, ts: TestService, o: { shots?: string; client?: { id: string; secret: string } } = {}) {
  const password = await demoSignIn(ts)
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true })
  t.teardown(() => context.close())
  const problems = consoleProblems(context)
  const page = await context.newPage()
  await page.goto(`${ts.url}/docs`)
  await page.waitForSelector('.opblock-summary-path', { timeout: 30_000 })
  await page.click('.auth-wrapper .authorize')
  const modal = page.locator('.modal-ux')
  const oauth = modal.locator('.auth-container', { hasText: 'authorizationCode' }).first()
  t.equal(await oauth.locator('input[id^="client_id"]').inputValue(), REFERENCE_PAGE_CLIENT_ID, 'the page\'s client is filled in')
  if (o.client) {
    await oauth.locator('input[id^="client_id"]').fill(o.client.id)
    await oauth.locator('input[id^="client_secret"]').fill(o.client.secret)
  }
  const popup = page.waitForEvent('popup')
  await oauth.locator('button.authorize').click()
  const signIn = await popup
  await signIn.waitForLoadState()
  t.equal(new URL(signIn.url()).pathname, '/oauth/sign-in', `the service's sign-in page opened (${new URL(signIn.url()).pathname})`)
  if (o.shots) await signIn.screenshot({ path: `${o.shots}docs-sign-in-page.png` })
  await signIn.fill('#email', DEMO_USER.email)
  await signIn.fill('#password', password)
  const closed = signIn.waitForEvent('close', { timeout: 30_000 })
  await signIn.click('button[type=submit]')
  // No consent page: the popup goes straight back to the page's redirect, which hands the code over and closes.
  await closed
  const outcome = oauth.getByText('Authorized').or(oauth.locator('.errors'))
  await outcome.first().waitFor({ timeout: 30_000 })
  if (await oauth.locator('.errors').count()) return { refused: (await oauth.locator('.errors').textContent()) ?? '', problems }
  t.equal(await oauth.locator('button.authorize').textContent(), 'Logout', 'back on the page, authorized')
  if (o.shots) await page.screenshot({ path: `${o.shots}docs-sign-in-authorized.png` })
  await modal.locator('.close-modal').click()

  const op = page.locator('.opblock', { has: page.locator('.opblock-summary-path[data-path="/v1/orgs"]') }).first()
  await op.locator('.opblock-summary-control').click()
  await op.locator('.try-out__btn').click()
  const sent = page.waitForRequest((r) => new URL(r.url()).pathname === '/v1/orgs')
  const answered = page.waitForResponse((r) => new URL(r.url()).pathname === '/v1/orgs')
  await op.locator('.execute').click()
  t.match((await sent).headers().authorization, /^Bearer [\w-]+\.[\w-]+\.[\w-]+$/, 'the call carries the user\'s access token')
  const res = await answered
  t.equal(res.status(), 200)
  const body = (await res.json()) as { data: Array<{ salesforceId: string }> }
  t.same(body.data.map((x) => x.salesforceId).sort(), [...DEMO_USER.orgs].sort(), 'the orgs granted to the demo user')
  const status = op.locator('.live-responses-table tr.response .response-col_status').first()
  await status.waitFor({ timeout: 30_000 })
  t.equal((await status.textContent())?.trim(), '200', 'the page shows the 200')
  if (o.shots) await op.locator('.responses-inner > div').first().screenshot({ path: `${o.shots}docs-sign-in-try-it.png` })
  return { refused: undefined, problems }
}

const launched = await launchBrowser(t)
if (launched) {
  const { browser, artifacts } = launched

  t.test('sign in from the page with nothing registered, and try a call with the token', async (t) => {
    const ts = await startTestService(t)
    const { refused, problems } = await signInFromThePage(t, browser, ts, { shots: artifacts })
    t.equal(refused, undefined, 'signed in')
    t.same(problems, [], 'no error, warning or failed request on the page, the sign-in page or the redirect page')
  })

  t.test('the same when the OAuth server is on a listener of its own', async (t) => {
    const defaults = loadConfig({}, {}).mcp
    const ts = await startTestService(t, { config: { mcp: { ...defaults, port: 0 } } })
    const issuer = ts.svc.oauth.urls().issuer
    t.not(new URL(issuer).origin, new URL(ts.url).origin, `the issuer ${issuer} is not the page's origin ${ts.url}`)
    const { refused, problems } = await signInFromThePage(t, browser, ts)
    t.equal(refused, undefined, 'signed in')
    t.same(problems, [], 'no error, warning or failed request on either listener\'s pages')
  })

  t.test('Enhanced MCP Security: the page\'s client is refused; an issued client with the page\'s redirect URI signs in', async (t) => {
    const ts = await startTestService(t)
    const user = ts.seed.users.find((u) => u.email === DEMO_USER.email)!
    await updateAccount(ts.svc.db.sql, user.accountId, { enhancedMcpSecurity: true })
    ts.svc.adminChanged({ account: user.accountId })
    const own = await signInFromThePage(t, browser, ts, { shots: `${artifacts}ems-` })
    t.match(own.refused, /access_denied/, `the dialog says access_denied (${own.refused?.trim().slice(0, 160)})`)
    const issued = await issueClient(ts.svc.db.sql, ts.svc.pepper, { account: user.accountId, name: 'Reference page (issued)', redirectUris: [`${ts.url}/docs/oauth2-redirect.html`], scopes: ['mcp:read'] })
    const withIssued = await signInFromThePage(t, browser, ts, { client: { id: issued.clientId, secret: issued.clientSecret } })
    t.equal(withIssued.refused, undefined, 'signed in with the issued client')
    t.same(withIssued.problems, [], 'no error, warning or failed request')
  })
}
