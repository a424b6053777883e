/** The quota stage's interface (contract §8). Issue 3 implements it; the pipeline only sees this. */
import type { ApiError } from '../errors.ts'
import type { Principal } from '../auth/principal.ts'

export interface QuotaCharge {
  allowed: boolean
  /** X-RateLimit-* (and RateLimit-*) headers for this response. */
  headers: Record<string, string>
  /** The 429 to send when not allowed. */
  error?: ApiError
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
  close(): Promise<void>
}
