/**
 * What the engine answers, built from a snapshot of both windows (docs/quota.md "Headers"): a charge
 * (allowed, or the 429 with its Retry-After) and a state read, with the headers and the window they describe.
 * What a client has left in a window is `limit − used + this process's unused units`, never below 0.
 */
import type { QuotaCharge, QuotaChargeWindow, QuotaState, QuotaWindowState } from '../../core/quota-types.ts'
import type { Snap } from './account.ts'
import { isoSeconds } from './windows.ts'
import { headerWindow, quotaHeaders, rateLimitedError, retryAfterSeconds, type WindowView } from './headers.ts'

export function windowView(s: Snap, kind: 'day' | 'month'): WindowView {
  return kind === 'day'
    ? { kind, limit: s.dayLimit, remaining: Math.max(0, s.dayLimit - s.dayUsed + s.units), start: s.dayStart, reset: s.dayReset }
    : { kind, limit: s.monthLimit, remaining: Math.max(0, s.monthLimit - s.monthUsed + s.units), start: s.monthStart, reset: s.monthReset }
}

/**
 * The window a charge describes. `resetAt` is rendered on demand (surfaces rarely read it, and a date per admitted
 * request is a measurable share of a cache hit), through a getter on the class: an object literal with an accessor
 * of its own is built on a slow path of V8's (as a literal it was 2 % of a cache hit's CPU in a profile here).
 */
class ChargeWindow implements QuotaChargeWindow {
  readonly name: 'daily' | 'monthly'
  readonly limit: number
  readonly remaining: number
  readonly retryAfterSeconds?: number
  readonly #reset: number
  constructor(w: WindowView, retryAfter?: number) {
    this.name = w.kind === 'day' ? 'daily' : 'monthly'
    this.limit = w.limit
    this.remaining = w.remaining
    if (retryAfter !== undefined) this.retryAfterSeconds = retryAfter
    this.#reset = w.reset
  }
  get resetAt(): string {
    return isoSeconds(this.#reset)
  }
}

function windowState(w: WindowView): QuotaWindowState {
  return { limit: w.limit, remaining: w.remaining, resetAt: isoSeconds(w.reset) }
}

/** An admitted request; `refund` runs at most once, however often the caller calls it. */
export function allowedAnswer(s: Snap, now: number, refund: () => void): QuotaCharge {
  const day = windowView(s, 'day')
  const month = windowView(s, 'month')
  let refunded = false
  return {
    allowed: true,
    headers: quotaHeaders(day, month, now),
    window: new ChargeWindow(headerWindow(day, month, false)),
    refund: () => {
      if (refunded) return
      refunded = true
      refund()
    },
  }
}

/** A throttled request: the 429, headers describing the blocking window. */
export function rejectedAnswer(s: Snap, now: number): QuotaCharge {
  const day = windowView(s, 'day')
  const month = windowView(s, 'month')
  const secs = retryAfterSeconds(day, month, now)
  return { allowed: false, headers: quotaHeaders(day, month, now, true), error: rateLimitedError(secs), window: new ChargeWindow(headerWindow(day, month, true), secs) }
}

/** An exempt request: admitted, nothing counted, the headers still describe the account. */
export function exemptAnswer(s: Snap, now: number): QuotaCharge {
  const day = windowView(s, 'day')
  const month = windowView(s, 'month')
  return { allowed: true, headers: quotaHeaders(day, month, now), window: new ChargeWindow(headerWindow(day, month, false)) }
}

/** Both windows for the quota endpoints. */
export function stateAnswer(s: Snap, now: number): QuotaState {
  const day = windowView(s, 'day')
  const month = windowView(s, 'month')
  return { body: { daily: windowState(day), monthly: windowState(month) }, headers: quotaHeaders(day, month, now) }
}
