/**
 * The `orgscan` command in tests: a database of the run's empty template, the environment that points the command at
 * it, migrated data folders of their own, and two ways to run a command — in this process (`run`, the whole command
 * as bin/orgscan.js runs it) and as the real executable (`spawnCli`).
 *
 * With `sharedDatabase`, commands run in process that target the harness's database share one connection to it, held
 * open until the test ends, instead of each starting the embedded database (about a second of CPU and 200 MB each);
 * opening and closing per command is what the spawned runs and cli-serve.test.ts exercise. The harness's embedded
 * folder is then locked by this process: a spawned command must be given a folder of its own (`migratedFolder()`).
 */
import type { Test } from 'tap'
import { spawn } from 'node:child_process'
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { createTestDatabase, scratchFolderPrefix, type TestDatabase } from './test-db.ts'
import { findTemplate } from './templates.ts'
import { TEST_NODE_FLAGS } from './node-flags.ts'
import { run as cli, type CliIO } from '../../bin/cli/main.ts'
import { openDatabase, type Database, type OpenOptions } from '../../runtime/platform/db/connect.ts'

const bin = new URL('../../bin/orgscan.js', import.meta.url).pathname

/**
 * The pepper of the harness's commands: PostgreSQL needs one (runtime/platform/secrets.ts), and a fixed one makes keys created
 * by the test process work in the commands and served processes it starts.
 */
export const CLI_TEST_PEPPER = 'cli-test-pepper-0123456789abcdefghij'

export type CliResult = { code: number; stdout: string; stderr: string }
type Env = Record<string, string | undefined>

export interface CliHarness {
  tdb: TestDatabase
  /** The environment every command gets (the test database, a fixed pepper: CLI_TEST_PEPPER). */
  env: Env
  /** A data folder of its own, migrated and empty (a copy of the run's template: PGlite's initdb is db-embedded's test). */
  migratedFolder(): string
  /** Runs the command in this process, as bin/orgscan.js would. */
  run(args: string[], extraEnv?: Env): Promise<CliResult>
  /**
   * Runs the real executable (node + the compiled command), as a user would. `timeoutMs`: killed (SIGKILL) after it,
   * for a command expected to exit that might serve instead; the result then has code -1.
   */
  spawnCli(args: string[], extraEnv?: Env, opts?: { timeoutMs?: number }): Promise<CliResult>
}

/**
 * Runs the command in this process with `env` (e.g. pointing at a test service's database: on the embedded database the
 * command then reaches that service through its admin socket); `io` adds streams such as a terminal.
 */
export async function runCli(args: string[], env: Env, io: Partial<Pick<CliIO, 'stdout' | 'terminal' | 'openDatabase'>> = {}): Promise<CliResult> {
  let stdout = ''
  let stderr = ''
  const code = await cli(args, { out: (l) => (stdout += l + '\n'), err: (l) => (stderr += l + '\n'), env, ...io })
  return { code, stdout, stderr }
}

export async function cliHarness(t: Test, opts: { sharedDatabase?: boolean } = {}): Promise<CliHarness> {
  const tdb = await createTestDatabase({ template: 'empty' })
  let shared: Promise<Database> | undefined
  t.teardown(async () => {
    if (shared) await (await shared).close()
    await tdb.drop()
  })
  const env: Env = { ...process.env, ORGSCAN_PEPPER: CLI_TEST_PEPPER, ORGSCAN_PEPPER_FILE: undefined, DATABASE_URL: undefined }
  if (tdb.databaseUrl) env.DATABASE_URL = tdb.databaseUrl
  else env.ORGSCAN_DATA_DIR = tdb.dataDir!
  const open: CliIO['openDatabase'] = opts.sharedDatabase
    ? async (o: OpenOptions) => {
        const ours = o.databaseUrl ? o.databaseUrl === tdb.databaseUrl : o.dataDir === tdb.dataDir
        if (!ours) return openDatabase(o)
        const db = await (shared ??= openDatabase({ databaseUrl: tdb.databaseUrl, dataDir: tdb.dataDir, poolSize: 2 }))
        return { ...db, close: async () => undefined }
      }
    : undefined
  return {
    tdb,
    env,
    migratedFolder() {
      const dir = mkdtempSync(scratchFolderPrefix())
      t.teardown(() => rmSync(dir, { recursive: true, force: true }))
      const template = findTemplate('empty', false)
      if (template) cpSync(template.dir, dir, { recursive: true })
      return dir
    },
    run: (args, extraEnv = {}) => runCli(args, { ...env, ...extraEnv }, { openDatabase: open }),
    spawnCli(args, extraEnv = {}, opts = {}) {
      return new Promise((resolve) => {
        const clean = Object.fromEntries(Object.entries({ ...env, ...extraEnv }).filter(([, v]) => v !== undefined)) as NodeJS.ProcessEnv
        const p = spawn(process.execPath, [...TEST_NODE_FLAGS, bin, ...args], { env: clean })
        const kill = opts.timeoutMs === undefined ? undefined : setTimeout(() => p.kill('SIGKILL'), opts.timeoutMs)
        let stdout = ''
        let stderr = ''
        p.stdout.on('data', (d) => (stdout += d))
        p.stderr.on('data', (d) => (stderr += d))
        p.on('exit', (code) => {
          clearTimeout(kill)
          resolve({ code: code ?? -1, stdout, stderr })
        })
      })
    },
  }
}
