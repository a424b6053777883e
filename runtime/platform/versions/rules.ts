/**
 * The rules of a change to the version table (docs/contract.md §3, §9; docs/versioning.md), pure so they are tested
 * as a table. A change names one surface's version; the answer is the rows to write, or an AdminError saying why not
 * and what to do instead.
 *
 * - `add vN` releases the next major: the current one becomes deprecated with the sunset date given (the contract's
 *   "current → deprecated when a new major is released"). Refused when it would leave more than two supported majors
 *   (an older version still deprecated: remove it first, `sunset`), and for a major this build does not serve.
 * - `deprecate vN --sunset D` starts (or moves) a version's deprecation window: D at least 3 months from today, except
 *   that a window already running may always be lengthened. It never adds a supported major.
 * - `sunset vN` removes a deprecated version at once (410); a current one must be deprecated first.
 * "Supported" means not removed: current, or deprecated before its sunset date.
 */
import { AdminError } from '../admin.ts'
import type { Surface } from '../../core/plan.ts'
import { effectiveStatus, major, SERVED_VERSIONS, type StoredStatus, type VersionEntry, type VersionRow } from '../../core/version-state.ts'

export type VersionChange =
  | { kind: 'add'; name: string; sunsetDate?: string }
  | { kind: 'deprecate'; name: string; sunsetDate: string }
  | { kind: 'sunset'; name: string }

export interface VersionWrite {
  name: string
  status: StoredStatus
  sunsetDate: string | null
}

/** The shortest deprecation window, in calendar months (docs/contract.md §9). */
export const MIN_WINDOW_MONTHS = 3
/** At most this many majors are supported at once: the current one and the one before it. */
export const MAX_SUPPORTED = 2

export const SURFACE_NAME: Record<Surface, string> = { rest: 'REST', mcp: 'MCP' }

/** The UTC date of an instant, YYYY-MM-DD. */
export function utcDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10)
}

/** `date` plus `months` calendar months, the day clamped to the month's last (2026-11-30 + 3 → 2027-02-28). */
export function addMonths(date: string, months: number): string {
  const [y, m, d] = date.split('-').map(Number)
  const first = new Date(Date.UTC(y, m - 1 + months, 1))
  const last = new Date(Date.UTC(first.getUTCFullYear(), first.getUTCMonth() + 1, 0)).getUTCDate()
  first.setUTCDate(Math.min(d, last))
  return first.toISOString().slice(0, 10)
}

/** A real calendar date written YYYY-MM-DD. */
export function isDate(s: string): boolean {
  const t = Date.parse(`${s}T00:00:00Z`)
  return /^\d{4}-\d{2}-\d{2}$/.test(s) && Number.isFinite(t) && utcDate(t) === s
}

/**
 * What is wrong with a first-start version table (ORGSCAN_VERSIONS, ORGSCAN_MCP_VERSIONS) by the rules `orgscan
 * versions` keeps: names unique and served by this build, at most one current, at most two supported majors, a
 * deprecated version's sunset at least three months away. Empty when it may be adopted.
 */
export function firstStartProblems(surface: Surface, entries: readonly VersionEntry[], now: number): string[] {
  const problems: string[] = []
  const names = entries.map((e) => e.name)
  const served = SERVED_VERSIONS[surface]
  if (new Set(names).size !== names.length) problems.push('a version is listed twice')
  for (const n of names) if (!served.includes(n)) problems.push(`${n} is not served by this build (it serves ${served.join(', ')})`)
  if (entries.filter((e) => e.status === 'current').length > 1) problems.push('more than one version is current')
  if (entries.length > 2) problems.push(`at most two major versions are supported at once (${entries.length} listed)`)
  const earliest = addMonths(utcDate(now), MIN_WINDOW_MONTHS)
  for (const e of entries) {
    if (e.status === 'deprecated' && e.sunsetDate && e.sunsetDate < earliest) problems.push(`${e.name}: the sunset date ${e.sunsetDate} is less than ${MIN_WINDOW_MONTHS} months away (${earliest} at the earliest)`)
  }
  return problems
}

function days(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000)
}

/** The rows to write for `change` on one surface's rows at `now`; throws AdminError when the change is refused. */
export function planChange(surface: Surface, rows: readonly VersionRow[], change: VersionChange, now: number, served: readonly string[]): VersionWrite[] {
  const label = `${SURFACE_NAME[surface]} ${change.name}`
  const today = utcDate(now)
  const earliest = addMonths(today, MIN_WINDOW_MONTHS)
  const status = (r: VersionRow) => effectiveStatus(r, now)
  const supported = rows.filter((r) => status(r) !== 'removed')
  const row = rows.find((r) => r.name === change.name)
  const known = rows.map((r) => r.name).join(', ') || 'none'
  const checkWindow = (sunset: string, what: string) => {
    if (!isDate(sunset)) throw new AdminError(`--sunset must be a date written YYYY-MM-DD, got "${sunset}".`)
    if (sunset < earliest) {
      throw new AdminError(`${what}: the sunset date ${sunset} is ${days(today, sunset)} days away; a deprecation window is at least ${MIN_WINDOW_MONTHS} months (docs/versioning.md): choose ${earliest} or later.`)
    }
  }

  if (change.kind === 'add') {
    if (!/^v[1-9][0-9]{0,3}$/.test(change.name)) throw new AdminError(`A version is named v1, v2, …; got "${change.name}".`)
    const next = `v${Math.max(0, ...rows.map((r) => major(r.name))) + 1}`
    if (row) throw new AdminError(`${label} was already released (on ${row.releasedAt.slice(0, 10)}).`)
    if (change.name !== next) throw new AdminError(`The next ${SURFACE_NAME[surface]} major is ${next}, not ${change.name}.`)
    if (!served.includes(change.name)) {
      throw new AdminError(`This build of orgscan does not serve ${label} (it serves ${served.join(', ')}): release a major with the build that serves it, once every process runs that build.`)
    }
    const stillDeprecated = supported.filter((r) => status(r) === 'deprecated')
    if (supported.length + 1 > MAX_SUPPORTED) {
      const first = stillDeprecated[0] ?? supported[0]
      throw new AdminError(
        `Releasing ${label} would leave ${supported.length + 1} supported majors (${[...supported.map((r) => r.name), change.name].join(', ')}); at most ${MAX_SUPPORTED} are supported (docs/contract.md §9). ` +
          `Remove ${first.name} first: orgscan versions sunset ${first.name} --surface ${surface}.`,
      )
    }
    const current = supported.find((r) => status(r) === 'current')
    const writes: VersionWrite[] = [{ name: change.name, status: 'current', sunsetDate: null }]
    if (current) {
      if (change.sunsetDate === undefined) {
        throw new AdminError(`Releasing ${label} deprecates ${current.name}: give its sunset date with --sunset YYYY-MM-DD, at least ${MIN_WINDOW_MONTHS} months away (${earliest} or later).`)
      }
      checkWindow(change.sunsetDate, `Deprecating ${SURFACE_NAME[surface]} ${current.name}`)
      writes.push({ name: current.name, status: 'deprecated', sunsetDate: change.sunsetDate })
    } else if (change.sunsetDate !== undefined) {
      throw new AdminError(`--sunset gives the sunset date of the version a release deprecates, and ${SURFACE_NAME[surface]} has no current version; change a deprecated version's date with orgscan versions deprecate.`)
    }
    return writes
  }

  if (!row) throw new AdminError(`${SURFACE_NAME[surface]} has no version ${change.name} (it has ${known}).`)
  const st = status(row)
  if (st === 'removed') throw new AdminError(`${label} was removed${row.sunsetDate ? ` on ${row.sunsetDate}` : ''}; it answers 410 Gone.`)

  if (change.kind === 'deprecate') {
    if (st === 'deprecated' && row.sunsetDate !== null && isDate(change.sunsetDate) && change.sunsetDate >= row.sunsetDate) {
      // Lengthening a running window never shortens anyone's notice.
      return [{ name: row.name, status: 'deprecated', sunsetDate: change.sunsetDate }]
    }
    checkWindow(change.sunsetDate, st === 'deprecated' ? `Bringing ${label}'s sunset forward from ${row.sunsetDate}` : `Deprecating ${label}`)
    return [{ name: row.name, status: 'deprecated', sunsetDate: change.sunsetDate }]
  }

  if (st === 'current') {
    throw new AdminError(`${label} is current: deprecate it first (orgscan versions deprecate ${row.name} --sunset YYYY-MM-DD --surface ${surface}); a version is removed only after a deprecation window of at least ${MIN_WINDOW_MONTHS} months.`)
  }
  return [{ name: row.name, status: 'removed', sunsetDate: row.sunsetDate! < today ? row.sunsetDate : today }]
}
