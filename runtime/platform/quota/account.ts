/**
 * One account's quota state in this process (docs/quota.md "Counting"): the current windows, what the
 * database last said about them, and the leased units not used yet. A unit is only ever served from a
 * lease the database counted; `dayUsed`/`monthUsed` include this process's unused units, so what a client
 * has left is `limit − used + units`.
 */
import type { QuotaCharge } from '../../core/quota-types.ts'
import { dayWindow, monthWindow } from './windows.ts'
import { RequestRate } from './request-rate.ts'

/** What the database said about both windows. */
export interface Counts {
  dayLimit: number
  monthLimit: number
  /** `used` in the database, including every unit leased by any process. */
  dayUsed: number
  monthUsed: number
}

/** The windows plus what the database said about them, plus this process's unused units. */
export interface Snap extends Counts {
  dayStart: number
  dayReset: number
  monthStart: number
  monthReset: number
  /** Leased units this process has not used yet (they are inside dayUsed/monthUsed). */
  units: number
}

/** A request waiting for a lease call. */
export interface Waiter {
  resolve(c: QuotaCharge): void
  reject(e: unknown): void
}

export interface Acct extends Snap {
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
  /** Recent request rate in this process, for adaptive prefetch. */
  rate: RequestRate
}

/** Where retired units go (settlement.ts queues them for return to their windows). */
export interface ReturnQueue {
  queueReturn(id: string, dayStart: number, monthStart: number, units: number): void
}

export function newAccount(id: string, now: number): Acct {
  const d = dayWindow(now)
  const m = monthWindow(now)
  return {
    id, dayStart: d.start, dayReset: d.reset, monthStart: m.start, monthReset: m.reset,
    dayLimit: 0, monthLimit: 0, dayUsed: 0, monthUsed: 0, units: 0,
    gen: 0, known: false, viewAt: 0, leasedAt: 0, lastUse: now, lastTouch: now,
    waiters: [], leasing: false, reading: undefined, blockedUntil: 0, lastGrant: 0, aheadPauseUntil: 0,
    rate: new RequestRate(now),
  }
}

/** The clock has left the account's day (either way): its windows are no longer current. */
export function windowsStale(a: Acct, now: number): boolean {
  return now >= a.dayReset || now < a.dayStart
}

/** Queues the account's unused units for return; the view keeps `remaining` unchanged. */
export function retire(a: Acct, returns: ReturnQueue): void {
  if (a.units <= 0) return
  const n = a.units
  a.units = 0
  a.dayUsed -= n
  a.monthUsed -= n
  returns.queueReturn(a.id, a.dayStart, a.monthStart, n)
}

/** The clock left the account's day: its units go back to the old windows; the view starts over. */
export function roll(a: Acct, now: number, returns: ReturnQueue): void {
  retire(a, returns)
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

/** The account is still on the windows and limits generation a call was made for. */
export function isCurrent(a: Acct, dayStart: number, monthStart: number, gen: number): boolean {
  return a.dayStart === dayStart && a.monthStart === monthStart && a.gen === gen
}

/** Records what the database said about the current windows. */
export function noteCounts(a: Acct, c: Counts, at: number): void {
  a.dayLimit = c.dayLimit
  a.monthLimit = c.monthLimit
  a.dayUsed = c.dayUsed
  a.monthUsed = c.monthUsed
  a.known = true
  a.viewAt = at
}

/** A snapshot of the windows starting at `dayStart`/`monthStart`, as the database described them. */
export function snapshot(dayStart: number, monthStart: number, c: Counts, units: number): Snap {
  return {
    dayStart, dayReset: dayWindow(dayStart).reset, monthStart, monthReset: monthWindow(monthStart).reset,
    dayLimit: c.dayLimit, monthLimit: c.monthLimit, dayUsed: c.dayUsed, monthUsed: c.monthUsed,
    units,
  }
}
