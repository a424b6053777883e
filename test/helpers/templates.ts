/**
 * Database templates for one `npm test` run: creating a database and seeding it is most of what a test file used to
 * spend starting (a new PGlite folder alone is about 5 s), so tap's `before` script (run-before.ts) builds the
 * templates once — `empty` (migrated) and `seeded` (migrated, demo data at the tests' scale), and on the embedded
 * database `bare` (a PostgreSQL data folder with no tables: what a new folder is after PGlite's initdb) — and every test
 * copies one: a folder copy on the embedded database, `CREATE DATABASE … TEMPLATE` on PostgreSQL (where a new database
 * is already bare, so `bare` is no template there). tap's `after` script (run-after.ts) removes them.
 *
 * A template belongs to one run: its name carries the tap runner's process id (the parent of the before script and of
 * every test file), so a template left by a killed run is never used, and is removed by a later run's before script
 * once its runner is gone. Outside tap (a test file run with plain node) there are no templates: tests build their
 * database the slow way.
 */
import { accessSync, constants, existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { SeedResult } from '../../demo/seed.ts'

export type TemplateKind = 'bare' | 'empty' | 'seeded'

/** The demo seed scale of the `seeded` template (and of tests' seeded services). */
export const SEED_SCALE = 0.02

const PREFIX = 'orgscan-template-'
/** Embedded test databases of a run: `orgscan-test-<run>-<random>` folders (test-db.ts), removed with the run's templates. */
export const TEST_DB_PREFIX = 'orgscan-test-'

/** The run the current process belongs to (the tap runner's pid), or undefined outside tap. */
export function runId(): string | undefined {
  return process.env.TAP_BEFORE ? String(process.ppid) : undefined
}

let root: string | undefined
/**
 * Where a tap run keeps its embedded databases (templates and the copies tests use): `/dev/shm` where it is a
 * writable folder (Linux: memory, so copying a template and PGlite's writes cost no disk I/O — measured here about a
 * fifth less system CPU for the same test files), else the temp folder. Outside tap: the temp folder, where nothing
 * removes what a killed test leaves behind but the OS.
 */
export function scratchRoot(): string {
  if (root !== undefined) return root
  root = tmpdir()
  if (runId()) {
    try {
      if (statSync('/dev/shm').isDirectory()) {
        accessSync('/dev/shm', constants.W_OK)
        root = '/dev/shm'
      }
    } catch {
      // no /dev/shm here: the temp folder
    }
  }
  return root
}

export interface TemplateNames {
  /** Embedded: the data folder to copy. */
  dir: string
  /** PostgreSQL: the database to use as TEMPLATE. */
  database: string
  /** The seed result of a `seeded` template (what tests read as `ts.seed`). */
  seedFile: string
}

export function templateNames(run: string, kind: TemplateKind): TemplateNames {
  return {
    dir: join(scratchRoot(), `${PREFIX}${run}-${kind}`),
    database: `orgscan_tpl_${run}_${kind}`,
    seedFile: join(scratchRoot(), `${PREFIX}${run}-${kind}.seed.json`),
  }
}

/** The template of this run, if it was built (for the database in use). */
export function findTemplate(kind: TemplateKind, postgres: boolean): (TemplateNames & { seed?: SeedResult }) | undefined {
  const run = runId()
  if (!run) return undefined
  const names = templateNames(run, kind)
  if (!existsSync(names.seedFile)) return undefined
  const marker = JSON.parse(readFileSync(names.seedFile, 'utf8')) as { seed: SeedResult | null; embedded: boolean; postgres: boolean }
  if (postgres ? !marker.postgres : !marker.embedded) return undefined
  return { ...names, seed: marker.seed ?? undefined }
}

/** Whether a process id is alive. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** The runs whose templates or test databases are in the scratch root, and whether their runner still lives. */
export function templateRuns(): Array<{ run: string; alive: boolean }> {
  const runs = new Set<string>()
  for (const f of readdirSync(scratchRoot())) {
    const m = /^orgscan-(?:template|test)-(\d+)-/.exec(f)
    if (m) runs.add(m[1])
  }
  return [...runs].map((run) => ({ run, alive: alive(Number(run)) }))
}

/** Removes a run's template folders and seed files, and the test databases its killed tests left (PostgreSQL: see run-after.ts). */
export function removeTemplateFiles(run: string): void {
  for (const kind of ['bare', 'empty', 'seeded'] as const) {
    const n = templateNames(run, kind)
    rmSync(n.dir, { recursive: true, force: true })
    rmSync(n.seedFile, { force: true })
  }
  for (const f of readdirSync(scratchRoot())) if (f.startsWith(`${TEST_DB_PREFIX}${run}-`)) rmSync(join(scratchRoot(), f), { recursive: true, force: true })
}
