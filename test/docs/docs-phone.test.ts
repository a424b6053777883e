/**
 * The reference page on a phone (390 px wide, Debian's chromium through playwright-core): with every section open,
 * and one operation of each opened in turn, no text block is squeezed into a column narrower than 100 px (section,
 * operation, parameter, response and header descriptions, paragraphs, list items; an operation's one-line summary
 * may be short), nothing is wider than the screen, and the console is clean (no error, no warning, no 404, the
 * favicon's included). On a desktop, a section's description stays beside its name. Screenshots are kept in test/artifacts/.
 * Skipped with a message when /usr/bin/chromium is absent (test/helpers/browser.ts).
 */
import { t } from '../helpers/file-test.ts'
import { consoleProblems, launchBrowser } from '../helpers/browser.ts'
import { startTestService } from '../helpers/service.ts'
import { embeddedRunOnly } from '../helpers/runs.ts'

embeddedRunOnly(t, 'The reference page on a phone')

const PHONE = { width: 390, height: 844 }
const NARROWEST = 100

const launched = await launchBrowser(t)
if (launched) {
  const { browser, artifacts } = launched
  const ts = await startTestService(t)

  t.test('at 390 px, every text block is at least 100 px wide and the console is clean', async (t) => {
    const context = await browser.newContext({ viewport: PHONE, isMobile: true, hasTouch: true })
    t.teardown(() => context.close())
    const problems = consoleProblems(context)
    const page = await context.newPage()
    t.equal((await page.goto(`${ts.url}/docs`))?.status(), 200)
    await page.waitForSelector('.opblock-summary-path', { timeout: 30_000 })
    await page.screenshot({ path: `${artifacts}docs-phone.png` })
    // Every section open (the page opens them; a closed one is opened).
    for (const closed of await page.locator('h3.opblock-tag[data-is-open="false"]').all()) await closed.click()
    const sections = await page.locator('.opblock-tag-section').count()
    t.ok(sections > 20, `${sections} sections`)

    // Measured in the page. No named function inside: the test bundle would wrap it in a helper the page lacks.
    const measure = (root: number | null) => page.evaluate(({ root, narrowest }) => {
      const within = root === null ? document : document.querySelectorAll('.opblock-tag-section')[root]
      const blocks: Array<[string, string]> = [
        ['section description', 'h3.opblock-tag small'],
        ['operation description', '.opblock-description-wrapper .renderedMarkdown'],
        ['parameter description', 'td.parameters-col_description'],
        ['response description', '.response-col_description__inner'],
        ['response header description', 'table.headers td:nth-child(2)'],
        ['paragraph', 'p'],
        ['list item', '.renderedMarkdown li'],
        // A summary is a label sized to its text: short is fine, wrapped in a narrow column is not.
        ['operation summary', '.opblock-summary-description'],
      ]
      const squeezed: string[] = []
      let checked = 0
      for (const [kind, selector] of blocks) {
        for (const e of within.querySelectorAll(selector)) {
          const box = e.getBoundingClientRect()
          const text = (e.textContent ?? '').trim()
          if (box.width === 0 || box.height === 0 || text === '') continue
          checked++
          if (box.width >= narrowest) continue
          const range = document.createRange()
          range.selectNodeContents(e)
          const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size
          if (kind !== 'operation summary' || lines > 1) squeezed.push(`${kind} ${Math.round(box.width)} px wide on ${lines} lines: ${text.slice(0, 60)}`)
        }
      }
      return { checked, squeezed, scrollWidth: document.documentElement.scrollWidth }
    }, { root, narrowest: NARROWEST })

    const listed = await measure(null)
    t.ok(listed.checked > 80, `${listed.checked} section descriptions and summaries measured`)
    t.same(listed.squeezed, [], 'no section description or summary is squeezed')
    t.ok(listed.scrollWidth <= PHONE.width, `nothing wider than the screen (${listed.scrollWidth} px)`)
    // One operation of each section opened at a time (Swagger UI takes most of a second to draw one, and longer
    // with many open): its description, parameters, responses and their headers.
    let checked = 0
    const squeezed: string[] = []
    for (let i = 0; i < sections; i++) {
      const op = page.locator('.opblock-tag-section').nth(i).locator('.opblock').first()
      await op.locator('.opblock-summary-control').click()
      await op.locator('.responses-wrapper').waitFor({ timeout: 30_000 })
      if (i === 0) await op.screenshot({ path: `${artifacts}docs-phone-operation.png` })
      const m = await measure(i)
      checked += m.checked
      squeezed.push(...m.squeezed)
      if (m.scrollWidth > PHONE.width) squeezed.push(`section ${i}: the page is ${m.scrollWidth} px wide`)
      await op.locator('.opblock-summary-control').click()
    }
    t.ok(checked > 500, `${checked} text blocks of open operations measured`)
    t.same(squeezed, [], 'no text block narrower than 100 px, nothing wider than the screen')
    t.same(problems, [], 'the console shows no error, warning or failed request')
  })

  t.test('the favicon is served', async (t) => {
    const res = await fetch(`${ts.url}/favicon.ico`)
    t.equal(res.status, 200)
    t.equal(res.headers.get('content-type'), 'image/x-icon')
    const ico = Buffer.from(await res.arrayBuffer())
    t.same([...ico.subarray(0, 4)], [0, 0, 1, 0], 'an ICO file')
  })

  t.test('on a desktop, a section\'s description stays beside its name', async (t) => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    t.teardown(() => context.close())
    const problems = consoleProblems(context)
    const page = await context.newPage()
    await page.goto(`${ts.url}/docs`)
    await page.waitForSelector('.opblock-summary-path', { timeout: 30_000 })
    const tag = page.locator('h3.opblock-tag').first()
    const name = (await tag.locator('a').boundingBox())!
    const description = (await tag.locator('small').boundingBox())!
    t.ok(description.x >= name.x + name.width, 'the description starts right of the name')
    t.ok(description.y < name.y + name.height, 'on the same line')
    await page.screenshot({ path: `${artifacts}docs-desktop.png` })
    t.same(problems, [], 'the console shows no error, warning or failed request')
  })
}
