/**
 * The reference page at GET /docs in a real browser (Debian's chromium through playwright-core), with no internet:
 * every resource's endpoints appear, and "Try it out" with an API key gets a 200 from the running service. A
 * screenshot is kept in test/artifacts/. On a phone: docs-phone.test.ts; signing in with OAuth: docs-sign-in.test.ts. Skipped with a message when /usr/bin/chromium is absent (test/helpers/browser.ts).
 */
import { t } from '../helpers/file-test.ts'
import { launchBrowser } from '../helpers/browser.ts'
import { startTestService } from '../helpers/service.ts'
import { compileRegistry } from '../../runtime/core/registry.ts'
import { registry } from '../../resources/index.ts'
import { embeddedRunOnly } from '../helpers/runs.ts'

embeddedRunOnly(t, 'The reference page in a browser')

const launched = await launchBrowser(t)
if (launched) {
  const { browser, artifacts } = launched
  const ts = await startTestService(t)
  const org = ts.seed.orgs.find((o) => o.large)!
  const { createKey } = await import('../../runtime/platform/admin.ts')
  const key = await createKey(ts.svc.db.sql, ts.svc.pepper, org.accountId)

  t.test('every endpoint is listed, and try-it-out with a key succeeds, offline', async (t) => {
    const page = await browser.newPage()
    const outside: string[] = []
    page.on('request', (r) => {
      if (!r.url().startsWith(ts.url) && !r.url().startsWith('data:')) outside.push(r.url())
    })
    const res = await page.goto(`${ts.url}/docs`)
    t.equal(res?.status(), 200)
    await page.waitForSelector('.opblock-summary-path', { timeout: 30_000 })
    const paths = new Set(await page.$$eval('.opblock-summary-path', (els) => els.map((e) => e.getAttribute('data-path'))))
    for (const c of compileRegistry(registry)) {
      const base = c.decl.scope === 'org' ? `/v1/orgs/{orgId}/${c.decl.path}` : `/v1/${c.decl.path}`
      if (c.decl.operations.list) t.ok(paths.has(base), `${base} is on the page`)
    }
    await page.screenshot({ path: `${artifacts}docs.png` })
    t.equal(await page.locator('.errors-wrapper').count(), 0, 'Swagger UI shows no warning or error box about the document')
    await page.click('.auth-wrapper .authorize')
    const modal = page.locator('.modal-ux')
    await modal.locator('input[type=text]').first().fill(key.keyId)
    await modal.locator('input[type=password]').first().fill(key.secret)
    await modal.locator('button.authorize').first().click()
    await modal.locator('button.btn-done').first().click()
    const op = page.locator('.opblock', { has: page.locator('.opblock-summary-path[data-path="/v1/orgs"]') }).first()
    await op.locator('.opblock-summary').click()
    await op.locator('.try-out__btn').click()
    await op.locator('.execute').click()
    const status = op.locator('.live-responses-table tr.response .response-col_status').first()
    await status.waitFor({ timeout: 30_000 })
    t.equal((await status.textContent())?.trim(), '200', 'the request from the page succeeds')
    await page.screenshot({ path: `${artifacts}docs-try-it.png`, fullPage: false })
    t.same(outside, [], 'nothing is loaded from outside the service')
    await page.close()
  })
}
