/**
 * MCP sessions of 2025-era clients, kept in the database (migration 004) so that they do not pin a client to a
 * process: any `orgscan serve` process behind a load balancer serves any session, a DELETE on one ends it on all,
 * and a restart ends nobody's session. Each HTTP request is still authenticated on its own; the session only ties
 * the requests of one client together, and belongs to the account (and user) that opened it.
 *
 * - `Mcp-Session-Id` is 32 random bytes (Base64URL); only its SHA-256 is stored.
 * - A session idle for `idleMs` has expired: it answers 404 like an unknown one, and is pruned.
 * - `lastSeen` is written at most every `touchMs` per session, not on every request.
 * - A credential (an API key, or one user's sign-in through one OAuth client) may hold at most `maxPerCredential` live
 *   sessions: opening one more ends its least recently used idle one (which then answers 404, and its client
 *   initializes again), so a client that never sends DELETE recycles its own sessions instead of filling the
 *   account's allowance. When all of them may be in use, the opening is refused instead (`CREDENTIAL_BUSY`).
 * - An account may hold at most `maxPerAccount` live sessions; opening one more fails (`create` returns undefined).
 *   Both bounds hold under concurrency: openings of an account queue in the process, then take a lock of the
 *   account in the database for their transaction.
 * - A session the database confirmed live is trusted by this process for `confirmMs` (the key cache's bound,
 *   `ORGSCAN_AUTH_CACHE_MS`, 5 s; never longer than `touchMs`) without asking again: a tool call then costs no round
 *   trip. A DELETE ends the session at once on every process: the deleting one forgets it, and the others when the
 *   deletion's notice arrives (PostgreSQL's LISTEN; within `confirmMs` if the notice is lost). At most
 *   `MAX_CONFIRMED` sessions are remembered (the oldest confirmations are forgotten first), so opening many sessions
 *   costs memory only up to that bound.
 * - The log level a session asked for (`logging/setLevel`, runtime/surfaces/mcp/logging.ts) is kept with it, so every process
 *   logs alike; the session check reads it with the session, at no extra cost. A change is announced to the other
 *   processes, which then ask the database again at the session's next request.
 * - So is what its client declared it answers at `initialize` (sampling, elicitation: runtime/surfaces/mcp/client-requests.ts),
 *   which never changes.
 * Times come from the injected clock, so expiry is testable.
 */
import { hash as digest, randomBytes } from 'node:crypto'
import type postgres from 'postgres'
import type { LoggingLevel } from '@modelcontextprotocol/server'
import type { Principal } from '../../core/principal.ts'
import type { Clock } from '../../core/config-types.ts'
import type { Logger } from '../../core/log.ts'
import type { ClientAbilities } from './client-requests.ts'
import { CACHE_CHANNEL } from '../../core/cache/org-state.ts'
import { errorCode } from '../../core/db/errors.ts'
import { ApiError } from '../../core/errors.ts'

/** Payload prefix of an ended session's notice on the hot-reads channel, followed by the Base64 SHA-256 of its id. */
export const SESSION_NOTICE = 'session:'
/** Payload prefix of the notice of a session whose log level changed, followed by the Base64 SHA-256 of its id. */
export const SESSION_LEVEL_NOTICE = 'session-level:'

export interface SessionOptions {
  idleMs: number
  maxPerAccount: number
  /** Live sessions of one credential (default: `maxPerAccount`); the oldest goes when a new one would exceed it. */
  maxPerCredential?: number
  /** How often a session's lastSeen is written at most (default idleMs / 20, at most a minute). */
  touchMs?: number
  /** How often expired sessions are deleted (default a minute; 0: never, tests prune by hand). */
  pruneEveryMs?: number
  /** How long a confirmed session is trusted without asking the database (default 0: always asked). */
  confirmMs?: number
}

/** Sessions whose confirmation a process remembers at most. */
export const MAX_CONFIRMED = 10_000

/** A live session, as its check found it. */
export interface LiveSession {
  /** The level it asked for with `logging/setLevel`; undefined when it never did (then it gets no log messages). */
  readonly logLevel?: LoggingLevel
  /** What its client declared it answers; undefined: nothing (a tool call never asks it). */
  readonly abilities?: ClientAbilities
}

interface Confirmed extends LiveSession {
  accountId: string
  userId: string | null
  at: number
  logLevel?: LoggingLevel
}

/** The check's answer for a session that set no level and may be asked nothing: shared, so a check allocates nothing for it. */
const PLAIN: LiveSession = Object.freeze({})

export interface SessionInfo {
  protocolVersion: string
  clientName?: string
  clientVersion?: string
  abilities?: ClientAbilities
}

/** A session's `client_capabilities` as stored: what it may be asked, or null for nothing. */
const storedAbilities = (a: ClientAbilities | undefined) => (a?.sampling || a?.elicitation ? { ...(a.sampling ? { sampling: true } : {}), ...(a.elicitation ? { elicitation: true } : {}) } : null)
const readAbilities = (v: unknown): ClientAbilities | undefined => {
  if (typeof v !== 'object' || v === null) return undefined
  const o = v as Record<string, unknown>
  const a: ClientAbilities = {}
  if (o.sampling === true) a.sampling = true
  if (o.elicitation === true) a.elicitation = true
  return a.sampling || a.elicitation ? a : undefined
}

const SESSION_ID = /^[A-Za-z0-9_-]{43}$/

/** The id's SHA-256 as base64: the key of a remembered confirmation (one-shot `hash`: a quarter of `createHash`'s cost, paid on every call). */
const hashKey = (id: string) => digest('sha256', id, 'base64')
/** The key of a session in this process (its id's SHA-256, as the notices name it): who may answer its tool calls' requests. */
export const sessionKey = hashKey
/** The id's SHA-256, as stored in `mcp_sessions.id_hash`. */
const hash = (id: string) => Buffer.from(hashKey(id), 'base64')
const iso = (ms: number) => new Date(ms).toISOString()

/** What `create` answers when the credential holds its bound of sessions and all of them may be in use. */
export const CREDENTIAL_BUSY = Symbol('credential busy')

class Busy extends Error {}

/** PostgreSQL: lock_timeout passed. */
const LOCK_NOT_AVAILABLE = '55P03'

/** The longest an opening waits for its turn and the account's lock, from its arrival. */
const OPENING_WAIT_MS = 5000
/** Openings of one account that may wait in a process at once. */
const MAX_QUEUED = 100

const busyAccount = () => new ApiError('service_unavailable', 'The account\'s MCP sessions are busy being opened; retry shortly.', { retryAfterSeconds: 1 })

export class McpSessions {
  /** The openings of each account under way in this process: the last one's outcome, and how many wait for their turn. */
  private readonly opening = new Map<string, { tail: Promise<unknown>; waiting: number }>()
  private readonly touchMs: number
  private readonly confirmMs: number
  /** Keyed by the session id's hash; in the order of confirmation (a Map keeps insertion order). */
  private readonly confirmed = new Map<string, Confirmed>()
  /**
   * Sessions ended while this process was asking the database about them: a check that began before the DELETE must
   * not remember the session afterwards. Bounded like `confirmed` (oldest first out).
   */
  private readonly ended = new Set<string>()
  private readonly timer: NodeJS.Timeout | undefined

  constructor(
    private readonly sql: postgres.Sql,
    private readonly o: SessionOptions,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {
    this.touchMs = o.touchMs ?? Math.min(60_000, Math.floor(o.idleMs / 20))
    this.confirmMs = Math.min(o.confirmMs ?? 0, this.touchMs)
    const every = o.pruneEveryMs ?? 60_000
    if (every > 0) {
      this.timer = setInterval(() => void this.prune().catch((err: unknown) => this.log.warn({ msg: 'mcp: pruning sessions failed', err })), every)
      this.timer.unref()
    }
  }

  /**
   * Opens a session for the principal: its id; undefined when the account already holds its maximum of live sessions;
   * `CREDENTIAL_BUSY` when the credential holds its own maximum and none of them is idle.
   *
   * At its own bound a credential's least recently used idle session is ended. A session's `lastSeen` is written at
   * most every `touchMs`, so one seen within two of those may still be in use: it is never chosen (`busyWithinMs`).
   */
  async create(p: Principal, info: SessionInfo): Promise<string | undefined | typeof CREDENTIAL_BUSY> {
    // Openings of one account queue here, in this process, before they hold a connection: only the first waits for
    // the account's database lock (taken by other processes' openings), so a flood of openings from one account parks
    // one connection of the shared pool, not all of them. Each waits OPENING_WAIT_MS at most from its arrival, queue
    // and lock together, and the queue is bounded: past either, 503 (the client retries).
    const queue = this.opening.get(p.accountId)
    if (queue && queue.waiting >= MAX_QUEUED) throw busyAccount()
    const arrived = performance.now()
    const before = queue?.tail ?? Promise.resolve()
    const entry = queue ?? { tail: before, waiting: 0 }
    entry.waiting++
    const mine = before.then(() => {
      entry.waiting--
      const left = OPENING_WAIT_MS - (performance.now() - arrived)
      if (left < 50) throw busyAccount()
      return this.open(p, info, Math.floor(left))
    })
    const tail = mine.then(() => undefined, () => undefined)
    entry.tail = tail
    this.opening.set(p.accountId, entry)
    void tail.then(() => {
      if (entry.tail === tail && entry.waiting === 0) this.opening.delete(p.accountId)
    })
    return mine
  }

  private async open(p: Principal, info: SessionInfo, waitMs: number): Promise<string | undefined | typeof CREDENTIAL_BUSY> {
    const id = randomBytes(32).toString('base64url')
    const now = this.clock()
    const live = iso(now - this.o.idleMs)
    const idle = iso(now - 2 * this.touchMs)
    const perCredential = Math.min(this.o.maxPerCredential ?? this.o.maxPerAccount, this.o.maxPerAccount)
    const outcome = await this.sql.begin(async (tx) => {
      // One opening at a time per account, across processes: the counts below stay true until the insert commits. A
      // lock held longer than this (a stalled process) fails the opening (503) rather than park the connection.
      await tx`SELECT set_config('lock_timeout', ${`${waitMs}ms`}, true)`
      await tx`SELECT pg_advisory_xact_lock(hashtextextended(${`mcp_sessions:${p.accountId}`}, 0))`
      const [c] = await tx<{ account: number; mine: number }[]>`
        SELECT count(*)::int AS account,
          count(*) FILTER (WHERE credential_id = ${p.credentialId} AND user_id IS NOT DISTINCT FROM ${p.userId}::bigint)::int AS mine
        FROM mcp_sessions WHERE account_id = ${p.accountId}::bigint AND last_seen_at > ${live}::timestamptz`
      const excess = Math.max(0, c.mine - perCredential + 1)
      // Nothing is ended for an opening that is refused anyway (an account over its bound, say after it was lowered).
      if (c.account - excess >= this.o.maxPerAccount) return 'account-full' as const
      if (excess > 0) {
        // The credential's own least recently used idle sessions make room; other processes forget them at the notice.
        const ended = await tx<{ key: string }[]>`
          WITH d AS (
            DELETE FROM mcp_sessions WHERE id_hash IN (
              SELECT id_hash FROM mcp_sessions
              WHERE account_id = ${p.accountId}::bigint AND credential_id = ${p.credentialId} AND user_id IS NOT DISTINCT FROM ${p.userId}::bigint
                AND last_seen_at > ${live}::timestamptz AND last_seen_at < ${idle}::timestamptz
              ORDER BY last_seen_at, created_at LIMIT ${excess})
            RETURNING id_hash
          )
          SELECT encode(id_hash, 'base64') AS key, pg_notify(${CACHE_CHANNEL}, ${SESSION_NOTICE} || encode(id_hash, 'base64')) FROM d`
        if (ended.length < excess) throw new Busy()
        for (const e of ended) this.markEnded(e.key)
      }
      await tx`
        INSERT INTO mcp_sessions (id_hash, account_id, user_id, credential_id, protocol_version, client_name, client_version, created_at, last_seen_at, client_capabilities)
        VALUES (${hash(id)}, ${p.accountId}::bigint, ${p.userId}::bigint, ${p.credentialId}, ${info.protocolVersion},
          ${info.clientName?.slice(0, 200) ?? null}, ${info.clientVersion?.slice(0, 100) ?? null}, ${iso(now)}::timestamptz, ${iso(now)}::timestamptz,
          ${storedAbilities(info.abilities) as never}::jsonb)`
      return 'opened' as const
    }).catch((e: unknown) => {
      // Thrown to roll the deletions back: none of the credential's sessions is idle.
      if (e instanceof Busy) return 'busy' as const
      if (errorCode(e) === LOCK_NOT_AVAILABLE) throw busyAccount()
      throw e
    })
    if (outcome === 'busy') return CREDENTIAL_BUSY
    return outcome === 'opened' ? id : undefined
  }

  /** How recently a session may have been used when its `lastSeen` says it was not: it is never ended to make room. */
  get busyWithinMs(): number {
    return 2 * this.touchMs
  }

  /** The live session `id` of the principal's account and user, or undefined; keeps it alive. */
  async check(p: Principal, id: string): Promise<LiveSession | undefined> {
    if (!SESSION_ID.test(id)) return undefined
    const now = this.clock()
    const key = hashKey(id)
    const c = this.confirmed.get(key)
    if (c && now - c.at < this.confirmMs && c.accountId === p.accountId && c.userId === p.userId) return c
    const h = Buffer.from(key, 'base64')
    const rows = await this.sql<{ log_level: LoggingLevel | null; client_capabilities: unknown }[]>`
      WITH s AS (
        SELECT id_hash, last_seen_at, log_level, client_capabilities FROM mcp_sessions
        WHERE id_hash = ${h} AND account_id = ${p.accountId}::bigint AND user_id IS NOT DISTINCT FROM ${p.userId}::bigint
          AND last_seen_at > ${iso(now - this.o.idleMs)}::timestamptz
      ), touched AS (
        UPDATE mcp_sessions m SET last_seen_at = ${iso(now)}::timestamptz FROM s
        WHERE m.id_hash = s.id_hash AND s.last_seen_at < ${iso(now - this.touchMs)}::timestamptz
      )
      SELECT log_level, client_capabilities FROM s`
    this.confirmed.delete(key)
    if (rows.length !== 1) return undefined
    const logLevel = rows[0].log_level ?? undefined
    const abilities = readAbilities(rows[0].client_capabilities)
    if (this.confirmMs > 0 && !this.ended.has(key)) {
      if (this.confirmed.size >= MAX_CONFIRMED) this.confirmed.delete(this.confirmed.keys().next().value!)
      const entry: Confirmed = { accountId: p.accountId, userId: p.userId, at: now, logLevel, abilities }
      this.confirmed.set(key, entry)
      return entry
    }
    return logLevel === undefined && abilities === undefined ? PLAIN : { logLevel, abilities }
  }

  /**
   * Keeps `level` as the log level of the principal's live session `id`; false when there is no such session. This
   * process uses it from the next request on, the others once the change's notice arrives (within `confirmMs` if it
   * is lost).
   */
  async setLogLevel(p: Principal, id: string, level: LoggingLevel): Promise<boolean> {
    if (!SESSION_ID.test(id)) return false
    const key = hashKey(id)
    const rows = await this.sql`
      WITH u AS (
        UPDATE mcp_sessions SET log_level = ${level}
        WHERE id_hash = ${Buffer.from(key, 'base64')} AND account_id = ${p.accountId}::bigint
          AND user_id IS NOT DISTINCT FROM ${p.userId}::bigint AND last_seen_at > ${iso(this.clock() - this.o.idleMs)}::timestamptz
        RETURNING 1
      )
      SELECT pg_notify(${CACHE_CHANNEL}, ${SESSION_LEVEL_NOTICE + key}) FROM u`
    if (rows.length !== 1) return false
    const c = this.confirmed.get(key)
    if (c) c.logLevel = level
    return true
  }

  /** Forgets the confirmation of a session whose log level changed in another process (its notice). */
  levelChanged(key: string): void {
    this.confirmed.delete(key)
  }

  /** Ends the principal's session `id`; false when there was no such live session. */
  async end(p: Principal, id: string): Promise<boolean> {
    if (!SESSION_ID.test(id)) return false
    const key = hashKey(id)
    const h = Buffer.from(key, 'base64')
    this.markEnded(key)
    // The other processes forget their confirmation when the deletion commits (the hot-reads channel, as for a revoked key).
    const rows = await this.sql`
      WITH d AS (
        DELETE FROM mcp_sessions WHERE id_hash = ${h} AND account_id = ${p.accountId}::bigint
          AND user_id IS NOT DISTINCT FROM ${p.userId}::bigint AND last_seen_at > ${iso(this.clock() - this.o.idleMs)}::timestamptz
        RETURNING 1
      )
      SELECT pg_notify(${CACHE_CHANNEL}, ${SESSION_NOTICE + key}) FROM d`
    return rows.length === 1
  }

  /** Forgets the confirmation of one session (the hash, as in a `session:` notice), or of all when a notice may have been lost. */
  forget(key?: string): void {
    if (key === undefined) this.confirmed.clear()
    else this.markEnded(key)
  }

  private markEnded(key: string): void {
    this.confirmed.delete(key)
    if (this.confirmMs === 0) return
    if (this.ended.size >= MAX_CONFIRMED) this.ended.delete(this.ended.values().next().value!)
    this.ended.add(key)
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
