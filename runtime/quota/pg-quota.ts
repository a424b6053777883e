/**
 * The quota engine on PostgreSQL (contract §8; design and measurements: docs/quota.md).
 *
 * Leases: per account, a process reserves a block of units for BOTH windows in one database call
 * (`orgscan_quota_lease`, migration 003) and serves requests from that block in memory. Exactness across
 * processes comes from that call alone (row locks, grant ≤ remaining of either window); nothing local can
 * admit a request the database did not count. The block size adapts: the requests waiting right now, plus
 * a prefetch for the coming ones sized from this process's recent request rate — which the database
 * trims to a fraction of what remains, so near the limit every request takes exactly one unit. Unused
 * units go back (`orgscan_quota_return`) when the lease idles, gets old, its window ends, the account's
 * limits change, and on close().
 *
 * In-process concurrency: per account one lease call at a time; requests arriving meanwhile queue and are
 * served in order by its grant (no thundering herd). A grant smaller than the need means a window is
 * exhausted: those requests get the 429 (nothing consumed), and further requests are answered locally for
 * `blockedRecheckMs` before the database is asked again.
 *
 * In-doubt calls (migration 003): every lease and return carries an id chosen here. A return whose answer
 * was lost is resent with the same id (the database applies each id once); a lease whose answer was lost is
 * settled by `orgscan_quota_lease_cancel` (its grant goes back if it was applied; otherwise it never will be).
 */
import { randomUUID } from 'node:crypto'
import type postgres from 'postgres'
import { ApiError } from '../errors.ts'
import { unauthorized } from '../auth/api-keys.ts'
import type { Principal } from '../auth/principal.ts'
import type { Logger } from '../log.ts'
import type { QuotaCharge, QuotaChargeWindow, QuotaService, QuotaState, QuotaWindowState } from './types.ts'
import { dayWindow, isoSeconds, monthWindow, secondsUntil } from './windows.ts'
import { headerWindow, quotaHeaders, rateLimitedError, retryAfterSeconds, type WindowView } from './headers.ts'

/** NOTIFY channel of limit changes and account deletions (migration 003 triggers; payload: account id). */
export const QUOTA_CHANNEL = 'orgscan_quota'

export interface PgQuotaOptions {
  /**
   * LISTEN on `orgscan_quota` so limit changes made by any process apply at once (the lease is dropped).
   * Needs a second connection: true for a PostgreSQL server, false for embedded PGlite (one connection;
   * there the process itself changes limits and should call `invalidate`). Required on purpose.
   */
  listen: boolean
  /** Most units one lease call may take (default 200). 1 = no prefetch: one database call per request. */
  maxLease?: number
  /**
   * Prefetch beyond the waiting requests: 'adaptive' (default) = this process's recent request rate for
   * the account × `leaseHorizonMs`; a number = that many units every time (tests, tuning).
   */
  prefetch?: 'adaptive' | number
  /** Adaptive prefetch covers about this much future traffic (default 250 ms). */
  leaseHorizonMs?: number
  /** Prefetch is trimmed in the database to this fraction of what would remain (default 0.1). */
  prefetchFraction?: number
  /** Unused units go back after this long without a request (default 1000 ms). */
  idleReturnMs?: number
  /** A lease (and the limits it was computed with) is used at most this long (default 2000 ms). */
  leaseTtlMs?: number
  /** After a window is found exhausted, answer 429 locally this long before asking again (default 1000 ms). */
  blockedRecheckMs?: number
  /** A database call slower than this fails with 503 (lease, state read) or is abandoned (return); default 5000 ms. */
  leaseTimeoutMs?: number
  /** Asynchronous commit for lease transactions (default false; see docs/quota.md before enabling). */
  asyncLeaseCommit?: boolean
  /** Aggregated exempt-usage log line at most this often per account (default 60000 ms). */
  exemptLogIntervalMs?: number
  /** Per-account state idle this long is dropped from memory (default 600000 ms). */
  forgetAfterMs?: number
}

type Opts = Required<PgQuotaOptions>

const DEFAULTS: Omit<Opts, 'listen'> = {
  maxLease: 200,
  prefetch: 'adaptive',
  leaseHorizonMs: 250,
  prefetchFraction: 0.1,
  idleReturnMs: 1000,
  leaseTtlMs: 2000,
  blockedRecheckMs: 1000,
  leaseTimeoutMs: 5000,
  asyncLeaseCommit: false,
  exemptLogIntervalMs: 60_000,
  forgetAfterMs: 600_000,
}

/** Counters for tests, benchmarks and diagnostics. */
export interface QuotaStats {
  /** Lease calls answered by the database. */
  leases: number
  /** Units granted by those calls. */
  leasedUnits: number
  /** Units confirmed returned to the database. */
  returnedUnits: number
  /** Units given up after failed returns (left counted: over-count, never over-admission). */
  droppedReturnUnits: number
  allowed: number
  rejected: number
  /** Requests of quota-exempt principals (never counted). */
  exempt: number
}

/** The windows plus what the database said about them, plus this process's unused units. */
interface Snap {
  dayStart: number
  dayReset: number
  monthStart: number
  monthReset: number
  dayLimit: number
  monthLimit: number
  /** `used` in the database at the last lease/read, including every unit leased by any process. */
  dayUsed: number
  monthUsed: number
  /** Leased units this process has not used yet (they are inside dayUsed/monthUsed). */
  units: number
}

interface Waiter {
  resolve(c: QuotaCharge): void
  reject(e: unknown): void
}

interface Acct extends Snap {
  id: string
  /** Bumped when limits may have changed: units leased before are not reused. */
  gen: number
  /** dayLimit… are from the database for the current windows. */
  known: boolean
  viewAt: number
  leasedAt: number
  lastUse: number
  lastTouch: number
  waiters: Waiter[]
  leasing: boolean
  reading: Promise<Snap> | undefined
  /** Answer 429 locally until then (0: ask the database). */
  blockedUntil: number
  /** Units of the last grant: a refill starts ahead when half of it is used. */
  lastGrant: number
  /** No refill ahead before then (the last one got nothing or failed). */
  aheadPauseUntil: number
  rate: number
  rateCount: number
  rateSince: number
}

interface LeaseRow {
  granted: number
  dayUsed: number
  monthUsed: number
  dayLimit: number
  monthLimit: number
}

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
interface PendingCancel {
  leaseId: string
  id: string
  dayStart: number
  monthStart: number
  /** Units the lease call gave back along (`p_return`): applied iff the lease was. */
  giveBack: number
  attempts: number
  notBefore: number
}

const ACCOUNT_ID = /^[1-9][0-9]{0,18}$/
const MAX_RETURN_ATTEMPTS = 20
const RETRYABLE = new Set(['40P01', '40001'])
/** Connection failures before anything was sent: the statement certainly did not run. */
const NOT_SENT = new Set(['ECONNREFUSED', 'CONNECT_TIMEOUT', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOENT'])

/**
 * True when a failed lease certainly had no effect: a deadlock / serialization failure (rolled back) or a
 * connection that was never established. Anything else is settled by the lease's id (a cancel is harmless
 * when the lease failed anyway): also a server error, since a FATAL such as 57P01 (backend terminated) can
 * in principle arrive after the commit and before the answer's end.
 */
function certainlyNotApplied(e: unknown): boolean {
  const code = errorCode(e)
  return RETRYABLE.has(code) || NOT_SENT.has(code)
}

const returnKey = (id: string, dayStart: number, monthStart: number) => `${id}|${dayStart}|${monthStart}`

const iso = (ms: number) => new Date(ms).toISOString()

/** Waits for `p`, at most `ms`. */
function within(p: Promise<unknown>, ms: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms)
    t.unref()
    p.then(
      () => (clearTimeout(t), resolve()),
      () => (clearTimeout(t), resolve()),
    )
  })
}

function errorCode(e: unknown): string {
  return typeof e === 'object' && e !== null ? String((e as { code?: unknown }).code ?? '') : ''
}

function unavailable(): ApiError {
  return new ApiError('service_unavailable', 'The quota service is temporarily unavailable; retry shortly.')
}

function accountGone(): ApiError {
  return unauthorized('The account of this credential no longer exists.')
}

function view(s: Snap, kind: 'day' | 'month'): WindowView {
  return kind === 'day'
    ? { kind, limit: s.dayLimit, remaining: Math.max(0, s.dayLimit - s.dayUsed + s.units), start: s.dayStart, reset: s.dayReset }
    : { kind, limit: s.monthLimit, remaining: Math.max(0, s.monthLimit - s.monthUsed + s.units), start: s.monthStart, reset: s.monthReset }
}

function chargeWindow(w: WindowView, retryAfter?: number): QuotaChargeWindow {
  const out: QuotaChargeWindow = { name: w.kind === 'day' ? 'daily' : 'monthly', limit: w.limit, remaining: w.remaining, resetAt: isoSeconds(w.reset) }
  if (retryAfter !== undefined) out.retryAfterSeconds = retryAfter
  return out
}

function windowState(w: WindowView): QuotaWindowState {
  return { limit: w.limit, remaining: w.remaining, resetAt: isoSeconds(w.reset) }
}

export class PgQuota implements QuotaService {
  readonly stats: QuotaStats = { leases: 0, leasedUnits: 0, returnedUnits: 0, droppedReturnUnits: 0, allowed: 0, rejected: 0, exempt: 0 }
  private readonly o: Opts
  private readonly accounts = new Map<string, Acct>()
  private readonly returns = new Map<string, PendingReturn>()
  /** Returns already sent once (in doubt or failed), resent under their id, by that id. */
  private readonly resends = new Map<string, PendingReturn>()
  /** Leases whose answer was lost, to settle by their id. */
  private readonly cancels = new Map<string, PendingCancel>()
  /** Return calls in flight by returnKey: a lease or read of the same windows waits for them. */
  private readonly returning = new Map<string, Promise<void>>()
  private readonly exemptSeen = new Map<string, { count: number; credentials: Set<string>; loggedAt: number }>()
  private readonly running = new Set<Promise<unknown>>()
  private flushing: Promise<void> | undefined
  private timer: NodeJS.Timeout | undefined
  private closed = false
  private listening: Promise<void> | undefined
  private unlisten: (() => Promise<void>) | undefined
  private listenedOnce = false

  constructor(
    private readonly sql: postgres.Sql,
    private readonly clock: () => number,
    private readonly log: Logger,
    opts: PgQuotaOptions,
  ) {
    this.o = { ...DEFAULTS, ...opts }
    if (!(this.o.maxLease >= 1)) throw new Error('PgQuota: maxLease must be at least 1')
    if (opts.listen) {
      this.listening = sql
        .listen(
          QUOTA_CHANNEL,
          (payload) => this.invalidate(payload),
          () => {
            // Every (re)LISTEN after the first follows a lost connection: notifications may have been missed.
            if (this.listenedOnce) this.invalidate()
            this.listenedOnce = true
          },
        )
        .then(
          (meta) => {
            this.unlisten = () => meta.unlisten()
            if (this.closed) void meta.unlisten().catch(() => undefined)
          },
          (err: unknown) => this.log.warn({ msg: 'quota: LISTEN failed; limit changes apply within the lease lifetime', err }),
        )
    }
  }

  /** Resolves once LISTEN is active (immediately without `listen`). */
  ready(): Promise<void> {
    return this.listening ?? Promise.resolve()
  }

  // ---------------------------------------------------------------------------------------------------
  // QuotaService

  async charge(p: Principal): Promise<QuotaCharge> {
    if (this.closed) throw unavailable()
    const id = this.accountId(p)
    const now = this.clock()
    const a = this.account(id, now)
    a.lastTouch = now
    if (p.quotaExempt) return this.chargeExempt(a, p, now)
    a.rateCount++
    if (a.units > 0 && now - a.leasedAt >= this.o.leaseTtlMs) this.retire(a)
    if (a.units > 0) {
      a.units--
      a.lastUse = now
      const c = this.allowed(a, a, now)
      // Refill ahead: the next lease is fetched while half of the last one is still left, so a busy
      // account's requests never wait for the database.
      if (!a.leasing && a.lastGrant >= 2 && a.units <= a.lastGrant / 2 && now >= a.aheadPauseUntil) this.track(this.runLease(a, true))
      return c
    }
    if (a.blockedUntil > now) return this.rejected(a, now)
    return new Promise<QuotaCharge>((resolve, reject) => {
      a.waiters.push({ resolve, reject })
      if (!a.leasing) this.track(this.runLease(a))
    })
  }

  async state(p: Principal): Promise<QuotaState> {
    if (this.closed) throw unavailable()
    const id = this.accountId(p)
    const now = this.clock()
    const a = this.account(id, now)
    a.lastTouch = now
    const s = await this.read(a)
    const day = view(s, 'day')
    const month = view(s, 'month')
    return { body: { daily: windowState(day), monthly: windowState(month) }, headers: quotaHeaders(day, month, this.clock()) }
  }

  invalidate(accountId?: string): void {
    const list = accountId === undefined ? [...this.accounts.values()] : [this.accounts.get(accountId)]
    for (const a of list) {
      if (!a) continue
      a.gen++
      this.retire(a)
      a.known = false
      a.blockedUntil = 0
    }
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
    // Bounded: with the database gone, LISTEN/UNLISTEN could wait for a reconnect that never comes.
    await within(this.listening ?? Promise.resolve(), 2000)
    await within(this.unlisten?.().catch(() => undefined) ?? Promise.resolve(), 2000)
    while (this.running.size > 0) await Promise.allSettled([...this.running])
    for (const a of this.accounts.values()) this.retire(a)
    await this.flushReturns(true)
    for (const r of [...this.returns.values(), ...this.resends.values()]) {
      this.stats.droppedReturnUnits += r.units
      this.log.warn({ msg: 'quota: unused units could not be returned; they stay counted', accountId: r.id, units: r.units, dayStart: iso(r.dayStart) })
    }
    for (const c of this.cancels.values()) this.dropCancel(c, undefined)
    this.returns.clear()
    this.resends.clear()
    this.cancels.clear()
    this.logExempt(this.clock(), true)
  }

  // ---------------------------------------------------------------------------------------------------
  // Operations for tests and tooling

  /** One housekeeping pass (also run by an unref'd timer): idle/old/expired leases go back. */
  sweep(): void {
    const now = this.clock()
    for (const a of this.accounts.values()) {
      const stale = now >= a.dayReset || now < a.dayStart
      if (a.units > 0 && (stale || now - a.lastUse >= this.o.idleReturnMs || now - a.leasedAt >= this.o.leaseTtlMs)) this.retire(a)
      if (stale && a.waiters.length === 0 && !a.leasing) this.roll(a, now)
      if (a.units === 0 && a.waiters.length === 0 && !a.leasing && !a.reading && now - a.lastTouch >= this.o.forgetAfterMs) this.accounts.delete(a.id)
    }
    this.kickReturns()
    this.logExempt(now, false)
    if (this.accounts.size === 0 && this.returns.size === 0 && this.resends.size === 0 && this.cancels.size === 0 && this.exemptSeen.size === 0 && this.timer) {
      clearInterval(this.timer)
      this.timer = undefined
    }
  }

  /** Gives every unused leased unit back and waits until the database has them. */
  async returnAll(): Promise<void> {
    for (const a of this.accounts.values()) this.retire(a)
    await this.flushReturns(true)
  }

  /** Unused leased units held by this process for an account (current windows). */
  localUnits(accountId: string): number {
    return this.accounts.get(accountId)?.units ?? 0
  }

  // ---------------------------------------------------------------------------------------------------
  // Charging

  private accountId(p: Principal): string {
    if (typeof p.accountId !== 'string' || !ACCOUNT_ID.test(p.accountId)) throw accountGone()
    return p.accountId
  }

  private account(id: string, now: number): Acct {
    let a = this.accounts.get(id)
    if (!a) {
      const d = dayWindow(now)
      const m = monthWindow(now)
      a = {
        id, dayStart: d.start, dayReset: d.reset, monthStart: m.start, monthReset: m.reset,
        dayLimit: 0, monthLimit: 0, dayUsed: 0, monthUsed: 0, units: 0,
        gen: 0, known: false, viewAt: 0, leasedAt: 0, lastUse: now, lastTouch: now,
        waiters: [], leasing: false, reading: undefined, blockedUntil: 0, lastGrant: 0, aheadPauseUntil: 0,
        rate: 0, rateCount: 0, rateSince: now,
      }
      this.accounts.set(id, a)
      this.ensureTimer()
    } else if (now >= a.dayReset || now < a.dayStart) {
      this.roll(a, now)
    }
    return a
  }

  /** The clock left the lease's day: units go back to the old windows; the view starts over. */
  private roll(a: Acct, now: number): void {
    this.retire(a)
    const d = dayWindow(now)
    const m = monthWindow(now)
    a.dayStart = d.start
    a.dayReset = d.reset
    a.monthStart = m.start
    a.monthReset = m.reset
    a.dayUsed = 0
    a.monthUsed = 0
    a.known = false
    a.blockedUntil = 0
  }

  private allowed(s: Snap, a: Acct, now: number): QuotaCharge {
    this.stats.allowed++
    const day = view(s, 'day')
    const month = view(s, 'month')
    const id = a.id
    const dayStart = s.dayStart
    const monthStart = s.monthStart
    const gen = a.gen
    let refunded = false
    return {
      allowed: true,
      headers: quotaHeaders(day, month, now),
      window: chargeWindow(headerWindow(day, month, false)),
      refund: () => {
        if (refunded) return
        refunded = true
        this.refund(id, dayStart, monthStart, gen)
      },
    }
  }

  private rejected(s: Snap, now: number): QuotaCharge {
    this.stats.rejected++
    const day = view(s, 'day')
    const month = view(s, 'month')
    const secs = retryAfterSeconds(day, month, now)
    return { allowed: false, headers: quotaHeaders(day, month, now, true), error: rateLimitedError(secs), window: chargeWindow(headerWindow(day, month, true), secs) }
  }

  private refund(id: string, dayStart: number, monthStart: number, gen: number): void {
    const a = this.accounts.get(id)
    if (!this.closed && a && a.dayStart === dayStart && a.monthStart === monthStart && a.gen === gen) {
      a.units++
      this.stats.allowed--
      return
    }
    this.queueReturn(id, dayStart, monthStart, 1)
  }

  private async chargeExempt(a: Acct, p: Principal, now: number): Promise<QuotaCharge> {
    this.stats.exempt++
    let e = this.exemptSeen.get(a.id)
    if (!e) {
      e = { count: 0, credentials: new Set(), loggedAt: now }
      this.exemptSeen.set(a.id, e)
      this.log.info({ msg: 'quota exempt usage', accountId: a.id, credentialId: p.credentialId, method: p.method, first: true })
    }
    e.count++
    if (e.credentials.size < 20) e.credentials.add(p.credentialId)
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
    const day = view(s, 'day')
    const month = view(s, 'month')
    return { allowed: true, headers: quotaHeaders(day, month, this.clock()), window: chargeWindow(headerWindow(day, month, false)) }
  }

  /**
   * Serves the account's queued requests with as many lease calls as needed, one at a time. `ahead`: a
   * refill while units are still left (no request waiting yet): one call for prefetch only.
   */
  private async runLease(a: Acct, ahead = false): Promise<void> {
    a.leasing = true
    try {
      for (;;) {
        const now = this.clock()
        if (now >= a.dayReset || now < a.dayStart) this.roll(a, now)
        while (a.units > 0 && a.waiters.length > 0) {
          a.units--
          a.lastUse = now
          a.waiters.shift()!.resolve(this.allowed(a, a, now))
        }
        const need = Math.min(a.waiters.length, this.o.maxLease)
        if (need > 0 && a.blockedUntil > now) {
          this.rejectAll(a, a, now)
          break
        }
        const prefetch = this.prefetch(a, now, need)
        if (need === 0) {
          if (!ahead || prefetch === 0) break
          ahead = false
        }
        const dayStart = a.dayStart
        const monthStart = a.monthStart
        const gen = a.gen
        const key = returnKey(a.id, dayStart, monthStart)
        // Units of these windows on their way back must be back before we ask (else they look taken);
        // units waiting to go back travel with the lease call instead.
        const returning = this.returning.get(key)
        if (returning) await returning
        const pending = this.returns.get(key)
        const giveBack = pending ? pending.units : 0
        if (pending) this.returns.delete(key)
        let row: LeaseRow | undefined
        try {
          row = await this.lease(a.id, dayStart, monthStart, need, prefetch, giveBack)
        } catch (e) {
          // lease() has settled `giveBack`: sent again when the lease certainly failed, else with the
          // lease's cancel (the units were applied iff the lease was).
          a.aheadPauseUntil = this.clock() + this.o.blockedRecheckMs
          this.failAll(a, e)
          break
        }
        this.stats.returnedUnits += giveBack
        const after = this.clock()
        if (!row) {
          this.failAll(a, accountGone())
          this.accounts.delete(a.id)
          break
        }
        this.stats.leases++
        this.stats.leasedUnits += row.granted
        const current = a.dayStart === dayStart && a.monthStart === monthStart && a.gen === gen
        let s: Snap
        if (current) {
          a.dayLimit = row.dayLimit
          a.monthLimit = row.monthLimit
          a.dayUsed = row.dayUsed
          a.monthUsed = row.monthUsed
          a.known = true
          a.viewAt = after
          if (row.granted > 0) a.leasedAt = after
          a.units += row.granted
          a.lastGrant = row.granted
          if (need === 0 && row.granted === 0) a.aheadPauseUntil = after + this.o.blockedRecheckMs
          s = a
        } else {
          // The window rolled or the limits changed while the call was out: its units serve the requests
          // that were waiting (they are counted in the windows the call was made for), the rest go back.
          const d = dayWindow(dayStart)
          const m = monthWindow(monthStart)
          s = { dayStart, dayReset: d.reset, monthStart, monthReset: m.reset, dayLimit: row.dayLimit, monthLimit: row.monthLimit, dayUsed: row.dayUsed, monthUsed: row.monthUsed, units: row.granted }
        }
        while (s.units > 0 && a.waiters.length > 0) {
          s.units--
          a.lastUse = after
          a.waiters.shift()!.resolve(this.allowed(s, a, after))
        }
        if (!current && s.units > 0) {
          this.queueReturn(a.id, dayStart, monthStart, s.units)
          s.units = 0
        }
        if (row.granted < need) {
          if (!current) continue // ask again under the new limits / window
          const day = view(a, 'day')
          const month = view(a, 'month')
          a.blockedUntil = Math.min(after + this.o.blockedRecheckMs, headerWindow(day, month, true).reset)
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
    for (const w of waiters) w.resolve(this.rejected(s, now))
  }

  private failAll(a: Acct, e: unknown): void {
    let err: ApiError
    if (e instanceof ApiError) err = e
    else {
      this.log.error({ msg: 'quota: lease failed', accountId: a.id, err: e })
      err = unavailable()
    }
    const waiters = a.waiters
    a.waiters = []
    for (const w of waiters) w.reject(err)
  }

  /** Units to ask for beyond `need`. */
  private prefetch(a: Acct, now: number, need: number): number {
    const room = this.o.maxLease - need
    if (room <= 0) return 0
    if (typeof this.o.prefetch === 'number') return Math.max(0, Math.min(this.o.prefetch, room))
    // Request rate: follows increases at once, decays towards lower rates with a 1 s time constant (so a
    // request after a long pause does not inherit the rate of an hour ago).
    const elapsed = now - a.rateSince
    if (elapsed >= 20) {
      const inst = (a.rateCount * 1000) / elapsed
      a.rate = inst >= a.rate ? inst : inst + (a.rate - inst) * Math.exp(-elapsed / 1000)
      a.rateCount = 0
      a.rateSince = now
    }
    const want = Math.floor((a.rate * this.o.leaseHorizonMs) / 1000)
    return Math.max(0, Math.min(want - need, room))
  }

  // ---------------------------------------------------------------------------------------------------
  // Database

  private async lease(id: string, dayStart: number, monthStart: number, need: number, prefetch: number, giveBack: number): Promise<LeaseRow | undefined> {
    // The lease's id (migration 003): if its answer is lost, the lease is settled by this id afterwards.
    // A retry after a deadlock reuses it (that attempt was rolled back entirely).
    const leaseId = randomUUID()
    const settle = (e: unknown) => {
      if (certainlyNotApplied(e)) {
        if (giveBack > 0) this.queueReturn(id, dayStart, monthStart, giveBack)
      } else this.queueCancel({ leaseId, id, dayStart, monthStart, giveBack, attempts: 0, notBefore: 0 })
    }
    for (let attempt = 0; ; attempt++) {
      const q = this.sql<{ granted: number; day_used: string; month_used: string; daily_limit: number; monthly_limit: number }[]>`
        SELECT granted, day_used, month_used, daily_limit, monthly_limit
        FROM orgscan_quota_lease(${leaseId}::uuid, ${id}::bigint, ${iso(dayStart)}::timestamptz, ${iso(monthStart)}::timestamptz,
          ${need}::integer, ${prefetch}::integer, ${this.o.prefetchFraction}::float8, ${this.o.asyncLeaseCommit}::boolean,
          ${giveBack}::integer)`
      try {
        const rows = await this.withTimeout(
          q,
          (late) => {
            // Answered after the waiting requests were failed: whatever it granted goes straight back.
            const g = late[0]?.granted ?? 0
            if (g > 0) this.queueReturn(id, dayStart, monthStart, g)
            this.stats.returnedUnits += giveBack
          },
          settle, // failed after the waiting requests were failed
        )
        const r = rows[0]
        if (!r) return undefined
        return { granted: r.granted, dayUsed: Number(r.day_used), monthUsed: Number(r.month_used), dayLimit: r.daily_limit, monthLimit: r.monthly_limit }
      } catch (e) {
        // Deadlock / serialization failure: the statement was rolled back entirely, so retrying cannot count twice.
        if (attempt < 2 && RETRYABLE.has(errorCode(e))) continue
        // Settle it (a connection lost while the call was out may have committed: cancel by its id). A
        // timeout (ApiError) is settled by the late answer or the late failure, above.
        if (!(e instanceof ApiError)) settle(e)
        throw e
      }
    }
  }

  private withTimeout<T>(q: Promise<T>, onLate: (v: T) => void, onLateError?: (e: unknown) => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let timedOut = false
      const timer = setTimeout(() => {
        timedOut = true
        this.log.error({ msg: 'quota: database call timed out', timeoutMs: this.o.leaseTimeoutMs })
        reject(unavailable())
      }, this.o.leaseTimeoutMs)
      q.then(
        (v) => {
          clearTimeout(timer)
          if (timedOut) onLate(v)
          else resolve(v)
        },
        (e: unknown) => {
          clearTimeout(timer)
          if (!timedOut) reject(e)
          else onLateError?.(e)
        },
      )
    })
  }

  /** Free read of both windows (single-flight per account); updates the view when still current. */
  private read(a: Acct): Promise<Snap> {
    if (a.reading) return a.reading
    const dayStart = a.dayStart
    const monthStart = a.monthStart
    const gen = a.gen
    const p = (async (): Promise<Snap> => {
      const returning = this.returning.get(returnKey(a.id, dayStart, monthStart))
      if (returning) await returning
      let rows: { daily_limit: number; monthly_limit: number; day_used: string; month_used: string }[]
      try {
        rows = await this.withTimeout(this.sql<typeof rows>`
          SELECT a.daily_limit, a.monthly_limit,
            coalesce((SELECT q.used FROM quota_usage q WHERE q.account_id = a.id AND q.window_kind = 'day' AND q.window_start = ${iso(dayStart)}::timestamptz), 0) AS day_used,
            coalesce((SELECT q.used FROM quota_usage q WHERE q.account_id = a.id AND q.window_kind = 'month' AND q.window_start = ${iso(monthStart)}::timestamptz), 0) AS month_used
          FROM accounts a WHERE a.id = ${a.id}::bigint`, () => undefined)
      } catch (e) {
        this.log.error({ msg: 'quota: state read failed', accountId: a.id, err: e })
        throw unavailable()
      }
      const r = rows[0]
      if (!r) {
        this.retire(a)
        this.accounts.delete(a.id)
        throw accountGone()
      }
      const now = this.clock()
      const d = dayWindow(dayStart)
      const m = monthWindow(monthStart)
      const current = a.dayStart === dayStart && a.monthStart === monthStart && a.gen === gen
      const s: Snap = {
        dayStart, dayReset: d.reset, monthStart, monthReset: m.reset,
        dayLimit: r.daily_limit, monthLimit: r.monthly_limit, dayUsed: Number(r.day_used), monthUsed: Number(r.month_used),
        units: current ? a.units : 0,
      }
      if (current && !a.leasing) {
        a.dayLimit = s.dayLimit
        a.monthLimit = s.monthLimit
        a.dayUsed = s.dayUsed
        a.monthUsed = s.monthUsed
        a.known = true
        a.viewAt = now
      }
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
  // Returning unused units

  /** Moves the account's unused units to the return queue (the view keeps `remaining` unchanged). */
  private retire(a: Acct): void {
    if (a.units <= 0) return
    const n = a.units
    a.units = 0
    a.dayUsed -= n
    a.monthUsed -= n
    this.queueReturn(a.id, a.dayStart, a.monthStart, n)
  }

  private queueReturn(id: string, dayStart: number, monthStart: number, units: number): void {
    if (units <= 0) return
    const key = returnKey(id, dayStart, monthStart)
    const r = this.returns.get(key)
    if (r) r.units += units
    else this.returns.set(key, { id, dayStart, monthStart, units, attempts: 0, notBefore: 0 })
    this.ensureTimer()
    this.kickReturns()
  }

  private queueCancel(c: PendingCancel): void {
    this.cancels.set(c.leaseId, c)
    this.ensureTimer()
    this.kickReturns()
  }

  private kickReturns(): void {
    if (this.flushing || this.returns.size + this.resends.size + this.cancels.size === 0) return
    const p = this.flushReturns(false)
      .catch((err: unknown) => this.log.error({ msg: 'quota: returning unused units failed', err }))
      .finally(() => {
        if (this.flushing === p) this.flushing = undefined
      })
    this.flushing = p
  }

  /**
   * Sends due returns and lease cancels (all of them when `all`), until none is due; failures wait with
   * backoff. Every call here is idempotent by its id (migration 003), so any failure — also a connection
   * lost while the call was out — is retried with the same id.
   */
  private async flushReturns(all: boolean): Promise<void> {
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
            this.returns.delete(returnKey(r.id, r.dayStart, r.monthStart))
            r.rid = randomUUID()
          } else this.resends.delete(r.rid)
          const rid = r.rid
          return send(returnKey(r.id, r.dayStart, r.monthStart), async () => {
            try {
              await this.withTimeout(
                this.sql`SELECT orgscan_quota_return(${rid}::uuid, ${r.id}::bigint, ${iso(r.dayStart)}::timestamptz, ${iso(r.monthStart)}::timestamptz, ${r.units}::integer)`,
                () => undefined, // applied after all; the resend below will then be a no-op
              )
              // Applied now or by an earlier attempt whose answer was lost (then this one was a no-op).
              this.stats.returnedUnits += r.units
            } catch (err) {
              failed = true
              if (r.attempts + 1 < MAX_RETURN_ATTEMPTS) {
                r.attempts++
                if (r.attempts === 1) this.log.warn({ msg: 'quota: returning unused units failed; will retry', accountId: r.id, units: r.units, err })
                r.notBefore = backoff(r.attempts)
                this.resends.set(rid, r)
                this.ensureTimer()
              } else this.dropReturn(r, err)
            }
          })
        }),
        ...dueCancels.map((c) => {
          this.cancels.delete(c.leaseId)
          return send(returnKey(c.id, c.dayStart, c.monthStart), async () => {
            try {
              const rows = await this.withTimeout(
                this.sql<{ applied: boolean; returned: number }[]>`
                  SELECT applied, returned FROM orgscan_quota_lease_cancel(${c.leaseId}::uuid, ${c.id}::bigint, ${iso(c.dayStart)}::timestamptz, ${iso(c.monthStart)}::timestamptz)`,
                () => undefined,
              )
              const row = rows[0]!
              this.stats.returnedUnits += row.returned
              // Applied: its giveBack went back with it. Not applied (and now it never will be): send it again.
              if (row.applied) this.stats.returnedUnits += c.giveBack
              else if (c.giveBack > 0) this.queueReturn(c.id, c.dayStart, c.monthStart, c.giveBack)
              if (row.returned > 0 || c.giveBack > 0) this.log.info({ msg: 'quota: lease with a lost answer settled', accountId: c.id, applied: row.applied, returned: row.returned, giveBack: c.giveBack })
            } catch (err) {
              failed = true
              if (c.attempts + 1 < MAX_RETURN_ATTEMPTS) {
                c.attempts++
                c.notBefore = backoff(c.attempts)
                this.cancels.set(c.leaseId, c)
                this.ensureTimer()
              } else this.dropCancel(c, err)
            }
          })
        }),
      ])
      if (all && failed) return
    }
  }

  private dropReturn(r: PendingReturn, err: unknown): void {
    this.stats.droppedReturnUnits += r.units
    this.log.warn({ msg: 'quota: unused units not returned; they stay counted', accountId: r.id, units: r.units, err })
  }

  private dropCancel(c: PendingCancel, err: unknown): void {
    this.stats.droppedReturnUnits += c.giveBack
    this.log.warn({ msg: 'quota: a lease whose answer was lost could not be settled; its units stay counted', accountId: c.id, giveBack: c.giveBack, err })
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

  private logExempt(now: number, force: boolean): void {
    for (const [id, e] of this.exemptSeen) {
      if (!force && now - e.loggedAt < this.o.exemptLogIntervalMs) continue
      if (e.count > 0) this.log.info({ msg: 'quota exempt usage', accountId: id, requests: e.count, credentials: [...e.credentials] })
      if (e.count === 0 || force) this.exemptSeen.delete(id)
      else {
        e.count = 0
        e.credentials.clear()
        e.loggedAt = now
      }
    }
  }
}
