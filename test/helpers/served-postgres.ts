/**
 * A PostgreSQL database for the tests that run the service as processes of its own (`orgscan serve`, test/helpers/
 * server-process.ts) on one database: migrated and seeded with the demo data, a pool to it for the test's own reads
 * and writes, and the environment a served process needs. Dropped (and its pool ended) when the test ends.
 */
import type { Test } from 'tap'
import postgres from 'postgres'
import { migrate } from '../../runtime/platform/db/migrate.ts'
import { seedDemo, type SeedResult } from '../../demo/seed.ts'
import { compileRegistry } from '../../runtime/core/registry.ts'
import { registry } from '../../resources/index.ts'
import type { TestDatabase } from './test-db.ts'

export interface ServedPostgres {
  url: string
  /** A pool to it (two connections unless asked). */
  sql: postgres.Sql
  seed: SeedResult
  /** The environment of a served process on it (keys made with `pepper` work there), with `extra` added. */
  env(extra?: Record<string, string>): NodeJS.ProcessEnv
}

/** Seeds `db` (a new database: createFreshPostgresDatabase or postgresForTest, test-db.ts) at `scale`. */
export async function servedPostgres(
  t: Test,
  db: TestDatabase & { databaseUrl: string },
  pepper: string,
  { scale = 0.01, max = 2 }: { scale?: number; max?: number } = {},
): Promise<ServedPostgres> {
  t.teardown(() => db.drop())
  const sql = postgres(db.databaseUrl, { max, onnotice: () => undefined })
  // With a timeout: postgres.js's end() can wait forever for a connection that died mid-query (porsager/postgres#1142).
  t.teardown(() => sql.end({ timeout: 5 }))
  await migrate(sql)
  const seed = await seedDemo(sql, compileRegistry(registry), { scale })
  return {
    url: db.databaseUrl,
    sql,
    seed,
    env: (extra = {}) => ({ ...process.env, DATABASE_URL: db.databaseUrl, ORGSCAN_PEPPER: pepper, ORGSCAN_PEPPER_FILE: undefined, ORGSCAN_SEED_DEMO: 'false', ...extra }),
  }
}
