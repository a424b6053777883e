/**
 * Fair share of the database among accounts (docs/adr/0100-fair-share.md). A read takes a turn before its first
 * statement and gives it back when its statements are done. Two bounds hold by construction:
 *
 * - at most `slots` turns are out at once in the process: the read pool's connections, so a read that has its turn
 *   starts at once on a free connection and never queues inside the driver behind another account's statement
 *   (postgres.js would pipeline it behind a busy one);
 * - one account holds at most `perAccount` of them, and never all `slots` (at most `slots − 1` when there are two or
 *   more): a busy or hostile account always leaves a connection to the others.
 *
 * When turns are contended, requests wait here, and each freed turn goes to the waiting account with the fewest turns
 * out, the one served longest ago among equals: accounts are served in turn, and a newcomer goes ahead of an account
 * that already has many reads running. On the embedded database (one slot) the account whose read just ended is not
 * served again before every other waiting account has had its turn.
 *
 * The wait is bounded: at most `queueDepth` requests of an account wait, each at most `maxWaitMs`; past either, 429
 * `concurrency_limited` with `Retry-After: 1`. So a read either starts within `maxWaitMs` or is refused, and once
 * started it runs at most the statement timeout.
 *
 * Memory is bounded: an account with nothing running and nothing waiting holds no state.
 */
import { ApiError } from '../../core/errors.ts'

export interface FairShareOptions {
  /** Turns out at once in the process (≥ 1): the read pool's connections. */
  slots: number
  /** Turns of one account at once (≥ 1); held to `slots − 1` when `slots` is 2 or more. */
  perAccount: number
  /** Requests of one account waiting for a turn (≥ 0). */
  queueDepth: number
  /** Longest wait for a turn, ms. */
  maxWaitMs: number
}

/** Gives the turn back; idempotent. */
export type Release = () => void

interface Waiter {
  grant: (r: Release) => void
  timer?: NodeJS.Timeout
}

interface Lane {
  accountId: string
  /** Turns out. */
  active: number
  queue: Waiter[]
  /** When the account last got a turn (a sequence number): among equals, the one served longest ago goes first. */
  served: number
}

/** The 429 of a request that found its account's queue full (the request is not charged). */
export function concurrencyLimited(perAccount: number): ApiError {
  return new ApiError(
    'concurrency_limited',
    `Too many requests of this account are in progress (at most ${perAccount} at once). Retry after 1 seconds.`,
    { retryAfterSeconds: 1, limit: perAccount },
  )
}

/** The 429 of a request whose read could not start within the wait bound (the request is not charged). */
function couldNotStart(perAccount: number, maxWaitMs: number): ApiError {
  return new ApiError(
    'concurrency_limited',
    `The database is busy: this request could not start within ${maxWaitMs} ms (this account may run ${perAccount} at once). Retry after 1 seconds.`,
    { retryAfterSeconds: 1, limit: perAccount },
  )
}

export class FairShare {
  private readonly lanes = new Map<string, Lane>()
  /** Lanes with requests waiting. */
  private readonly waiting = new Set<Lane>()
  private running = 0
  private turns = 0
  /** Turns one account may hold at once (`perAccount`, below `slots`). */
  readonly perAccount: number

  constructor(private readonly o: FairShareOptions) {
    if (!(o.slots >= 1) || !(o.perAccount >= 1) || !(o.queueDepth >= 0) || !(o.maxWaitMs >= 0)) {
      throw new Error('FairShare: slots and perAccount must be ≥ 1, queueDepth and maxWaitMs ≥ 0')
    }
    this.perAccount = Math.min(o.perAccount, Math.max(1, o.slots - 1))
  }

  /** Waits for the account's turn; rejects with `concurrency_limited` when the account's queue is full or the wait too long. */
  acquire(accountId: string): Promise<Release> {
    let lane = this.lanes.get(accountId)
    if (!lane) {
      lane = { accountId, active: 0, queue: [], served: 0 }
      this.lanes.set(accountId, lane)
    }
    // Nobody eligible waits while a turn is free (dispatch keeps it so): a free turn is this request's.
    if (this.running < this.o.slots && lane.active < this.perAccount) return Promise.resolve(this.grant(lane))
    if (lane.queue.length >= this.o.queueDepth || this.o.maxWaitMs === 0) {
      const refused = lane.queue.length >= this.o.queueDepth ? concurrencyLimited(this.perAccount) : couldNotStart(this.perAccount, 0)
      this.forget(lane)
      return Promise.reject(refused)
    }
    const l = lane
    return new Promise<Release>((resolve, reject) => {
      const w: Waiter = { grant: resolve }
      w.timer = setTimeout(() => {
        const i = l.queue.indexOf(w)
        if (i >= 0) l.queue.splice(i, 1)
        if (l.queue.length === 0) this.waiting.delete(l)
        this.forget(l)
        reject(couldNotStart(this.perAccount, this.o.maxWaitMs))
      }, this.o.maxWaitMs)
      l.queue.push(w)
      this.waiting.add(l)
    })
  }

  /** Whether no request reads or waits in this process (a drain waits for it before it closes the database). */
  get idle(): boolean {
    return this.lanes.size === 0
  }

  /** Requests running and waiting for an account in this process (diagnostics, tests). */
  load(accountId: string): { active: number; queued: number } {
    const lane = this.lanes.get(accountId)
    return { active: lane?.active ?? 0, queued: lane?.queue.length ?? 0 }
  }

  private grant(lane: Lane): Release {
    lane.active++
    lane.served = ++this.turns
    this.running++
    let done = false
    return () => {
      if (done) return
      done = true
      lane.active--
      this.running--
      this.dispatch()
      this.forget(lane)
    }
  }

  /** Hands free turns to waiting accounts: the fewest turns out first, then the one served longest ago. */
  private dispatch(): void {
    while (this.running < this.o.slots) {
      let next: Lane | undefined
      for (const lane of this.waiting) {
        if (lane.active >= this.perAccount) continue
        if (!next || lane.active < next.active || (lane.active === next.active && lane.served < next.served)) next = lane
      }
      if (!next) return
      const w = next.queue.shift()!
      if (next.queue.length === 0) this.waiting.delete(next)
      clearTimeout(w.timer)
      w.grant(this.grant(next))
    }
  }

  /** Drops an account's state once it has nothing running and nothing waiting. */
  private forget(lane: Lane): void {
    if (lane.active === 0 && lane.queue.length === 0 && this.lanes.get(lane.accountId) === lane) this.lanes.delete(lane.accountId)
  }
}
