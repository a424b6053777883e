/** The quota stage's interface (docs/contract.md §8); the pipeline only sees this. */
import type { ApiError } from './errors.ts'
import type { Principal } from './principal.ts'

export interface QuotaCharge {
  allowed: boolean
  /** X-RateLimit-* (and RateLimit-*) headers for this response. */
  headers: Record<string, string>
  /** The 429 to send when not allowed. */
  error?: ApiError
  /**
   * The window the X-RateLimit-* headers describe (the blocking one on a 429), for surfaces without
   * headers (MCP `rate_limited` carries `limit` and `retryAfterSeconds`). Absent when nothing is known.
   */
  window?: QuotaChargeWindow
  /**
   * Gives the counted unit back, e.g. when the request then failed with a server error (5xx), so a
   * client retrying after a fault is not charged twice. Idempotent; absent when nothing was counted.
   */
  refund?: () => void
}

export interface QuotaChargeWindow {
  name: 'daily' | 'monthly'
  limit: number
  remaining: number
  /** Reset time, ISO 8601 UTC. */
  resetAt: string
  /** Set on a 429: seconds until the blocking window resets (also the Retry-After value). */
  retryAfterSeconds?: number
}

export interface QuotaWindowState {
  limit: number
  remaining: number
  resetAt: string
}

export interface QuotaState {
  body: { daily: QuotaWindowState; monthly: QuotaWindowState }
  headers: Record<string, string>
}

export interface QuotaService {
  /** Counts one request for the principal's account (unless exempt) and says whether it may proceed. */
  charge(p: Principal): Promise<QuotaCharge>
  /** Current state of both windows; free (consumes nothing). */
  state(p: Principal): Promise<QuotaState>
  /**
   * Optional: forget cached limits and return locally leased units for one account (or all), so a limit
   * change made by this process applies to the very next request. Other processes learn of changes
   * by LISTEN/NOTIFY (PostgreSQL server) or within the lease lifetime.
   */
  invalidate?(accountId?: string): void
  close(): Promise<void>
}
