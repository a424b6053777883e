/**
 * The test tools a test needs (test/tools/install.mjs: installed on first need into the user's cache, not with the
 * project's dependencies). tap's `before` script installs them for a run; a test asks again here, which costs nothing
 * when they are there and installs them when the test runs on its own. When they cannot be installed (offline) the
 * test is skipped with the reason, unless ORGSCAN_REQUIRE_TEST_TOOLS=1 (set by .ci/run), where it fails instead.
 */
import type { Test } from 'tap'
import { ensureTestTools, importTool } from '../tools/install.mjs'

/** Says that `what` cannot run and why: a skip, or a failure where the tools are required. */
function unavailable(t: Test, what: string, why: string): undefined {
  if (process.env.ORGSCAN_REQUIRE_TEST_TOOLS === '1') t.fail(`${what}: ${why} (ORGSCAN_REQUIRE_TEST_TOOLS=1 requires the test tools)`)
  else t.pass(`skipped ${what}: ${why}; the test tools install on first need (node test/tools/install.mjs)`, { skip: true })
  return undefined
}

/** The module of a test tool (a package name, or a file of it such as `@modelcontextprotocol/sdk/client/index.js`). */
export async function testTool<M>(t: Test, name: string): Promise<M | undefined> {
  try {
    return (await importTool(name)) as M
  } catch (e) {
    return unavailable(t, name, e instanceof Error ? e.message : String(e))
  }
}

/** The folder the test tools are installed in (their packages are in its node_modules/), for tools run by path. */
export async function testToolsDir(t: Test, what: string): Promise<string | undefined> {
  const r = await ensureTestTools()
  return 'error' in r ? unavailable(t, what, r.error) : r.dir
}
