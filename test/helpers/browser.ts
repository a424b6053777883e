/**
 * A real headless browser for the page tests: Debian's chromium through playwright-core (one package without
 * dependencies, so a dev dependency rather than a test tool installed on first need), closed when the test ends, and the folder for screenshots (test/artifacts/,
 * ignored by git). Without /usr/bin/chromium the page tests are skipped with a message saying how to install it —
 * unless ORGSCAN_REQUIRE_BROWSER=1 (set by .ci/run once it has installed chromium), where a missing browser fails
 * instead of skipping.
 */
import type { Test } from 'tap'
import { existsSync, mkdirSync } from 'node:fs'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'

export const CHROMIUM = '/usr/bin/chromium'

/** `args`: more chromium switches (e.g. `--host-resolver-rules` to give a loopback page another host name). */
export async function launchBrowser(t: Test, opts: { args?: string[] } = {}): Promise<{ browser: Browser; artifacts: string } | undefined> {
  if (!existsSync(CHROMIUM)) {
    if (process.env.ORGSCAN_REQUIRE_BROWSER === '1') t.fail(`no browser at ${CHROMIUM}, and ORGSCAN_REQUIRE_BROWSER=1 requires one`)
    else t.pass(`skipped: no browser at ${CHROMIUM}; install Debian's chromium (apt-get install chromium) to run the page tests`, { skip: true })
    return undefined
  }
  const artifacts = new URL('../artifacts/', import.meta.url).pathname
  mkdirSync(artifacts, { recursive: true })
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', ...(opts.args ?? [])] })
  t.teardown(() => browser.close())
  return { browser, artifacts }
}

/**
 * What a page's console would show a developer as a problem: errors and warnings logged (a resource answered 4xx or
 * 5xx is one, favicon included), uncaught exceptions, and answers of 400 or more to anything the pages requested.
 * Chromium's verbose hints (e.g. an input without autocomplete) are not problems.
 */
export function consoleProblems(context: BrowserContext): string[] {
  const problems: string[] = []
  const watch = (page: Page) => {
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text().slice(0, 300)} (${m.location().url})`)
    })
    page.on('pageerror', (e) => problems.push(`uncaught: ${e.message.slice(0, 300)} (${page.url()})`))
    page.on('response', (r) => {
      if (r.status() >= 400) problems.push(`HTTP ${r.status()} ${r.url()}`)
    })
  }
  for (const p of context.pages()) watch(p)
  context.on('page', watch)
  return problems
}
