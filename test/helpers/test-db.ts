/**
 * A fresh, empty database for one test, never shared with another test or an earlier run:
 * - `TEST_DATABASE_URL` set (e.g. postgres://postgres@127.0.0.1:5432/test): a new database
 *   `orgscan_t_<pid>_<random>` is created on that server; pass `databaseUrl` to openDatabase.
 * - otherwise: a new empty temp folder; pass `dataDir` to openDatabase (embedded PGlite).
 * `drop()` removes it (close your Database first; on PostgreSQL leftover connections are terminated).
 */
import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import postgres from 'postgres'
import type { SeedResult } from '../../demo/seed.ts'
import { findTemplate, runId, scratchRoot, TEST_DB_PREFIX, type TemplateKind } from './templates.ts'

/** The prefix of a new embedded test database folder: in the run's scratch root, named by the run (templates.ts). */
export function scratchFolderPrefix(): string {
  const run = runId()
  return run ? path.join(scratchRoot(), `${TEST_DB_PREFIX}${run}-`) : path.join(os.tmpdir(), TEST_DB_PREFIX)
}

export interface TestDatabase {
  databaseUrl?: string
  dataDir?: string
  /** Set when the database is a copy of the run's `seeded` template: its demo data. */
  seed?: SeedResult
  /** For test names and messages, e.g. 'postgres database orgscan_t_123_ab12cd34' (no password). */
  label: string
  drop(): Promise<void>
}

/**
 * A database of its own for a test. `template`: start as a copy of the run's `bare` (initialised, no tables), `empty`
 * (migrated) or `seeded` template (templates.ts) when it exists; otherwise (or without `template`) an empty database.
 * `embedded`: an embedded database even when TEST_DATABASE_URL is set (for tests of the embedded database itself).
 */
export async function createTestDatabase(opts: { template?: TemplateKind; embedded?: boolean } = {}): Promise<TestDatabase> {
  const adminUrl = opts.embedded ? undefined : process.env.TEST_DATABASE_URL
  // A new PostgreSQL database is bare already.
  const wanted = adminUrl && opts.template === 'bare' ? undefined : opts.template
  const template = wanted ? findTemplate(wanted, adminUrl !== undefined) : undefined
  if (adminUrl) return { ...(await createFreshPostgresDatabase(adminUrl, template?.database)), seed: template?.seed }
  const dataDir = await fs.mkdtemp(scratchFolderPrefix())
  if (template) {
    copyFolder(template.dir, dataDir)
  }
  return {
    dataDir,
    seed: template?.seed,
    label: `embedded PGlite at ${dataDir}`,
    drop: once(() => fs.rm(dataDir, { recursive: true, force: true })),
  }
}

/**
 * Copies the template's files into `to` (which exists), once per embedded test service: a directory read and a
 * kernel-side file copy per file, about half the CPU of `cpSync` (which stats every file twice and sets its mode; the
 * promise-based `cp` took five times as much). A lock or socket a crashed builder might have left at the top is not
 * copied (the builder closes cleanly normally).
 */
function copyFolder(from: string, to: string, top = true): void {
  for (const e of readdirSync(from, { withFileTypes: true })) {
    const src = path.join(from, e.name)
    const dst = path.join(to, e.name)
    if (e.isDirectory()) {
      mkdirSync(dst, { mode: 0o700 }) // private, as the service keeps a data folder (else it fixes it on open)
      copyFolder(src, dst, false)
    } else if (!(top && /^(orgscan\.lock|\.s\.PGSQL\.\d+(\.lock)?)$/.test(e.name))) copyFileSync(src, dst)
  }
}

/**
 * A new database of its own for a test of PostgreSQL itself (the quota engine's SQL, several processes on one server),
 * on TEST_DATABASE_URL. Undefined when it is unset: without it the suite runs on the embedded database only, as the
 * README says, whatever server may answer on this machine, and the caller skips saying so (NEEDS_POSTGRES). With it, an
 * unreachable server is an error.
 */
export async function postgresForTest(): Promise<(TestDatabase & { databaseUrl: string }) | undefined> {
  const adminUrl = process.env.TEST_DATABASE_URL
  return adminUrl ? createFreshPostgresDatabase(adminUrl) : undefined
}

/** The skip message of a test that needs PostgreSQL, on a run without TEST_DATABASE_URL. */
export const NEEDS_POSTGRES = 'needs PostgreSQL: set TEST_DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/test) to run it'

/** Creates a uniquely named database on the server of `adminUrl` (which must allow CREATE DATABASE), optionally a copy of `template`. */
export async function createFreshPostgresDatabase(adminUrl: string, template?: string): Promise<TestDatabase & { databaseUrl: string }> {
  const name = `orgscan_t_${process.pid}_${randomBytes(4).toString('hex')}`
  await withAdmin(adminUrl, (sql) => sql.unsafe(`CREATE DATABASE "${name}"${template ? ` TEMPLATE "${template}"` : ''}`))
  return {
    databaseUrl: withDatabase(adminUrl, name),
    label: `postgres database ${name}`,
    drop: once(() =>
      withAdmin(adminUrl, (sql) => sql.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).then(() => undefined),
    ),
  }
}

async function withAdmin<T>(adminUrl: string, fn: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const sql = postgres(adminUrl, { max: 1, onnotice: () => {}, connect_timeout: 10 })
  try {
    return await fn(sql)
  } finally {
    await sql.end({ timeout: 5 })
  }
}

/** The same URL with another database name (the path), query string kept. */
export function withDatabase(url: string, database: string): string {
  const q = url.search(/[?#]/)
  const base = q >= 0 ? url.slice(0, q) : url
  const rest = q >= 0 ? url.slice(q) : ''
  const schemeEnd = base.indexOf('://') + 3
  const slash = base.indexOf('/', schemeEnd)
  return `${slash >= 0 ? base.slice(0, slash) : base}/${encodeURIComponent(database)}${rest}`
}

function once(fn: () => Promise<void>): () => Promise<void> {
  let p: Promise<void> | undefined
  return () => (p ??= fn())
}
