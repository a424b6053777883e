/**
 * Versioned migrations: `runtime/platform/db/migrations/NNN_name.sql`, applied in order, each in its own transaction,
 * under an advisory lock so several processes starting at once migrate exactly once.
 */
import { readdirSync, readFileSync } from 'node:fs'
import type postgres from 'postgres'

const DIR = new URL('./migrations/', import.meta.url)
const LOCK_KEY = 7_211_004_553 // arbitrary, fixed: orgscan migrations

export interface Migration {
  version: number
  name: string
  sql: string
}

export function listMigrations(): Migration[] {
  return readdirSync(DIR)
    .filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((f) => ({ version: Number(f.slice(0, 3)), name: f.slice(4, -4), sql: readFileSync(new URL(f, DIR), 'utf8') }))
}

/** Applies pending migrations; returns the versions applied. */
export async function migrate(sql: postgres.Sql, log: (line: string) => void = () => undefined): Promise<number[]> {
  await sql`CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`
  const applied: number[] = []
  for (const m of listMigrations()) {
    const done = await sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${LOCK_KEY})`
      const exists = await tx`SELECT 1 FROM schema_migrations WHERE version = ${m.version}`
      if (exists.length > 0) return false
      await tx.unsafe(m.sql)
      await tx`INSERT INTO schema_migrations (version, name) VALUES (${m.version}, ${m.name})`
      return true
    })
    if (done) {
      applied.push(m.version)
      log(`applied migration ${String(m.version).padStart(3, '0')}_${m.name}`)
    }
  }
  return applied
}
