/**
 * Fair share of the database among accounts (docs/adr/0016-fair-share-per-account.md). In one process, an account may
 * have at most `perAccount` requests reading the database at once; its further requests wait in the account's
 * own queue (at most `queueDepth` of them, each at most `maxWaitMs`). So one account's expensive requests hold at
 * most `perAccount` connections of the read pool, and every other account's requests find the rest: a busy or
 * hostile account slows down itself, not its neighbours. A request that finds its account's queue full, or
 * waits longer than `maxWaitMs`, fails with 429 `concurrency_limited` and `Retry-After: 1`.
 *
 * Memory is bounded: an account with nothing running and nothing queued holds no state.
 */
import { ApiError } from '../errors.ts'

export interface FairShareOptions {
  /** Requests of one account reading the database at once, per process (≥ 1). */
  perAccount: number
  /** Requests of one account waiting for a turn, per process (≥ 0). */
  queueDepth: number
  /** Longest wait for a turn, ms. */
  maxWaitMs: number
}

/** Gives the turn back; idempotent. */
export type Release = () => void

interface Waiter {
  grant: (r: Release) => void
  timer: NodeJS.Timeout
}

interface Lane {
  active: number
  queue: Waiter[]
}

/** The 429 of a request that could not get a turn (the request is not charged). */
export function concurrencyLimited(perAccount: number): ApiError {
  return new ApiError(
    'concurrency_limited',
    `Too many requests of this account are in progress (at most ${perAccount} at once). Retry after 1 seconds.`,
    { retryAfterSeconds: 1, limit: perAccount },
  )
}

export class FairShare {
  private readonly lanes = new Map<string, Lane>()

  constructor(private readonly o: FairShareOptions) {
    if (!(o.perAccount >= 1) || !(o.queueDepth >= 0) || !(o.maxWaitMs >= 0)) {
      throw new Error('FairShare: perAccount must be ≥ 1, queueDepth and maxWaitMs ≥ 0')
    }
  }

  /** Waits for the account's turn; rejects with `concurrency_limited` when the account's queue is full or the wait too long. */
  acquire(accountId: string): Promise<Release> {
    let lane = this.lanes.get(accountId)
    if (!lane) {
      lane = { active: 0, queue: [] }
      this.lanes.set(accountId, lane)
    }
    if (lane.active < this.o.perAccount) {
      lane.active++
      return Promise.resolve(this.releaser(accountId, lane))
    }
    if (lane.queue.length >= this.o.queueDepth) return Promise.reject(concurrencyLimited(this.o.perAccount))
    const l = lane
    return new Promise<Release>((resolve, reject) => {
      const w: Waiter = {
        grant: resolve,
        timer: setTimeout(() => {
          const i = l.queue.indexOf(w)
          if (i >= 0) l.queue.splice(i, 1)
          reject(concurrencyLimited(this.o.perAccount))
        }, this.o.maxWaitMs),
      }
      l.queue.push(w)
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

  private releaser(accountId: string, lane: Lane): Release {
    let done = false
    return () => {
      if (done) return
      done = true
      const next = lane.queue.shift()
      if (next) {
        clearTimeout(next.timer)
        next.grant(this.releaser(accountId, lane)) // the turn passes on; `active` is unchanged
        return
      }
      lane.active--
      if (lane.active === 0) this.lanes.delete(accountId)
    }
  }
}
