/**
 * The quota engine on PostgreSQL (docs/quota.md): the `QuotaService` — charging, state reads, limit
 * invalidation, housekeeping and shutdown.
 *
 * Leases: per account, a process reserves a block of units for BOTH windows in one database call
 * (lease-loop.ts, `orgscan_quota_lease` of migration 003) and serves requests from that block in memory.
 * Exactness across processes comes from that call alone (row locks, grant ≤ remaining of either window);
 * nothing local can admit a request the database did not count. A charge takes a leased unit when there
 * is one, answers 429 locally while the account is known to be blocked, and otherwise waits for the
 * account's lease loop. Unused units go back (settlement.ts) when the lease idles, gets old, its window
 * ends, the limits change, and on close().
 */
import type postgres from 'postgres'
import { ApiError } from '../../core/errors.ts'
import type { Principal } from '../../core/principal.ts'
import type { Logger } from '../../core/log.ts'
import type { QuotaCharge, QuotaService, QuotaState } from '../../core/quota-types.ts'
import { resolveOptions, type PgQuotaOptions, type QuotaSettings } from './pg-quota-options.ts'
import { newQuotaStats, type QuotaStats } from './quota-stats.ts'
import { accountGone, accountIdOf, quotaUnavailable } from './quota-errors.ts'
import { isCurrent, newAccount, noteCounts, retire, roll, snapshot, windowsStale, type Acct, type Counts, type Snap } from './account.ts'
import { allowedAnswer, exemptAnswer, rejectedAnswer, stateAnswer } from './charge-answer.ts'
import { ExemptLog } from './exempt-log.ts'
import { QuotaSql } from './quota-sql.ts'
import { Settlement, windowsKey } from './settlement.ts'
import { LeaseLoop } from './lease-loop.ts'
import { LimitListener } from './limit-listener.ts'

export { QUOTA_CHANNEL } from './limit-listener.ts'
export type { PgQuotaOptions } from './pg-quota-options.ts'
export type { QuotaStats } from './quota-stats.ts'

export class PgQuota implements QuotaService {
  readonly stats: QuotaStats = newQuotaStats()
  private readonly o: QuotaSettings
  private readonly accounts = new Map<string, Acct>()
  private readonly db: QuotaSql
  private readonly settlement: Settlement
  private readonly exempt: ExemptLog
  private readonly loop: LeaseLoop
  private readonly listener: LimitListener | undefined
  private readonly running = new Set<Promise<unknown>>()
  private timer: NodeJS.Timeout | undefined
  private closed = false

  constructor(
    sql: postgres.Sql,
    private readonly clock: () => number,
    private readonly log: Logger,
    opts: PgQuotaOptions,
  ) {
    this.o = resolveOptions(opts)
    this.db = new QuotaSql(sql, log, this.o)
    this.settlement = new Settlement(this.db, clock, log, this.stats, () => this.ensureTimer())
    this.exempt = new ExemptLog(log, this.o.exemptLogIntervalMs)
    this.loop = new LeaseLoop(this.o, clock, log, this.stats, this.db, this.settlement, {
      allowed: (s, a, now) => this.allowed(s, a, now),
      rejected: (s, now) => this.rejected(s, now),
      forget: (a) => this.accounts.delete(a.id),
    })
    if (opts.listen) this.listener = new LimitListener(sql, log, (accountId) => this.invalidate(accountId))
  }

  /** Resolves once LISTEN is active (immediately without `listen`). */
  ready(): Promise<void> {
    return this.listener?.ready() ?? Promise.resolve()
  }

  // ---------------------------------------------------------------------------------------------------
  // QuotaService

  async charge(p: Principal): Promise<QuotaCharge> {
    if (this.closed) throw quotaUnavailable()
    const id = accountIdOf(p)
    const now = this.clock()
    const a = this.account(id, now)
    a.lastTouch = now
    if (p.quotaExempt) return this.chargeExempt(a, p, now)
    a.rate.hit()
    if (a.units > 0 && now - a.leasedAt >= this.o.leaseTtlMs) retire(a, this.settlement)
    if (a.units > 0) {
      a.units--
      a.lastUse = now
      const c = this.allowed(a, a, now)
      // Refill ahead: the next lease is fetched while half of the last one is still left, so a busy
      // account's requests never wait for the database.
      if (!a.leasing && a.lastGrant >= 2 && a.units <= a.lastGrant / 2 && now >= a.aheadPauseUntil) this.track(this.loop.run(a, true))
      return c
    }
    if (a.blockedUntil > now) return this.rejected(a, now)
    return new Promise<QuotaCharge>((resolve, reject) => {
      a.waiters.push({ resolve, reject })
      if (!a.leasing) this.track(this.loop.run(a))
    })
  }

  async state(p: Principal): Promise<QuotaState> {
    if (this.closed) throw quotaUnavailable()
    const id = accountIdOf(p)
    const now = this.clock()
    const a = this.account(id, now)
    a.lastTouch = now
    const s = await this.read(a)
    return stateAnswer(s, this.clock())
  }

  invalidate(accountId?: string): void {
    const list = accountId === undefined ? [...this.accounts.values()] : [this.accounts.get(accountId)]
    for (const a of list) {
      if (!a) continue
      a.gen++
      retire(a, this.settlement)
      a.known = false
      a.blockedUntil = 0
    }
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
    await this.listener?.close()
    while (this.running.size > 0) await Promise.allSettled([...this.running])
    for (const a of this.accounts.values()) retire(a, this.settlement)
    await this.settlement.flush(true)
    this.settlement.abandon()
    this.exempt.flush(this.clock(), true)
  }

  // ---------------------------------------------------------------------------------------------------
  // Operations for tests and tooling

  /** One housekeeping pass (also run by an unref'd timer): idle/old/expired leases go back. */
  sweep(): void {
    const now = this.clock()
    for (const a of this.accounts.values()) {
      const stale = windowsStale(a, now)
      if (a.units > 0 && (stale || now - a.lastUse >= this.o.idleReturnMs || now - a.leasedAt >= this.o.leaseTtlMs)) retire(a, this.settlement)
      if (stale && a.waiters.length === 0 && !a.leasing) roll(a, now, this.settlement)
      if (a.units === 0 && a.waiters.length === 0 && !a.leasing && !a.reading && now - a.lastTouch >= this.o.forgetAfterMs) this.accounts.delete(a.id)
    }
    this.settlement.kick()
    this.exempt.flush(now, false)
    if (this.accounts.size === 0 && this.settlement.idle && this.exempt.size === 0 && this.timer) {
      clearInterval(this.timer)
      this.timer = undefined
    }
  }

  /** Gives every unused leased unit back and waits until the database has them. */
  async returnAll(): Promise<void> {
    for (const a of this.accounts.values()) retire(a, this.settlement)
    await this.settlement.flush(true)
  }

  /** Unused leased units held by this process for an account (current windows). */
  localUnits(accountId: string): number {
    return this.accounts.get(accountId)?.units ?? 0
  }

  // ---------------------------------------------------------------------------------------------------
  // Charging

  private account(id: string, now: number): Acct {
    let a = this.accounts.get(id)
    if (!a) {
      a = newAccount(id, now)
      this.accounts.set(id, a)
      this.ensureTimer()
    } else if (windowsStale(a, now)) {
      roll(a, now, this.settlement)
    }
    return a
  }

  private allowed(s: Snap, a: Acct, now: number): QuotaCharge {
    this.stats.allowed++
    const { id, gen } = a
    const { dayStart, monthStart } = s
    return allowedAnswer(s, now, () => this.refund(id, dayStart, monthStart, gen))
  }

  private rejected(s: Snap, now: number): QuotaCharge {
    this.stats.rejected++
    return rejectedAnswer(s, now)
  }

  private refund(id: string, dayStart: number, monthStart: number, gen: number): void {
    const a = this.accounts.get(id)
    if (!this.closed && a && isCurrent(a, dayStart, monthStart, gen)) {
      a.units++
      this.stats.allowed--
      return
    }
    this.settlement.queueReturn(id, dayStart, monthStart, 1)
  }

  private async chargeExempt(a: Acct, p: Principal, now: number): Promise<QuotaCharge> {
    this.stats.exempt++
    this.exempt.note(a.id, p, now)
    this.ensureTimer()
    let s: Snap = a
    if (!a.known || now - a.viewAt >= this.o.leaseTtlMs) {
      try {
        s = await this.read(a)
      } catch (err) {
        if (err instanceof ApiError && err.code === 'unauthorized') throw err
        return { allowed: true, headers: {} } // exempt: the quota's database being down is no reason to refuse
      }
    }
    return exemptAnswer(s, this.clock())
  }

  // ---------------------------------------------------------------------------------------------------
  // Reading both windows

  /** Free read of both windows (single-flight per account); updates the view when still current. */
  private read(a: Acct): Promise<Snap> {
    if (a.reading) return a.reading
    const dayStart = a.dayStart
    const monthStart = a.monthStart
    const gen = a.gen
    const p = (async (): Promise<Snap> => {
      const returning = this.settlement.inFlight(windowsKey(a.id, dayStart, monthStart))
      if (returning) await returning
      let counts: Counts | undefined
      try {
        counts = await this.db.read(a.id, dayStart, monthStart)
      } catch (e) {
        this.log.error({ msg: 'quota: state read failed', accountId: a.id, err: e })
        throw quotaUnavailable()
      }
      if (!counts) {
        retire(a, this.settlement)
        this.accounts.delete(a.id)
        throw accountGone()
      }
      const now = this.clock()
      const current = isCurrent(a, dayStart, monthStart, gen)
      const s = snapshot(dayStart, monthStart, counts, current ? a.units : 0)
      if (current && !a.leasing) noteCounts(a, s, now)
      return s
    })()
    a.reading = p
    const clear = () => {
      if (a.reading === p) a.reading = undefined
    }
    p.then(clear, clear)
    return p
  }

  // ---------------------------------------------------------------------------------------------------
  // Housekeeping

  private track(p: Promise<unknown>): void {
    this.running.add(p)
    // `finally` alone would return a promise that re-rejects unhandled (and crash the process on a lost
    // connection): a background task's failure is logged here; its waiters were already answered.
    void p
      .catch((err: unknown) => this.log.error({ msg: 'quota: background task failed', err }))
      .finally(() => this.running.delete(p))
  }

  private ensureTimer(): void {
    if (this.timer || this.closed) return
    const tick = Math.max(50, Math.min(this.o.idleReturnMs, this.o.leaseTtlMs) / 4)
    this.timer = setInterval(() => this.sweep(), tick)
    this.timer.unref()
  }
}
