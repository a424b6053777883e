/**
 * Usage by quota-exempt principals (docs/adr/0010-quota-counting-rules.md): never counted, always
 * logged — a line on an account's first exempt request, then one aggregated line per account
 * (`quota exempt usage`: requests and up to 20 credentials) at most every `intervalMs`, and on close.
 */
import type { Principal } from '../../core/principal.ts'
import type { Logger } from '../../core/log.ts'

interface Seen {
  count: number
  credentials: Set<string>
  loggedAt: number
}

export class ExemptLog {
  private readonly seen = new Map<string, Seen>()

  constructor(
    private readonly log: Logger,
    private readonly intervalMs: number,
  ) {}

  /** Accounts with exempt usage not yet forgotten. */
  get size(): number {
    return this.seen.size
  }

  /** Counts one exempt request of the account. */
  note(accountId: string, p: Principal, now: number): void {
    let e = this.seen.get(accountId)
    if (!e) {
      e = { count: 0, credentials: new Set(), loggedAt: now }
      this.seen.set(accountId, e)
      this.log.info({ msg: 'quota exempt usage', accountId, credentialId: p.credentialId, method: p.method, first: true })
    }
    e.count++
    if (e.credentials.size < 20) e.credentials.add(p.credentialId)
  }

  /** Logs the accounts whose interval has passed (all of them when `force`); forgets those without new usage. */
  flush(now: number, force: boolean): void {
    for (const [id, e] of this.seen) {
      if (!force && now - e.loggedAt < this.intervalMs) continue
      if (e.count > 0) this.log.info({ msg: 'quota exempt usage', accountId: id, requests: e.count, credentials: [...e.credentials] })
      if (e.count === 0 || force) this.seen.delete(id)
      else {
        e.count = 0
        e.credentials.clear()
        e.loggedAt = now
      }
    }
  }
}
