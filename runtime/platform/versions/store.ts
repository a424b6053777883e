/** Reading and writing `api_versions` (migration 007). */
import type postgres from 'postgres'
import type { Surface } from '../../core/plan.ts'
import { major, type StoredStatus, type VersionRow } from '../../core/version-state.ts'

/** A `server_settings` row written by the first start (which may adopt ORGSCAN_VERSIONS) or the first CLI change. */
export const VERSIONS_INITIALIZED = 'versions_initialized'

export const SURFACES: readonly Surface[] = ['rest', 'mcp']

type Sql = postgres.Sql | postgres.TransactionSql

interface Raw {
  surface: Surface
  name: string
  status: StoredStatus
  sunset_date: string | null
  released_at: Date
  deprecated_at: Date | null
  removed_at: Date | null
}

const iso = (d: Date | null) => (d ? d.toISOString() : null)

function rowOf(r: Raw): VersionRow {
  return { surface: r.surface, name: r.name, status: r.status, sunsetDate: r.sunset_date, releasedAt: r.released_at.toISOString(), deprecatedAt: iso(r.deprecated_at), removedAt: iso(r.removed_at) }
}

/** Every row, REST's then MCP's, by major number; `forUpdate` locks them (inside a transaction). */
export async function readVersions(sql: Sql, opts: { forUpdate?: boolean } = {}): Promise<VersionRow[]> {
  const rows = opts.forUpdate
    ? await sql<Raw[]>`SELECT surface, name, status, sunset_date::text AS sunset_date, released_at, deprecated_at, removed_at FROM api_versions FOR UPDATE`
    : await sql<Raw[]>`SELECT surface, name, status, sunset_date::text AS sunset_date, released_at, deprecated_at, removed_at FROM api_versions`
  return rows.map(rowOf).sort((a, b) => SURFACES.indexOf(a.surface) - SURFACES.indexOf(b.surface) || major(a.name) - major(b.name))
}

/** Writes one row as it should now be (inserted when new); the timestamps of its transitions follow its status. */
export async function writeVersion(tx: Sql, surface: Surface, name: string, status: StoredStatus, sunsetDate: string | null, now: Date): Promise<void> {
  await tx`INSERT INTO api_versions (surface, name, status, sunset_date, released_at, deprecated_at, removed_at)
    VALUES (${surface}, ${name}, ${status}, ${sunsetDate}::date, ${now},
      ${status === 'current' ? null : now}, ${status === 'removed' ? now : null})
    ON CONFLICT (surface, name) DO UPDATE SET status = excluded.status, sunset_date = excluded.sunset_date,
      deprecated_at = CASE WHEN excluded.status = 'current' THEN NULL ELSE coalesce(api_versions.deprecated_at, excluded.deprecated_at) END,
      removed_at = CASE WHEN excluded.status = 'removed' THEN coalesce(api_versions.removed_at, excluded.removed_at) ELSE NULL END`
}

/** Marks the table as set (a later first start then adopts no ORGSCAN_VERSIONS); true when this call marked it. */
export async function markInitialized(tx: Sql, how: string): Promise<boolean> {
  const mine = await tx`INSERT INTO server_settings (name, value) VALUES (${VERSIONS_INITIALIZED}, ${how}) ON CONFLICT (name) DO NOTHING RETURNING 1`
  return mine.length > 0
}
