/**
 * Adaptive prefetch (docs/quota.md "Policy"): a lease asks, beyond the requests waiting now, for about
 * `leaseHorizonMs` of this account's recent traffic in this process, at most `maxLease` in all. The rate
 * follows increases at once and decays towards lower rates with a 1 s time constant, so a request after a
 * long pause does not inherit the rate of an hour ago.
 */
import type { QuotaSettings } from './pg-quota-options.ts'

/** One account's recent request rate in this process. */
export class RequestRate {
  private rate = 0
  private count = 0
  private since: number

  constructor(now: number) {
    this.since = now
  }

  /** Counts one request. */
  hit(): void {
    this.count++
  }

  /** Requests per second; the estimate moves only when at least 20 ms passed since it last moved. */
  perSecond(now: number): number {
    const elapsed = now - this.since
    if (elapsed >= 20) {
      const inst = (this.count * 1000) / elapsed
      this.rate = inst >= this.rate ? inst : inst + (this.rate - inst) * Math.exp(-elapsed / 1000)
      this.count = 0
      this.since = now
    }
    return this.rate
  }
}

/** Units to ask for beyond `need`: a fixed number, or the rate × horizon less `need`; never past `maxLease`. */
export function prefetchUnits(o: Pick<QuotaSettings, 'maxLease' | 'prefetch' | 'leaseHorizonMs'>, rate: RequestRate, now: number, need: number): number {
  const room = o.maxLease - need
  if (room <= 0) return 0
  if (typeof o.prefetch === 'number') return Math.max(0, Math.min(o.prefetch, room))
  const want = Math.floor((rate.perSecond(now) * o.leaseHorizonMs) / 1000)
  return Math.max(0, Math.min(want - need, room))
}
