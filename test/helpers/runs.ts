/**
 * CI runs the suite twice: on the embedded database (`npm test`, what a fresh clone runs) and on PostgreSQL (the same
 * command with TEST_DATABASE_URL). A test file whose subject does not depend on the database server — the embedded
 * database itself, pages in a browser, the MCP protocol's conformance and wire table, the generated reference, the
 * typed client — calls `embeddedRunOnly` first: on the PostgreSQL run it is reported as skipped with the reason, since
 * running it there would check the same thing a second time. Tests of what the database decides (queries, filters,
 * quota, sessions, caches, imports) run on both.
 */
import type { Test } from 'tap'
import { endFile } from './file-test.ts'

export function embeddedRunOnly(t: Test, subject: string): void {
  if (process.env.TEST_DATABASE_URL === undefined) return
  t.plan(0, `${subject}: checked by the run on the embedded database (npm test without TEST_DATABASE_URL); PostgreSQL would not change what it checks`)
  endFile()
}
