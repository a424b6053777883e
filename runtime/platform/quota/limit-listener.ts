/**
 * Limit changes made by any process (docs/quota.md "Limit changes"): the migration 003 triggers NOTIFY
 * `orgscan_quota` with the account id when an account's limits change or it is deleted, and the engine
 * drops that account's lease. Every (re)LISTEN after the first follows a lost connection, during which
 * notifications may have been missed: then every account is dropped. LISTEN needs its own connection, so
 * it is used only on a PostgreSQL server.
 */
import type postgres from 'postgres'
import type { Logger } from '../../core/log.ts'

/** NOTIFY channel of limit changes and account deletions (migration 003 triggers; payload: account id). */
export const QUOTA_CHANNEL = 'orgscan_quota'

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

export class LimitListener {
  private readonly listening: Promise<void>
  private unlisten: (() => Promise<void>) | undefined
  private listenedOnce = false
  private closed = false

  /**
   * `invalidate(payload)` for one notification, `invalidate()` for all (after a reconnect). Also used for other
   * channels with the same semantics (`channel`, and `lost` for the log line when LISTEN fails).
   */
  constructor(sql: postgres.Sql, log: Logger, invalidate: (payload?: string) => void, channel = QUOTA_CHANNEL, lost = 'quota: LISTEN failed; limit changes apply within the lease lifetime') {
    this.listening = sql
      .listen(
        channel,
        (payload) => invalidate(payload),
        () => {
          if (this.listenedOnce) invalidate()
          this.listenedOnce = true
        },
      )
      .then(
        (meta) => {
          this.unlisten = () => meta.unlisten()
          if (this.closed) void meta.unlisten().catch(() => undefined)
        },
        (err: unknown) => log.warn({ msg: lost, err }),
      )
  }

  /** Resolves once LISTEN is active (or has failed: limit changes then apply within the lease lifetime). */
  ready(): Promise<void> {
    return this.listening
  }

  /** Bounded: with the database gone, LISTEN/UNLISTEN could wait for a reconnect that never comes. */
  async close(): Promise<void> {
    this.closed = true
    await within(this.listening, 2000)
    await within(this.unlisten?.().catch(() => undefined) ?? Promise.resolve(), 2000)
  }
}
