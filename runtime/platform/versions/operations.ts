/**
 * The `orgscan versions` operations on the database (run by the CLI, or by the serving process through its admin
 * socket: runtime/platform/admin-ops.ts): list the table, release, deprecate and remove versions. A change is one transaction
 * over the locked rows, so two operators cannot interleave; every process re-reads the table when it commits
 * (runtime/platform/versions/live.ts).
 */
import type postgres from 'postgres'
import { AdminError } from '../admin.ts'
import type { Surface } from '../../core/plan.ts'
import { planChange, SURFACE_NAME, type VersionChange } from './rules.ts'
import { effectiveStatus, SERVED_VERSIONS, type VersionRow } from '../../core/version-state.ts'
import { markInitialized, readVersions, SURFACES, writeVersion } from './store.ts'
import { USAGE_DAYS } from './usage.ts'

export { SERVED_VERSIONS }

/** A row as `versions list` shows it: its status now (a deprecated version past its sunset date is `removed`). */
export interface ListedVersion extends VersionRow {
  /** API keys and OAuth users that called it in the last 90 days (as recorded so far). */
  callers: number
}

export async function listVersions(sql: postgres.Sql, surface: Surface | undefined, now: number): Promise<ListedVersion[]> {
  const rows = (await readVersions(sql)).filter((r) => surface === undefined || r.surface === surface)
  const counts = await sql<{ surface: string; version: string; n: number }[]>`
    SELECT surface, version, count(*)::int AS n FROM version_callers WHERE last_called_at >= ${new Date(now - USAGE_DAYS * 86_400_000)} GROUP BY 1, 2`
  return rows.map((r) => ({ ...listed(r, now), callers: counts.find((c) => c.surface === r.surface && c.version === r.name)?.n ?? 0 }))
}

function listed(r: VersionRow, now: number): Omit<ListedVersion, 'callers'> {
  return { ...r, status: effectiveStatus(r, now) }
}

/**
 * Applies a change to one surface, or (no surface) to both, all or nothing; returns the changed surfaces' rows.
 * Without a surface, a refusal on either surface refuses the whole change.
 */
export async function changeVersions(sql: postgres.Sql, surface: Surface | undefined, change: VersionChange, now: number, served: Readonly<Record<Surface, readonly string[]>> = SERVED_VERSIONS): Promise<ListedVersion[]> {
  const surfaces = surface ? [surface] : SURFACES
  const rows = await sql.begin(async (tx) => {
    const all = await readVersions(tx, { forUpdate: true })
    const plans = surfaces.map((s) => {
      try {
        return { surface: s, writes: planChange(s, all.filter((r) => r.surface === s), change, now, served[s]) }
      } catch (e) {
        if (e instanceof AdminError && !surface) throw new AdminError(`${e.message} (Without --surface the change applies to REST and MCP alike; --surface rest or --surface mcp changes one.)`)
        throw e
      }
    })
    for (const p of plans) for (const w of p.writes) await writeVersion(tx, p.surface, w.name, w.status, w.sunsetDate, new Date(now))
    await markInitialized(tx, 'orgscan versions')
    return readVersions(tx)
  })
  return rows.filter((r) => surfaces.includes(r.surface)).map((r) => ({ ...listed(r, now), callers: 0 }))
}

/** The versions a notice is about: `name` on the surface(s), each deprecated and not yet removed. */
export async function deprecatedTargets(sql: postgres.Sql, surface: Surface | undefined, name: string, now: number): Promise<VersionRow[]> {
  const rows = await readVersions(sql)
  const surfaces = surface ? [surface] : SURFACES
  const targets: VersionRow[] = []
  for (const s of surfaces) {
    const r = rows.find((x) => x.surface === s && x.name === name)
    const label = `${SURFACE_NAME[s]} ${name}`
    const st = r ? effectiveStatus(r, now) : undefined
    if (st === 'deprecated') targets.push(r!)
    else if (surface) {
      if (!r) throw new AdminError(`${SURFACE_NAME[s]} has no version ${name}.`)
      if (st === 'current') throw new AdminError(`${label} is current: deprecate it first (orgscan versions deprecate ${name} --sunset YYYY-MM-DD --surface ${s}); the notice announces its sunset date.`)
      throw new AdminError(`${label} was removed on ${r.sunsetDate}: there is nothing left to announce.`)
    }
  }
  if (targets.length === 0) throw new AdminError(`No surface has ${name} deprecated (and not yet removed): deprecate it first (orgscan versions deprecate ${name} --sunset YYYY-MM-DD).`)
  return targets
}
