/**
 * Edge shedding (docs/contract.md §7, 429 form 2): an in-process token bucket per client address, checked before
 * authentication so a flood never reaches the database. A refused request gets a bare 429 — no JSON body,
 * no X-RateLimit-* (clients then back off exponentially with jitter).
 *
 * Memory is bounded: a bucket that has refilled completely is equivalent to no bucket and is swept
 * (every `sweepIntervalMs`, checked on use — no timer); above `maxClients` buckets the oldest are evicted
 * (an evicted client just starts again with a full bucket: fail-open for that client, never for all).
 * IPv6 clients are grouped by /64 (one host usually owns a whole /64); IPv4-mapped IPv6 is plain IPv4.
 * The key is the TCP peer address: behind a reverse proxy this guard sees the proxy, so shedding then
 * belongs to the proxy (or the caller passes a trusted forwarded address).
 */
import type { ServerResponse } from 'node:http'
import { isIPv6 } from 'node:net'

export interface BurstGuardOptions {
  /** Off by default in development (configuration decides). */
  enabled: boolean
  /** Sustained requests per second per client. */
  ratePerSecond: number
  /** Bucket size: requests a client may send at once after being quiet. */
  burst: number
  /** Most buckets kept (default 100,000). */
  maxClients?: number
  /** How often full buckets are dropped (default 10,000 ms). */
  sweepIntervalMs?: number
  /** Injected clock, epoch ms (default Date.now). */
  clock?: () => number
}

interface Bucket {
  tokens: number
  at: number
}

export class BurstGuard {
  private readonly buckets = new Map<string, Bucket>()
  private readonly enabled: boolean
  private readonly rate: number
  private readonly burst: number
  private readonly maxClients: number
  private readonly sweepEvery: number
  private readonly clock: () => number
  private lastSweep: number
  /** Requests refused so far (for logs/metrics). */
  refused = 0

  constructor(opts: BurstGuardOptions) {
    this.enabled = opts.enabled
    this.rate = opts.ratePerSecond
    this.burst = opts.burst
    this.maxClients = opts.maxClients ?? 100_000
    this.sweepEvery = opts.sweepIntervalMs ?? 10_000
    this.clock = opts.clock ?? Date.now
    if (this.enabled && !(this.rate > 0 && this.burst >= 1 && this.maxClients >= 1)) {
      throw new Error('BurstGuard: ratePerSecond must be > 0, burst >= 1 and maxClients >= 1')
    }
    this.lastSweep = this.clock()
  }

  /** True when the request may proceed; false → answer a bare 429 (see `sendBare429`). */
  allow(address: string | undefined): boolean {
    if (!this.enabled) return true
    const now = this.clock()
    if (now - this.lastSweep >= this.sweepEvery) this.sweep(now)
    const key = clientKey(address)
    const b = this.buckets.get(key)
    if (!b) {
      if (this.buckets.size >= this.maxClients) this.makeRoom(now)
      this.buckets.set(key, { tokens: this.burst - 1, at: now })
      return true
    }
    const tokens = Math.min(this.burst, b.tokens + (Math.max(0, now - b.at) * this.rate) / 1000)
    b.at = now
    if (tokens >= 1) {
      b.tokens = tokens - 1
      return true
    }
    b.tokens = tokens
    this.refused++
    return false
  }

  /**
   * Seconds until the client has a token again, without taking one: 0 when it has one now (or the guard is off).
   * `allow` takes one; together they count events other than requests, such as failed authentications.
   */
  waitSeconds(address: string | undefined): number {
    if (!this.enabled) return 0
    const b = this.buckets.get(clientKey(address))
    if (!b) return 0
    const tokens = Math.min(this.burst, b.tokens + (Math.max(0, this.clock() - b.at) * this.rate) / 1000)
    return tokens >= 1 ? 0 : Math.max(1, Math.ceil((1 - tokens) / this.rate))
  }

  /**
   * Returns a token `allow` took, for an event that turned out not to count (a lookup taken up front that succeeded).
   * Counting before the outcome is known is what makes a limit hold under concurrency: N requests arriving at once can
   * start at most as many lookups as the bucket holds, where checking first and counting after let all N through.
   */
  giveBack(address: string | undefined): void {
    if (!this.enabled) return
    const b = this.buckets.get(clientKey(address))
    // No bucket: it was swept or evicted as full, which a returned token cannot exceed.
    if (b) b.tokens = Math.min(this.burst, b.tokens + 1)
  }

  /** Buckets currently held. */
  get size(): number {
    return this.buckets.size
  }

  /** Drops buckets that have refilled completely (identical to having none). */
  sweep(now: number = this.clock()): void {
    this.lastSweep = now
    for (const [k, b] of this.buckets) {
      if (b.tokens + (Math.max(0, now - b.at) * this.rate) / 1000 >= this.burst) this.buckets.delete(k)
    }
  }

  private makeRoom(now: number): void {
    this.sweep(now)
    // Still full: evict the oldest-inserted buckets (Map iteration order), a tenth at a time.
    if (this.buckets.size < this.maxClients) return
    let drop = Math.max(1, Math.floor(this.maxClients / 10))
    for (const k of this.buckets.keys()) {
      this.buckets.delete(k)
      if (--drop === 0) break
    }
  }
}

/**
 * The bucket key of a peer address: IPv4 as is (also when IPv4-mapped), IPv6 by its /64 prefix. No address (the
 * connection was reset before its address was read, so the server reads it when the connection opens; or a Unix
 * socket): one bucket shared by all such requests, never no limit at all.
 */
export function clientKey(address: string | undefined): string {
  if (!address) return '(unknown)'
  // An IPv4 address has no colon: the common case answered without isIPv6's regular expression (a few µs a request).
  if (!address.includes(':')) return address
  if (address.startsWith('::ffff:') && address.includes('.')) return address.slice(7)
  if (!isIPv6(address)) return address
  return `${ipv6Groups(address).slice(0, 4).join(':')}::/64`
}

/** The 8 groups of an IPv6 address (lower-case hex, no leading zeros). */
function ipv6Groups(address: string): string[] {
  const pct = address.indexOf('%')
  const a = (pct >= 0 ? address.slice(0, pct) : address).toLowerCase()
  const width = (parts: string[]) => parts.reduce((n, g) => n + (g.includes('.') ? 2 : 1), 0)
  let groups: string[]
  const dbl = a.indexOf('::')
  if (dbl >= 0) {
    const head = a.slice(0, dbl) ? a.slice(0, dbl).split(':') : []
    const tail = a.slice(dbl + 2) ? a.slice(dbl + 2).split(':') : []
    groups = [...head, ...Array<string>(Math.max(0, 8 - width(head) - width(tail))).fill('0'), ...tail]
  } else {
    groups = a.split(':')
  }
  return groups.map((g) => (g.includes('.') ? g : parseInt(g, 16).toString(16)))
}

/** The bare edge 429: no body, no X-RateLimit-*, no Retry-After (keep-alive kept: cheapest to answer). */
export function sendBare429(res: ServerResponse): void {
  if (res.headersSent) return
  res.writeHead(429, { 'Content-Length': '0' })
  res.end()
}
