/**
 * Version lifecycle (docs/contract.md §3, §9): current → deprecated (Deprecation/Sunset headers on REST, the status
 * in `server_info` and `GET /`) → removed (410 Gone). The table lives in the database (migration 007); these
 * functions read a copy of it in memory, so the check on every request costs no database round trip.
 */
import type { Clock } from './clock.ts'
import type { Surface } from './plan.ts'

export type StoredStatus = 'current' | 'deprecated' | 'removed'

/** The majors this build serves: REST's routes under /v1 (runtime/surfaces/rest/rest.ts), MCP's /v1/mcp (runtime/surfaces/mcp/endpoint.ts). */
export const SERVED_VERSIONS: Readonly<Record<Surface, readonly string[]>> = { rest: ['v1'], mcp: ['v1'] }

/** One row of `api_versions`. */
export interface VersionRow {
  surface: Surface
  /** v1, v2, … */
  name: string
  status: StoredStatus
  /** YYYY-MM-DD; set once deprecated. From this date (00:00 UTC) the version is removed (410). */
  sunsetDate: string | null
  releasedAt: string
  deprecatedAt: string | null
  removedAt: string | null
}

/** Where the serving code reads the table: the rows of a surface, ordered by major number. */
export interface VersionSource {
  rows(surface: Surface): readonly VersionRow[]
}

export type VersionState =
  | { state: 'current' }
  | { state: 'deprecated'; sunsetHttpDate: string; sunsetDate: string }
  | { state: 'removed' }
  /** Not in the table: this major was never released. */
  | { state: 'unknown' }

/** 00:00 UTC of a YYYY-MM-DD date, in epoch milliseconds. */
export function sunsetMs(d: string): number {
  return Date.parse(`${d}T00:00:00Z`)
}

/** The major number of `v12` (12). */
export function major(name: string): number {
  return Number(name.slice(1))
}

/** The state of a row at `now`: a deprecated version whose sunset date has come is removed. */
export function effectiveStatus(row: Pick<VersionRow, 'status' | 'sunsetDate'>, now: number): StoredStatus {
  if (row.status === 'removed') return 'removed'
  if (row.sunsetDate !== null && now >= sunsetMs(row.sunsetDate)) return 'removed'
  return row.status
}

export function versionState(rows: readonly VersionRow[], name: string, clock: Clock): VersionState {
  const e = rows.find((x) => x.name === name)
  if (!e) return { state: 'unknown' }
  const status = effectiveStatus(e, clock())
  if (status === 'deprecated') return { state: 'deprecated', sunsetDate: e.sunsetDate!, sunsetHttpDate: new Date(sunsetMs(e.sunsetDate!)).toUTCString() }
  return { state: status }
}

export interface VersionEntry {
  name: string
  status: 'current' | 'deprecated'
  /** YYYY-MM-DD, only when deprecated. */
  sunsetDate?: string
}

/** The discovery payload of `GET /` and `server_info` (docs/contract.md §9): the versions not yet removed. */
export function discoveryPayload(rows: readonly VersionRow[], clock: Clock): { versions: VersionEntry[] } {
  const now = clock()
  const versions: VersionEntry[] = []
  for (const r of rows) {
    const status = effectiveStatus(r, now)
    if (status === 'current') versions.push({ name: r.name, status })
    else if (status === 'deprecated') versions.push({ name: r.name, status, sunsetDate: r.sunsetDate! })
  }
  return { versions }
}

/** A table that never changes: v1 current on both surfaces, as migration 007 creates it (generated docs, tests). */
export function fixedVersions(rows: readonly VersionRow[] = DEFAULT_ROWS): VersionSource {
  return { rows: (surface) => rows.filter((r) => r.surface === surface) }
}

const DEFAULT_ROWS: readonly VersionRow[] = (['rest', 'mcp'] as const).map((surface) => ({
  surface, name: 'v1', status: 'current', sunsetDate: null, releasedAt: '1970-01-01T00:00:00.000Z', deprecatedAt: null, removedAt: null,
}))
