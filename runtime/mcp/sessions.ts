/**
 * MCP sessions of 2025-era clients, kept in the database (migration 004) so that they do not pin a client to a
 * process: any `orgscan serve` process behind a load balancer serves any session, a DELETE on one ends it on all,
 * and a restart ends nobody's session. Each HTTP request is still authenticated on its own; the session only ties
 * the requests of one client together, and belongs to the account (and user) that opened it.
 *
 * - `Mcp-Session-Id` is 32 random bytes (Base64URL); only its SHA-256 is stored.
 * - A session idle for `idleMs` has expired: it answers 404 like an unknown one, and is pruned.
 * - `lastSeen` is written at most every `touchMs` per session, not on every request.
 * - An account may hold at most `maxPerAccount` live sessions; opening one more fails (`create` returns undefined).
 * Times come from the injected clock, so expiry is testable.
 */
import { createHash, randomBytes } from 'node:crypto'
import type postgres from 'postgres'
import type { Principal } from '../auth/principal.ts'
import type { Clock } from '../config.ts'
import type { Logger } from '../log.ts'

export interface SessionOptions {
  idleMs: number
  maxPerAccount: number
  /** How often a session's lastSeen is written at most (default idleMs / 20, at most a minute). */
  touchMs?: number
  /** How often expired sessions are deleted (default a minute; 0: never, tests prune by hand). */
  pruneEveryMs?: number
}

export interface SessionInfo {
  protocolVersion: string
  clientName?: string
  clientVersion?: string
}

const SESSION_ID = /^[A-Za-z0-9_-]{43}$/

const hash = (id: string) => createHash('sha256').update(id).digest()
const iso = (ms: number) => new Date(ms).toISOString()

export class McpSessions {
  private readonly touchMs: number
  private readonly timer: NodeJS.Timeout | undefined

  constructor(
    private readonly sql: postgres.Sql,
    private readonly o: SessionOptions,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {
    this.touchMs = o.touchMs ?? Math.min(60_000, Math.floor(o.idleMs / 20))
    const every = o.pruneEveryMs ?? 60_000
    if (every > 0) {
      this.timer = setInterval(() => void this.prune().catch((err: unknown) => this.log.warn({ msg: 'mcp: pruning sessions failed', err })), every)
      this.timer.unref()
    }
  }

  /** Opens a session for the principal; undefined when the account already holds its maximum of live sessions. */
  async create(p: Principal, info: SessionInfo): Promise<string | undefined> {
    const id = randomBytes(32).toString('base64url')
    const now = this.clock()
    const rows = await this.sql`
      INSERT INTO mcp_sessions (id_hash, account_id, user_id, credential_id, protocol_version, client_name, client_version, created_at, last_seen_at)
      SELECT ${hash(id)}, ${p.accountId}::bigint, ${p.userId}::bigint, ${p.credentialId}, ${info.protocolVersion},
        ${info.clientName?.slice(0, 200) ?? null}, ${info.clientVersion?.slice(0, 100) ?? null}, ${iso(now)}::timestamptz, ${iso(now)}::timestamptz
      WHERE (SELECT count(*) FROM mcp_sessions WHERE account_id = ${p.accountId}::bigint AND last_seen_at > ${iso(now - this.o.idleMs)}::timestamptz) < ${this.o.maxPerAccount}
      RETURNING 1`
    return rows.length === 1 ? id : undefined
  }

  /** Whether `id` is a live session of the principal's account and user; keeps it alive. */
  async check(p: Principal, id: string): Promise<boolean> {
    if (!SESSION_ID.test(id)) return false
    const now = this.clock()
    const rows = await this.sql<{ live: boolean }[]>`
      WITH s AS (
        SELECT id_hash, last_seen_at FROM mcp_sessions
        WHERE id_hash = ${hash(id)} AND account_id = ${p.accountId}::bigint AND user_id IS NOT DISTINCT FROM ${p.userId}::bigint
          AND last_seen_at > ${iso(now - this.o.idleMs)}::timestamptz
      ), touched AS (
        UPDATE mcp_sessions m SET last_seen_at = ${iso(now)}::timestamptz FROM s
        WHERE m.id_hash = s.id_hash AND s.last_seen_at < ${iso(now - this.touchMs)}::timestamptz
      )
      SELECT true AS live FROM s`
    return rows.length === 1
  }

  /** Ends the principal's session `id`; false when there was no such live session. */
  async end(p: Principal, id: string): Promise<boolean> {
    if (!SESSION_ID.test(id)) return false
    const rows = await this.sql`
      DELETE FROM mcp_sessions WHERE id_hash = ${hash(id)} AND account_id = ${p.accountId}::bigint
        AND user_id IS NOT DISTINCT FROM ${p.userId}::bigint AND last_seen_at > ${iso(this.clock() - this.o.idleMs)}::timestamptz
      RETURNING 1`
    return rows.length === 1
  }

  /** Deletes expired sessions; returns how many. */
  async prune(): Promise<number> {
    const rows = await this.sql`DELETE FROM mcp_sessions WHERE last_seen_at <= ${iso(this.clock() - this.o.idleMs)}::timestamptz RETURNING 1`
    return rows.length
  }

  close(): void {
    if (this.timer) clearInterval(this.timer)
  }
}
