/**
 * Returns and lease cancels (docs/quota.md "In-doubt calls"): unused units go back to the windows they
 * were leased for, and a lease whose answer was lost is settled by its id. Every call here carries an id
 * the database applies at most once (migration 003), so any failure — also a connection lost while the
 * call was out — is resent with the same id and the same units, never merged with others: up to 20
 * attempts with backoff (≤ 30 s apart); what still fails stays counted (an over-count, never an
 * over-admission) and is logged.
 *
 * A lease or read of some windows first waits for the return call in flight for them (`inFlight`), so a
 * process never sees its own returned units as still taken; units still queued travel with the lease
 * call instead (`takeQueued`).
 */
import { randomUUID } from 'node:crypto'
import type { Logger } from '../../core/log.ts'
import { isNotSent, isRetryableTransaction } from '../../core/db/errors.ts'
import type { QuotaSql } from './quota-sql.ts'
import type { QuotaStats } from './quota-stats.ts'

interface PendingReturn {
  id: string
  dayStart: number
  monthStart: number
  units: number
  attempts: number
  notBefore: number
  /**
   * Set once the return was sent: the id under which the database applies it at most once. A return with
   * an id is resent as it is (same id, same units), never merged with others.
   */
  rid?: string
}

/** A lease whose answer was lost: settled by `orgscan_quota_lease_cancel` (migration 003). */
export interface LostLease {
  leaseId: string
  id: string
  dayStart: number
  monthStart: number
  /** Units the lease call gave back along (`p_return`): applied iff the lease was. */
  giveBack: number
}

interface PendingCancel extends LostLease {
  attempts: number
  notBefore: number
}

const MAX_ATTEMPTS = 20

/** The key of an account's pair of windows: one return queue entry and one call in flight per key. */
export function windowsKey(id: string, dayStart: number, monthStart: number): string {
  return `${id}|${dayStart}|${monthStart}`
}

/**
 * True when a failed lease certainly had no effect: a deadlock / serialization failure (rolled back) or a
 * connection that was never established. Anything else is settled by the lease's id (a cancel is harmless
 * when the lease failed anyway): also a server error, since a FATAL such as 57P01 (backend terminated) can
 * in principle arrive after the commit and before the answer's end.
 */
function certainlyNotApplied(e: unknown): boolean {
  return isRetryableTransaction(e) || isNotSent(e)
}

export class Settlement {
  private readonly returns = new Map<string, PendingReturn>()
  /** Returns already sent once (in doubt or failed), resent under their id, by that id. */
  private readonly resends = new Map<string, PendingReturn>()
  /** Leases whose answer was lost, to settle by their id. */
  private readonly cancels = new Map<string, PendingCancel>()
  /** Return calls in flight by windowsKey: a lease or read of the same windows waits for them. */
  private readonly returning = new Map<string, Promise<void>>()
  private flushing: Promise<void> | undefined

  /** `due`: called whenever something waits to be sent later (the engine's housekeeping timer calls `kick`). */
  constructor(
    private readonly db: QuotaSql,
    private readonly clock: () => number,
    private readonly log: Logger,
    private readonly stats: QuotaStats,
    private readonly due: () => void,
  ) {}

  /** Nothing queued, to resend or to cancel. */
  get idle(): boolean {
    return this.returns.size + this.resends.size + this.cancels.size === 0
  }

  /** The return call in flight for these windows, if any. */
  inFlight(key: string): Promise<void> | undefined {
    return this.returning.get(key)
  }

  /** Takes the units queued (not yet sent) for these windows: they go back with a lease call instead. */
  takeQueued(key: string): number {
    const pending = this.returns.get(key)
    if (!pending) return 0
    this.returns.delete(key)
    return pending.units
  }

  /** Units to give back to the windows they were leased for (merged with others queued for them). */
  queueReturn(id: string, dayStart: number, monthStart: number, units: number): void {
    if (units <= 0) return
    const key = windowsKey(id, dayStart, monthStart)
    const r = this.returns.get(key)
    if (r) r.units += units
    else this.returns.set(key, { id, dayStart, monthStart, units, attempts: 0, notBefore: 0 })
    this.due()
    this.kick()
  }

  /**
   * A lease call failed or answered too late to be used. If it certainly did not apply, the units it gave
   * back along are sent again as a return; otherwise it is cancelled by its id (which also settles them).
   */
  leaseFailed(lease: LostLease, e: unknown): void {
    if (certainlyNotApplied(e)) {
      if (lease.giveBack > 0) this.queueReturn(lease.id, lease.dayStart, lease.monthStart, lease.giveBack)
      return
    }
    this.cancels.set(lease.leaseId, { ...lease, attempts: 0, notBefore: 0 })
    this.due()
    this.kick()
  }

  /** Starts sending what is due, unless a flush is running. */
  kick(): void {
    if (this.flushing || this.idle) return
    const p = this.flush(false)
      .catch((err: unknown) => this.log.error({ msg: 'quota: returning unused units failed', err }))
      .finally(() => {
        if (this.flushing === p) this.flushing = undefined
      })
    this.flushing = p
  }

  /**
   * Sends due returns and lease cancels (all of them when `all`), until none is due; failures wait with
   * backoff. With `all`, returns after the first round in which a call failed.
   */
  async flush(all: boolean): Promise<void> {
    if (all && this.flushing) await this.flushing
    for (;;) {
      const now = this.clock()
      const dueReturns = [...this.returns.values(), ...this.resends.values()].filter((r) => all || r.notBefore <= now)
      const dueCancels = [...this.cancels.values()].filter((c) => all || c.notBefore <= now)
      if (dueReturns.length + dueCancels.length === 0) return
      let failed = false
      const backoff = (attempts: number) => this.clock() + Math.min(30_000, 250 * 2 ** attempts)
      const send = async (key: string, call: () => Promise<void>) => {
        const previous = this.returning.get(key)
        // Registered synchronously: from now on a lease or read of these windows waits for this call.
        const p = (async () => {
          if (previous) await previous
          await call()
        })()
        this.returning.set(key, p)
        await p
        if (this.returning.get(key) === p) this.returning.delete(key)
      }
      await Promise.all([
        ...dueReturns.map((r) => {
          if (r.rid === undefined) {
            this.returns.delete(windowsKey(r.id, r.dayStart, r.monthStart))
            r.rid = randomUUID()
          } else this.resends.delete(r.rid)
          const rid = r.rid
          return send(windowsKey(r.id, r.dayStart, r.monthStart), async () => {
            try {
              // Applied after the deadline: the resend below is then a no-op.
              await this.db.giveBack(rid, r.id, r.dayStart, r.monthStart, r.units)
              // Applied now or by an earlier attempt whose answer was lost (then this one was a no-op).
              this.stats.returnedUnits += r.units
            } catch (err) {
              failed = true
              if (r.attempts + 1 < MAX_ATTEMPTS) {
                r.attempts++
                if (r.attempts === 1) this.log.warn({ msg: 'quota: returning unused units failed; will retry', accountId: r.id, units: r.units, err })
                r.notBefore = backoff(r.attempts)
                this.resends.set(rid, r)
                this.due()
              } else this.dropReturn(r, err)
            }
          })
        }),
        ...dueCancels.map((c) => {
          this.cancels.delete(c.leaseId)
          return send(windowsKey(c.id, c.dayStart, c.monthStart), async () => {
            try {
              const row = await this.db.cancelLease(c.leaseId, c.id, c.dayStart, c.monthStart)
              this.stats.returnedUnits += row.returned
              // Applied: its giveBack went back with it. Not applied (and now it never will be): send it again.
              if (row.applied) this.stats.returnedUnits += c.giveBack
              else if (c.giveBack > 0) this.queueReturn(c.id, c.dayStart, c.monthStart, c.giveBack)
              if (row.returned > 0 || c.giveBack > 0) this.log.info({ msg: 'quota: lease with a lost answer settled', accountId: c.id, applied: row.applied, returned: row.returned, giveBack: c.giveBack })
            } catch (err) {
              failed = true
              if (c.attempts + 1 < MAX_ATTEMPTS) {
                c.attempts++
                c.notBefore = backoff(c.attempts)
                this.cancels.set(c.leaseId, c)
                this.due()
              } else this.dropCancel(c, err)
            }
          })
        }),
      ])
      if (all && failed) return
    }
  }

  /** At close, after a last flush: whatever is still unsent stays counted (logged, `droppedReturnUnits`). */
  abandon(): void {
    for (const r of [...this.returns.values(), ...this.resends.values()]) {
      this.stats.droppedReturnUnits += r.units
      this.log.warn({ msg: 'quota: unused units could not be returned; they stay counted', accountId: r.id, units: r.units, dayStart: new Date(r.dayStart).toISOString() })
    }
    for (const c of this.cancels.values()) this.dropCancel(c, undefined)
    this.returns.clear()
    this.resends.clear()
    this.cancels.clear()
  }

  private dropReturn(r: PendingReturn, err: unknown): void {
    this.stats.droppedReturnUnits += r.units
    this.log.warn({ msg: 'quota: unused units not returned; they stay counted', accountId: r.id, units: r.units, err })
  }

  private dropCancel(c: PendingCancel, err: unknown): void {
    this.stats.droppedReturnUnits += c.giveBack
    this.log.warn({ msg: 'quota: a lease whose answer was lost could not be settled; its units stay counted', accountId: c.id, giveBack: c.giveBack, err })
  }
}
