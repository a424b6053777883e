/**
 * The test a test file adds its tests to, and the groups of test files that share one process.
 *
 * A test file imports `t` from here rather than tap's root:
 * - run as a process of its own (`npx tap test/rest/rest-params.test.ts`, or a file directly under `test/`), `t` is
 *   tap's root, as `import t from 'tap'` would give;
 * - run by its group, `t` is the file's own subtest, named by its path: its tests, its teardowns and its failures are
 *   its own, and its teardowns (services closed, folders removed) run before the next file of the group starts.
 *
 * A group is a folder of test files (`test/rest/`, `test/mcp/`, …) that one file directly under `test/` runs in one
 * process, one file after the other, in name order (`runGroup`). tap starts a process per file under `test/` only, so
 * each test file either is a process of its own or belongs to exactly one group. A process costs about 1.5–2 s of CPU
 * on a 2-core machine before its first test (Node, tap, the test's modules compiled and optimised again, memory touched
 * for the first time): shared by a folder of files, the suite runs in far less time
 * (docs/adr/0045-test-processes-bundled-and-grouped.md). What a file gives up is a process of its own: a throw outside
 * its tests ends the group's process, and a file that depends on process-wide state (async hooks, its own process's
 * resource use) stays directly under `test/`. A file that measures latency under a load of its own making (the
 * 10-second attack of `test/alone/`) runs with the machine to itself: tap's `serial` runs the files of `test/alone/`
 * while no other test file runs. A file that does not apply to a run ends with `endFile()`, never `process.exit`.
 */
import { readdirSync } from 'node:fs'
import { relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import tap, { type Test } from 'tap'

/** The current test file's test: tap's root, or the file's subtest while its group runs it. A live binding. */
export let t: Test = tap

/** How long one file of a group may take before it fails by name (tap's own timeout still bounds the whole process). */
const FILE_TIMEOUT_MS = 120_000

/**
 * Runs every `*.test.ts` file of `folder` (a group's folder), one after the other in name order, each as a subtest named
 * by its path from the working folder. `load(name)` imports `<folder>/<name>.test.ts`; it is written in the group's file
 * (an import with a template literal), so the bundler of the test run sees every file it can load.
 */
export async function runGroup(folder: URL, load: (name: string) => Promise<unknown>): Promise<void> {
  const names = groupFiles(folder)
  const dir = relative(process.cwd(), fileURLToPath(folder))
  if (names.length === 0) throw new Error(`${dir}/ holds no test file`)
  try {
    for (const name of names) {
      await tap.test(`${dir}/${name}.test.ts`, { timeout: FILE_TIMEOUT_MS }, async (sub) => {
        t = sub
        await load(name).catch((err: unknown) => {
          if (!(err instanceof FileEnded)) throw err
        })
      })
    }
  } finally {
    t = tap
  }
}

/** Thrown by `endFile` in a file its group runs: the rest of the file's code is not run, and that is no failure. */
class FileEnded extends Error {}

/**
 * Ends the current test file here, after its test planned what it reports (e.g. `t.plan(0, reason)` for a file that
 * does not apply to this run): a file run as its own process exits with 0; a file its group runs stops there (a throw
 * its group expects), and the group goes on with its next file.
 */
export function endFile(): never {
  if (t === tap) process.exit(0)
  throw new FileEnded(`${t.name} ended early`)
}

/** The names (without `.test.ts`) of the test files of a group's folder, in the order the group runs them. */
export function groupFiles(folder: URL): string[] {
  return readdirSync(folder)
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => f.slice(0, -'.test.ts'.length))
    .sort()
}
