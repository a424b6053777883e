/**
 * Rate-limit response headers (docs/contract.md §8) and the 429 error (docs/contract.md §7 form 1).
 *
 * - `X-RateLimit-Limit/Remaining/Reset` describe ONE window: the blocking one when throttled (if both
 *   block, the one that resets later — the request stays blocked until then), otherwise the one closest to
 *   exhaustion = the smaller remaining COUNT ("requests left before throttling" is then literally
 *   min(daily, monthly)); on a tie the later-resetting window (monthly). Reset is Unix seconds.
 * - `RateLimit-Policy` and `RateLimit` (draft-ietf-httpapi-ratelimit-headers, structured-field Lists of
 *   Items whose values are sf-strings naming the policy) describe both windows, additively:
 *     RateLimit-Policy: "daily";q=10000;w=86400, "monthly";q=200000;w=2678400
 *     RateLimit: "daily";r=9876;t=3600, "monthly";r=190000;t=1209600
 *   `w` of the monthly policy is the length of the current calendar month in seconds.
 */
import { ApiError } from '../../core/errors.ts'
import type { WindowKind } from './windows.ts'
import { secondsUntil } from './windows.ts'

export interface WindowView {
  kind: WindowKind
  limit: number
  /** Units left (never negative). */
  remaining: number
  /** Window start and reset, epoch ms. */
  start: number
  reset: number
}

/** The window the X-RateLimit-* headers describe. `blocked`: this response is a 429. */
export function headerWindow(day: WindowView, month: WindowView, blocked: boolean): WindowView {
  if (blocked) {
    const dayBlocks = day.remaining <= 0
    const monthBlocks = month.remaining <= 0
    if (dayBlocks && monthBlocks) return day.reset > month.reset ? day : month
    if (dayBlocks) return day
    if (monthBlocks) return month
  }
  if (day.remaining !== month.remaining) return day.remaining < month.remaining ? day : month
  return day.reset > month.reset ? day : month
}

const NAME: Record<WindowKind, string> = { day: 'daily', month: 'monthly' }

export function quotaHeaders(day: WindowView, month: WindowView, nowMs: number, blocked = false): Record<string, string> {
  const w = headerWindow(day, month, blocked)
  return {
    'X-RateLimit-Limit': String(w.limit),
    'X-RateLimit-Remaining': String(w.remaining),
    'X-RateLimit-Reset': String(Math.floor(w.reset / 1000)),
    'RateLimit-Policy': `${policyItem(day)}, ${policyItem(month)}`,
    RateLimit: `${stateItem(day, nowMs)}, ${stateItem(month, nowMs)}`,
  }
}

function policyItem(v: WindowView): string {
  return `"${NAME[v.kind]}";q=${v.limit};w=${Math.round((v.reset - v.start) / 1000)}`
}

function stateItem(v: WindowView, nowMs: number): string {
  return `"${NAME[v.kind]}";r=${v.remaining};t=${secondsUntil(v.reset, nowMs)}`
}

/**
 * Seconds until the request can succeed again: until the blocking window resets (the later one when both
 * block).
 */
export function retryAfterSeconds(day: WindowView, month: WindowView, nowMs: number): number {
  return secondsUntil(headerWindow(day, month, true).reset, nowMs)
}

/** The 429 of docs/contract.md §7 (form 1): detail text fixed, Retry-After rendered from `retryAfterSeconds`. */
export function rateLimitedError(seconds: number): ApiError {
  return new ApiError('rate_limited', `Rate limit exceeded. Retry after ${seconds} seconds.`, { retryAfterSeconds: seconds })
}
