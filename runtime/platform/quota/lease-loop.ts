/**
 * The lease loop of one account (docs/quota.md "Policy"): serves the requests waiting for units with as
 * many lease calls as needed, one call at a time per account (requests arriving meanwhile queue and are
 * served in order by its grant). Each call asks for the waiting requests plus a prefetch; units of the
 * same windows on their way back are waited for, queued ones travel with the call. A grant smaller than
 * the need means a window is exhausted: the rest get the 429 (nothing consumed) and further requests are
 * answered locally for `blockedRecheckMs`. A failed call fails the waiting requests with 503.
 */
import { ApiError } from '../../core/errors.ts'
import type { Logger } from '../../core/log.ts'
import type { QuotaCharge } from '../../core/quota-types.ts'
import { headerWindow } from './headers.ts'
import type { QuotaSettings } from './pg-quota-options.ts'
import type { QuotaStats } from './quota-stats.ts'
import { accountGone, quotaUnavailable } from './quota-errors.ts'
import { isCurrent, noteCounts, roll, snapshot, windowsStale, type Acct, type Snap } from './account.ts'
import { windowView } from './charge-answer.ts'
import { prefetchUnits } from './request-rate.ts'
import type { LeaseRow, QuotaSql } from './quota-sql.ts'
import { windowsKey, type Settlement } from './settlement.ts'
import { leaseUnits } from './lease-call.ts'

/** What the loop needs from the engine. */
export interface LeaseLoopHost {
  /** The answer of an admitted request (counted; carries its refund). */
  allowed(s: Snap, a: Acct, now: number): QuotaCharge
  /** The answer of a throttled request. */
  rejected(s: Snap, now: number): QuotaCharge
  /** The account no longer exists: drop its state. */
  forget(a: Acct): void
}

export class LeaseLoop {
  constructor(
    private readonly o: QuotaSettings,
    private readonly clock: () => number,
    private readonly log: Logger,
    private readonly stats: QuotaStats,
    private readonly db: QuotaSql,
    private readonly settlement: Settlement,
    private readonly host: LeaseLoopHost,
  ) {}

  /**
   * Serves the account's queued requests, one lease call at a time. `ahead`: a refill while units are
   * still left (no request waiting yet): one call for prefetch only.
   */
  async run(a: Acct, ahead = false): Promise<void> {
    a.leasing = true
    try {
      for (;;) {
        const now = this.clock()
        if (windowsStale(a, now)) roll(a, now, this.settlement)
        while (a.units > 0 && a.waiters.length > 0) {
          a.units--
          a.lastUse = now
          a.waiters.shift()!.resolve(this.host.allowed(a, a, now))
        }
        const need = Math.min(a.waiters.length, this.o.maxLease)
        if (need > 0 && a.blockedUntil > now) {
          this.rejectAll(a, a, now)
          break
        }
        const prefetch = prefetchUnits(this.o, a.rate, now, need)
        if (need === 0) {
          if (!ahead || prefetch === 0) break
          ahead = false
        }
        const dayStart = a.dayStart
        const monthStart = a.monthStart
        const gen = a.gen
        const key = windowsKey(a.id, dayStart, monthStart)
        // Units of these windows on their way back must be back before we ask (else they look taken);
        // units waiting to go back travel with the lease call instead.
        const returning = this.settlement.inFlight(key)
        if (returning) await returning
        const giveBack = this.settlement.takeQueued(key)
        let row: LeaseRow | undefined
        try {
          row = await leaseUnits(this.db, this.settlement, this.stats, { accountId: a.id, dayStart, monthStart, need, prefetch, giveBack })
        } catch (e) {
          // leaseUnits has settled `giveBack`: sent again when the lease certainly failed, else with the
          // lease's cancel (the units were applied iff the lease was).
          a.aheadPauseUntil = this.clock() + this.o.blockedRecheckMs
          this.failAll(a, e)
          break
        }
        this.stats.returnedUnits += giveBack
        const after = this.clock()
        if (!row) {
          this.failAll(a, accountGone())
          this.host.forget(a)
          break
        }
        this.stats.leases++
        this.stats.leasedUnits += row.granted
        const current = isCurrent(a, dayStart, monthStart, gen)
        let s: Snap
        if (current) {
          noteCounts(a, row, after)
          if (row.granted > 0) a.leasedAt = after
          a.units += row.granted
          a.lastGrant = row.granted
          if (need === 0 && row.granted === 0) a.aheadPauseUntil = after + this.o.blockedRecheckMs
          s = a
        } else {
          // The window rolled or the limits changed while the call was out: its units serve the requests
          // that were waiting (they are counted in the windows the call was made for), the rest go back.
          s = snapshot(dayStart, monthStart, row, row.granted)
        }
        while (s.units > 0 && a.waiters.length > 0) {
          s.units--
          a.lastUse = after
          a.waiters.shift()!.resolve(this.host.allowed(s, a, after))
        }
        if (!current && s.units > 0) {
          this.settlement.queueReturn(a.id, dayStart, monthStart, s.units)
          s.units = 0
        }
        if (row.granted < need) {
          if (!current) continue // ask again under the new limits / window
          const blocking = headerWindow(windowView(a, 'day'), windowView(a, 'month'), true)
          a.blockedUntil = Math.min(after + this.o.blockedRecheckMs, blocking.reset)
          this.rejectAll(a, a, after)
          break
        }
      }
    } finally {
      a.leasing = false
    }
  }

  private rejectAll(a: Acct, s: Snap, now: number): void {
    const waiters = a.waiters
    a.waiters = []
    for (const w of waiters) w.resolve(this.host.rejected(s, now))
  }

  private failAll(a: Acct, e: unknown): void {
    let err: ApiError
    if (e instanceof ApiError) err = e
    else {
      this.log.error({ msg: 'quota: lease failed', accountId: a.id, err: e })
      err = quotaUnavailable()
    }
    const waiters = a.waiters
    a.waiters = []
    for (const w of waiters) w.reject(err)
  }
}
