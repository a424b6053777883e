/**
 * Quota windows (docs/contract.md §8 item 3): calendar-aligned in UTC, never rolling. The daily window starts at
 * 00:00 UTC and resets at the next 00:00 UTC; the monthly window starts at 00:00 UTC on the 1st and resets
 * at 00:00 UTC on the 1st of the next month. Computed with Date.UTC (which normalises day 32, month 12 …),
 * so month lengths, leap days and the year end need no special cases — never "add 30 days".
 */

export type WindowKind = 'day' | 'month'

export interface QuotaWindow {
  /** Inclusive start, epoch milliseconds (a UTC midnight). */
  start: number
  /** Exclusive end = the moment the window resets, epoch milliseconds (a UTC midnight). */
  reset: number
}

/** The daily window containing `nowMs`. */
export function dayWindow(nowMs: number): QuotaWindow {
  const d = new Date(nowMs)
  const y = d.getUTCFullYear()
  const m = d.getUTCMonth()
  const day = d.getUTCDate()
  return { start: Date.UTC(y, m, day), reset: Date.UTC(y, m, day + 1) }
}

/** The monthly window containing `nowMs`. */
export function monthWindow(nowMs: number): QuotaWindow {
  const d = new Date(nowMs)
  const y = d.getUTCFullYear()
  const m = d.getUTCMonth()
  return { start: Date.UTC(y, m, 1), reset: Date.UTC(y, m + 1, 1) }
}

/** Whole seconds from `nowMs` until `resetMs`, rounded up, at least 1 (Retry-After, RateLimit `t`). */
export function secondsUntil(resetMs: number, nowMs: number): number {
  return Math.max(1, Math.ceil((resetMs - nowMs) / 1000))
}

/** ISO 8601 UTC without milliseconds (window edges are whole seconds): 2028-03-01T00:00:00Z. */
export function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z')
}
