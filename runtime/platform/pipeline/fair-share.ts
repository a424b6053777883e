/**
 * Fair share of the database among accounts (docs/adr/0100-fair-share.md, docs/adr/0197-pipelining-within-an-account.md).
 * A read takes a turn before its first statement and gives it back when its statements are done. A turn names one of
 * the read pool's `slots` connections, on which the read runs. Three bounds hold by construction:
 *
 * - a connection serves one account at a time: a read never queues behind another account's statement (postgres.js
 *   would pipeline it behind any busy connection; here each connection is a pool of its own);
 * - one account holds at most `perAccount` connections, and never all `slots` (at most `slots − 1` when there are two
 *   or more): a busy or hostile account always leaves a connection to the others;
 * - an account may pipeline up to `depth` reads on a connection it holds, and only while it is alone: no other account
 *   has a read running or waiting, and none has been seen (`saw`, every request, answers from the cache included)
 *   for `aloneMs`. Its statements then run back to back, without the round trip and wake-up each would cost alone.
 *   Pipelining buys one account's throughput with everyone else's share of the CPU, so it is bought only when nobody
 *   else is there to pay, and a connection an account holds is never kept from another any longer than the reads
 *   already sent.
 *
 * When connections are contended, requests wait here, and each freed connection goes to the waiting account with the
 * fewest connections held, the one served longest ago among equals: accounts are served in turn, and a newcomer goes
 * ahead of an account that already has many reads running. On the embedded database (one connection) the account whose
 * read just ended is not served again before every other waiting account has had its turn.
 *
 * The wait is bounded: at most `queueDepth` requests of an account wait, each at most `maxWaitMs`; past either, 429
 * `concurrency_limited` with `Retry-After: 1`. So a read either is handed to a connection within `maxWaitMs` or is
 * refused, and once handed it waits at most for `depth − 1` reads of its own account and then runs at most the
 * statement timeout.
 *
 * Memory is bounded: an account with nothing running and nothing waiting holds no state.
 */
import { ApiError } from '../../core/errors.ts'

export interface FairShareOptions {
  /** Connections of the read pool (≥ 1). */
  slots: number
  /** Connections one account holds at once (≥ 1); held to `slots − 1` when `slots` is 2 or more. */
  perAccount: number
  /** Reads of one account pipelined on one connection it holds (≥ 1; default 1: one read a connection). */
  depth?: number
  /** How long after another account's request an account counts as not alone (no pipelining), ms (default 1000). */
  aloneMs?: number
  /** The clock for `aloneMs`, ms (default `performance.now`). */
  now?: () => number
  /** Requests of one account waiting for a turn (≥ 0). */
  queueDepth: number
  /** Longest wait for a turn, ms. */
  maxWaitMs: number
}

/** Gives the turn back; idempotent. */
export type Release = () => void

/** A read's turn: the connection it runs on (an index into the read pool's connections) and how to give it back. */
export interface Turn {
  connection: number
  release: Release
}

interface Waiter {
  grant: (t: Turn) => void
  timer?: NodeJS.Timeout
}

interface Lane {
  accountId: string
  /** Turns out. */
  active: number
  /** Connections held. */
  held: number
  queue: Waiter[]
  /** When the account last got a connection (a sequence number): among equals, the one served longest ago goes first. */
  served: number
}

interface Connection {
  /** The account whose reads it runs; none when it runs none. */
  owner?: Lane
  /** Reads handed to it and not yet given back. */
  reads: number
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
  private readonly connections: Connection[]
  private turns = 0
  /** The account of the last request seen and when; when an account other than it was last seen. */
  private seen?: string
  private seenAt = -Infinity
  private beforeAt = -Infinity
  private readonly now: () => number
  private readonly aloneMs: number
  /** Connections one account may hold at once (`perAccount`, below `slots`). */
  readonly perAccount: number
  /** Reads of one account pipelined on one connection. */
  readonly depth: number

  constructor(private readonly o: FairShareOptions) {
    const depth = o.depth ?? 1
    if (!(o.slots >= 1) || !(o.perAccount >= 1) || !(depth >= 1) || !(o.queueDepth >= 0) || !(o.maxWaitMs >= 0)) {
      throw new Error('FairShare: slots, perAccount and depth must be ≥ 1, queueDepth and maxWaitMs ≥ 0')
    }
    this.perAccount = Math.min(o.perAccount, Math.max(1, o.slots - 1))
    this.depth = depth
    this.aloneMs = o.aloneMs ?? 1000
    this.now = o.now ?? (() => performance.now())
    this.connections = Array.from({ length: o.slots }, () => ({ reads: 0 }))
  }

  /**
   * A request of `accountId` (any: one answered from the cache too), for telling whether an account is alone. The
   * pipeline calls it for every request before it reads; `acquire` does not.
   */
  saw(accountId: string): void {
    if (this.depth === 1) return // never pipelines: nothing to tell
    const now = this.now()
    if (accountId !== this.seen) {
      this.beforeAt = this.seenAt
      this.seen = accountId
    }
    this.seenAt = now
  }

  /** Waits for the account's turn; rejects with `concurrency_limited` when the account's queue is full or the wait too long. */
  acquire(accountId: string): Promise<Turn> {
    let lane = this.lanes.get(accountId)
    if (!lane) {
      lane = { accountId, active: 0, held: 0, queue: [], served: 0 }
      this.lanes.set(accountId, lane)
    }
    // Requests of an account are served in order: only one whose account has none waiting may go at once.
    const now = lane.queue.length === 0 ? this.connectionFor(lane) : undefined
    if (now !== undefined) return Promise.resolve(this.grant(lane, now))
    if (lane.queue.length >= this.o.queueDepth || this.o.maxWaitMs === 0) {
      const refused = lane.queue.length >= this.o.queueDepth ? concurrencyLimited(this.perAccount) : couldNotStart(this.perAccount, 0)
      this.forget(lane)
      return Promise.reject(refused)
    }
    const l = lane
    return new Promise<Turn>((resolve, reject) => {
      const w: Waiter = { grant: resolve }
      w.timer = setTimeout(() => {
        const i = l.queue.indexOf(w)
        if (i >= 0) l.queue.splice(i, 1)
        if (l.queue.length === 0) this.waiting.delete(l)
        this.forget(l)
        reject(couldNotStart(this.perAccount, this.o.maxWaitMs))
        // A lane that waited for a connection may have held back another's pipelining.
        this.dispatch()
      }, this.o.maxWaitMs)
      l.queue.push(w)
      this.waiting.add(l)
      // Alone again since its last read was handed out: what waits may be pipelined now.
      if (this.waiting.size === 1 && this.mayPipeline(l)) this.dispatch()
    })
  }

  /** Whether no request reads or waits in this process (a drain waits for it before it closes the database). */
  get idle(): boolean {
    return this.lanes.size === 0
  }

  /** Requests running and waiting for an account in this process (diagnostics, tests). */
  load(accountId: string): { active: number; queued: number; connections: number } {
    const lane = this.lanes.get(accountId)
    return { active: lane?.active ?? 0, queued: lane?.queue.length ?? 0, connections: lane?.held ?? 0 }
  }

  /**
   * The connection a read of `lane` may take now: a free one while the account holds fewer than its share, else (while
   * it is alone) the least loaded of its own with room in its pipeline.
   */
  private connectionFor(lane: Lane): number | undefined {
    if (lane.held < this.perAccount) {
      const free = this.connections.findIndex((c) => c.owner === undefined)
      if (free >= 0) return free
    }
    if (!this.mayPipeline(lane)) return undefined
    let best: number | undefined
    for (let i = 0; i < this.connections.length; i++) {
      const c = this.connections[i]
      if (c.owner === lane && c.reads < this.depth && (best === undefined || c.reads < this.connections[best].reads)) best = i
    }
    return best
  }

  /** Whether `lane`'s account is alone, so that it may pipeline: no other account reads, waits or was seen lately. */
  private mayPipeline(lane: Lane): boolean {
    if (this.depth === 1 || this.lanes.size > 1) return false
    const otherAt = this.seen === lane.accountId ? this.beforeAt : this.seenAt
    return this.now() - otherAt >= this.aloneMs
  }

  private grant(lane: Lane, i: number): Turn {
    const c = this.connections[i]
    if (c.owner === undefined) {
      c.owner = lane
      lane.held++
      lane.served = ++this.turns
    }
    c.reads++
    lane.active++
    let done = false
    return {
      connection: i,
      release: () => {
        if (done) return
        done = true
        lane.active--
        if (--c.reads === 0) {
          c.owner = undefined
          lane.held--
        }
        this.dispatch()
        this.forget(lane)
      },
    }
  }

  /**
   * Hands what is free to waiting accounts: each free connection to the account holding the fewest, then the one
   * served longest ago; then room in its pipelines to an account that is alone.
   */
  private dispatch(): void {
    for (;;) {
      const free = this.connections.findIndex((c) => c.owner === undefined)
      if (free < 0) break
      let next: Lane | undefined
      for (const lane of this.waiting) {
        if (lane.held >= this.perAccount) continue
        if (!next || lane.held < next.held || (lane.held === next.held && lane.served < next.served)) next = lane
      }
      if (!next) break
      this.serve(next, free)
    }
    if (this.depth === 1 || this.waiting.size !== 1) return
    for (const lane of this.waiting) {
      for (let i = this.connectionFor(lane); i !== undefined && lane.queue.length > 0; i = this.connectionFor(lane)) this.serve(lane, i)
    }
  }

  /** Gives the oldest waiting request of `lane` its turn on connection `i`. */
  private serve(lane: Lane, i: number): void {
    const w = lane.queue.shift()!
    if (lane.queue.length === 0) this.waiting.delete(lane)
    clearTimeout(w.timer)
    w.grant(this.grant(lane, i))
  }

  /** Drops an account's state once it has nothing running and nothing waiting. */
  private forget(lane: Lane): void {
    if (lane.active === 0 && lane.queue.length === 0 && this.lanes.get(lane.accountId) === lane) this.lanes.delete(lane.accountId)
  }
}
