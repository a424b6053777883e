/**
 * Reads on a streaming replica (`DATABASE_REPLICA_URL`; docs/adr/0037-read-replica-for-completed-scans.md).
 *
 * The replica serves one thing: the records of a completed scan, which never change. Everything that decides who
 * sees what, or which scan is the latest, is read on the primary (the org-state cache, account-scoped reads, keys,
 * sessions, quota), and a replica statement is pinned to the scan the primary named: it answers only when the
 * replica's org row shows that same latest scan. An import writes the scan's rows and flips `latest_scan_id` in one
 * transaction, and a standby makes a transaction visible at once when it replays its commit, so a replica showing the
 * scan has all of its rows. A replica that is behind (lag, replay paused), failing or unreachable only moves the
 * statement to the primary: answers are the same with or without a replica, whatever its lag.
 */
import type postgres from 'postgres'
import type { Clock } from '../config-types.ts'
import type { Logger } from '../log.ts'
import { raceDeadline } from './deadline.ts'

/** What happened to the org-scoped statements offered to the replica. */
export interface ReplicaReadStats {
  /** Answered by the replica. */
  served: number
  /** The replica did not show the primary's latest scan yet (lag): answered by the primary. */
  behind: number
  /** The replica failed (unreachable, a conflict with recovery, an error): answered by the primary. */
  failed: number
  /** Sent straight to the primary while the replica was resting after a connection failure. */
  down: number
}

/** After a connection failure the replica is left alone this long (every read goes to the primary meanwhile). */
export const REPLICA_REST_MS = 5_000

export class ReplicaReads {
  private downUntil = 0
  private lastFailureLog = -Infinity
  private readonly counts: ReplicaReadStats = { served: 0, behind: 0, failed: 0, down: 0 }

  constructor(
    readonly sql: postgres.Sql,
    private readonly log?: Logger,
    private readonly clock: Clock = Date.now,
    private readonly restMs = REPLICA_REST_MS,
  ) {}

  /** Whether a statement should be offered to the replica now (false while it rests after a connection failure). */
  usable(): boolean {
    if (this.clock() >= this.downUntil) return true
    this.counts.down++
    return false
  }

  served(): void {
    if (this.downUntil !== 0) {
      this.downUntil = 0
      this.log?.info({ msg: 'replica: reads go to the replica again' })
    }
    this.counts.served++
  }

  behind(): void {
    this.counts.behind++
  }

  /**
   * The replica failed a statement (`code`: the SQLSTATE or driver code); `unreachable` (a connection failure or no
   * answer in time) rests it. Other failures (a conflict with recovery, a schema not replayed yet) are logged at most
   * once a minute: the read ran on the primary, but a replica failing every read takes nothing off the primary.
   */
  failed(unreachable: boolean, code: string): void {
    this.counts.failed++
    const now = this.clock()
    if (unreachable) {
      if (this.downUntil === 0) this.log?.warn({ msg: `replica: unreachable; reads go to the primary and the replica is tried again every ${this.restMs} ms`, code })
      this.downUntil = now + this.restMs
    } else if (now - this.lastFailureLog >= 60_000) {
      this.lastFailureLog = now
      this.log?.warn({ msg: 'replica: a read failed there and ran on the primary (logged at most once a minute)', code })
    }
  }

  stats(): ReplicaReadStats {
    return { ...this.counts }
  }
}

/** What `/readyz` reports about the replica. */
export interface ReplicaStatus {
  reachable: boolean
  /** In recovery, i.e. really a standby (false: the URL names a primary; reads still work, nothing is offloaded). */
  standby?: boolean
  /** WAL the replica has not replayed yet: the primary's current position minus the replica's replay position. */
  lagBytes?: number
  /** Replay paused (`pg_wal_replay_pause()`): the lag grows until it is resumed. */
  replayPaused?: boolean
}

/** A WAL position (`16/B374D848`) as a number of bytes. */
function lsnBytes(lsn: string): bigint {
  const [hi, lo] = lsn.split('/')
  return (BigInt(`0x${hi}`) << 32n) + BigInt(`0x${lo}`)
}

/** Asks the replica (and the primary, for the lag) within `ms`; never throws. */
export async function replicaStatus(primary: postgres.Sql, replica: postgres.Sql, ms: number): Promise<ReplicaStatus> {
  const within = <T>(q: PromiseLike<T>) => raceDeadline(q, { ms, expired: () => new Error('no answer in time') })
  try {
    const [r] = await within(replica<{ standby: boolean; replay: string | null; pause: string | null }[]>`
      SELECT pg_is_in_recovery() AS standby, pg_last_wal_replay_lsn()::text AS replay,
        CASE WHEN pg_is_in_recovery() THEN pg_get_wal_replay_pause_state() END AS pause`)
    // The primary's position is read after the replica's: the lag shown is never smaller than the real one.
    const p = await within(primary<{ lsn: string }[]>`SELECT pg_current_wal_lsn()::text AS lsn`).catch(() => undefined)
    if (!r.standby) return { reachable: true, standby: false }
    const status: ReplicaStatus = { reachable: true, standby: true, replayPaused: r.pause !== 'not paused' }
    if (p?.[0] && r.replay) {
      const lag = lsnBytes(p[0].lsn) - lsnBytes(r.replay)
      status.lagBytes = lag > 0n ? Number(lag) : 0
    }
    return status
  } catch {
    return { reachable: false }
  }
}
