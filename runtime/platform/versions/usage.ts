/**
 * Who called each version (docs/versioning.md "Deprecation notices"): every authenticated request records its API key
 * (or, signed in with OAuth, its user) against the surface and version it called, in memory; the records are written
 * in one statement every `flushMs` (and on shutdown), never a write per request, and rows older than 90 days are
 * pruned. `orgscan versions notify` reads them.
 */
import type postgres from 'postgres'
import type { Clock } from '../../core/config-types.ts'
import type { Logger } from '../../core/log.ts'
import type { Principal } from '../../core/principal.ts'
import type { Surface } from '../../core/plan.ts'

/** How long a call is remembered. */
export const USAGE_DAYS = 90
const DAY_MS = 86_400_000
/** Distinct callers held before an early flush (each is a few hundred bytes). */
const MAX_PENDING = 50_000

interface Pending {
  surface: Surface
  version: string
  caller: string
  accountId: string
  keyId: string | null
  userId: string | null
  at: number
}

export class VersionUsage {
  private pending = new Map<string, Pending>()
  private readonly timer: NodeJS.Timeout
  private lastPrune = 0
  private flushing: Promise<void> | undefined

  constructor(
    private readonly sql: postgres.Sql,
    private readonly clock: Clock,
    private readonly log: Logger,
    flushMs = 30_000,
  ) {
    this.timer = setInterval(() => void this.flush(), flushMs)
    this.timer.unref()
  }

  /** Notes that `p` called `version` of `surface` now (an API key by its id; an OAuth user by user id). */
  record(p: Principal, surface: Surface, version: string): void {
    const caller = p.method === 'api_key' ? `key:${p.credentialId}` : p.userId !== null ? `user:${p.userId}` : undefined
    if (!caller) return
    const k = `${surface} ${version} ${caller}`
    const hit = this.pending.get(k)
    const at = this.clock()
    if (hit) {
      hit.at = at
      return
    }
    this.pending.set(k, { surface, version, caller, accountId: p.accountId, keyId: p.method === 'api_key' ? p.credentialId : null, userId: p.userId, at })
    if (this.pending.size >= MAX_PENDING) void this.flush()
  }

  /** Writes what was recorded (one statement) and, at most hourly, prunes calls older than 90 days. Never throws. */
  flush(): Promise<void> {
    const run = async () => {
      const batch = [...this.pending.values()]
      this.pending = new Map()
      try {
        if (batch.length) await this.write(batch)
        const now = this.clock()
        if (now - this.lastPrune >= 3_600_000) {
          this.lastPrune = now
          await this.sql`DELETE FROM version_callers WHERE last_called_at < ${new Date(now - USAGE_DAYS * DAY_MS)}`
        }
      } catch (err) {
        this.log.warn({ msg: 'versions: recording which credentials called each version failed; these calls are not recorded', callers: batch.length, err })
      }
    }
    // One flush at a time: a later one waits for the earlier, so records are written in order.
    const next = (this.flushing ?? Promise.resolve()).then(run)
    this.flushing = next.finally(() => {
      if (this.flushing === next) this.flushing = undefined
    })
    return next
  }

  private async write(batch: Pending[]): Promise<void> {
    const col = <K extends keyof Pending>(k: K) => batch.map((b) => b[k])
    // Keys, users or accounts removed since the call are skipped (their rows would violate the foreign keys).
    await this.sql`
      INSERT INTO version_callers (surface, version, caller, account_id, key_id, user_id, last_called_at)
      SELECT u.surface, u.version, u.caller, u.account_id, u.key_id, u.user_id, u.at
      FROM unnest(${col('surface')}::text[], ${col('version')}::text[], ${col('caller')}::text[], ${col('accountId')}::bigint[],
        ${col('keyId') as string[]}::text[], ${col('userId') as string[]}::bigint[], ${batch.map((b) => new Date(b.at).toISOString())}::timestamptz[])
        AS u(surface, version, caller, account_id, key_id, user_id, at)
      WHERE EXISTS (SELECT 1 FROM accounts a WHERE a.id = u.account_id)
        AND (u.key_id IS NULL OR EXISTS (SELECT 1 FROM api_keys k WHERE k.key_id = u.key_id))
        AND (u.user_id IS NULL OR EXISTS (SELECT 1 FROM users x WHERE x.id = u.user_id))
      ON CONFLICT (surface, version, caller) DO UPDATE SET
        last_called_at = greatest(version_callers.last_called_at, excluded.last_called_at),
        account_id = excluded.account_id, user_id = excluded.user_id`
  }

  async close(): Promise<void> {
    clearInterval(this.timer)
    await this.flush()
  }
}
