/**
 * API keys (docs/contract.md §5 REST item 1): `Authorization: Basic base64(keyId:secret)`. Secrets are 32 random
 * bytes, stored only as HMAC-SHA-256(pepper, secret) and compared in constant time. A verified key is cached
 * per process for `authCacheMs` (revocation takes effect within that time, docs/adr/0009-api-keys-and-pepper.md);
 * `lastUsedAt` is recorded in memory and flushed in batches, never a write per request.
 *
 * A header already verified is recognised while its key's cached entry is the one it was verified against, so a
 * repeated request skips decoding and the HMAC (about a tenth of a cached read's CPU here) and stops working exactly
 * when the key's cache entry does: revoked, changed, or expired. Process-wide it is recognised by its SHA-256 (the
 * header itself, which holds the secret, is not kept there); on the keep-alive connection that verified it, by a
 * constant-time comparison with that connection's own earlier header, kept with the connection and gone with it.
 */
import { createHmac, hash, randomBytes, timingSafeEqual } from 'node:crypto'
import type postgres from 'postgres'
import { unauthorized } from '../../core/errors.ts'
import { withDeadline } from '../../core/db/deadline.ts'
import type { Principal } from '../../core/principal.ts'
import { shared } from '../../core/single-flight.ts'

export const KEY_ID = /^osk_[a-z2-7]{20}$/
const SECRET = /^[A-Za-z0-9_-]{43}$/
/** What a secret is compared with when there is no key: the length of a real hash, matched by no secret. */
const DUMMY_HASH = Buffer.alloc(32)

export function hashSecret(pepper: string, secret: string): Buffer {
  return createHmac('sha256', pepper).update(secret).digest()
}

const B32 = 'abcdefghijklmnopqrstuvwxyz234567'
export function newKeyId(): string {
  const bytes = randomBytes(20)
  let s = 'osk_'
  for (const b of bytes) s += B32[b & 31]
  return s
}

export function newSecret(): string {
  return randomBytes(32).toString('base64url')
}

/** The 401 constructor lives in runtime/core/errors.ts; re-exported here for existing importers. */

/**
 * What the database said of a key id, remembered for `authCacheMs`. An id it does not know gets a record of the same
 * shape (`known: false`, the dummy hash), remembered the same way: every attempt takes one path, whatever the id.
 */
interface KeyRecord {
  known: boolean
  hash: Buffer
  accountId: string
  userId: string | null
  revoked: boolean
  enhancedMcp: boolean
  at: number
  /** A failed attempt was decided against this record after reading it from the database. */
  failed: boolean
}

/**
 * The record a secret is compared with when there is none: for a malformed key id (never looked up), and for an id not
 * cached yet, before its lookup (as a cached record is compared before a failed attempt's lookup).
 */
const NO_KEY: KeyRecord = { known: false, hash: DUMMY_HASH, accountId: '', userId: null, revoked: false, enhancedMcp: false, at: 0, failed: true }

/** Most key ids remembered, found or not; beyond it the oldest are forgotten first. */
const MAX_CACHED = 50_000

/**
 * A Basic header verified by this process: the key entry it was verified against, and the caller it names (one object
 * shared by every request the header authenticates: a principal is never modified).
 */
interface VerifiedHeader {
  keyId: string
  entry: KeyRecord
  principal: Principal
}

/** Most verified headers remembered (by digest); beyond it the oldest are forgotten first. */
const MAX_VERIFIED = 10_000

/**
 * The header a connection had verified, as bytes: a connection that sends it again is recognised by a constant-time
 * comparison with its own earlier header, without the digest below (a keep-alive client repeats its header).
 */
interface ConnectionHeader {
  header: Buffer
  v: VerifiedHeader
}

/** What a verified header is remembered by: its SHA-256, so the map never holds a secret. */
const headerDigest = (header: string): string => hash('sha256', header, 'base64url')

export interface Credentials {
  keyId: string
  secret: string
}

/**
 * Parses a Basic header; null when the header is absent. Throws 401 for anything malformed; `howTo` ends the detail of
 * another scheme (the ways in the caller offers).
 */
export function parseBasic(header: string | undefined, howTo = 'use HTTP Basic with an API key id and secret'): Credentials | null {
  if (header === undefined || header === '') return null
  if (header.length > 1024) throw unauthorized('Malformed Authorization header.')
  const sp = header.indexOf(' ')
  if (sp < 0 || header.slice(0, sp).toLowerCase() !== 'basic') throw unauthorized(`Unsupported authorization scheme; ${howTo}.`)
  const b64 = header.slice(sp + 1).trim()
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) throw unauthorized('Malformed Basic credentials.')
  const text = Buffer.from(b64, 'base64').toString('utf8')
  const colon = text.indexOf(':')
  if (colon < 0) throw unauthorized('Malformed Basic credentials.')
  return { keyId: text.slice(0, colon), secret: text.slice(colon + 1) }
}

/**
 * The admission of a database lookup for one request (runtime/platform/auth/authenticate.ts): `take` before the lookup starts
 * (false: not made), `giveBack` when it proved a valid key or the database failed. A no-op when nothing was taken.
 */
export interface LookupAdmission {
  take(): boolean
  giveBack(): void
}

/** A key lookup the caller's failed-authentication allowance did not admit (the answer is the bare 429). */
export class LookupNotAdmitted extends Error {
  constructor() {
    super('The lookup was not admitted.')
  }
}

export class ApiKeyAuthenticator {
  private cache = new Map<string, KeyRecord>()
  private verified = new Map<string, VerifiedHeader>()
  private byConnection = new WeakMap<object, ConnectionHeader>()
  private inFlight = new Map<string, Promise<KeyRecord>>()
  private lastUsed = new Map<string, number>()
  private flushTimer: NodeJS.Timeout
  private readonly maxCached: number
  /** Database lookups made (tests and diagnostics). */
  lookups = 0
  /** Secrets hashed (tests and diagnostics). */
  hashes = 0
  /** Hashes compared with a key's (tests and diagnostics). */
  comparisons = 0
  /** Requests authenticated by a header verified before (tests and diagnostics). */
  verifiedHits = 0

  constructor(
    private sql: postgres.Sql,
    private pepper: string,
    private cacheMs: number,
    private clock: () => number,
    opts: { maxCached?: number } = {},
  ) {
    this.maxCached = opts.maxCached ?? MAX_CACHED
    this.flushTimer = setInterval(() => void this.flush().catch(() => undefined), 30_000)
    this.flushTimer.unref()
  }

  /** Key ids remembered now, found or not (tests and diagnostics). */
  get cachedIds(): number {
    return this.cache.size
  }

  /**
   * Verifies credentials. An unknown key id and a wrong secret for a known one cost the same work: the secret is always
   * hashed and compared in constant time with a record's hash (a dummy record's when the database knows no such id),
   * and an unknown id is looked up and remembered exactly as a known one is. The first failed attempt with an id costs
   * one lookup per cache time even when the id's key is cached already (its owner uses it), as an unknown id's first
   * attempt does; a repeated one costs none, either way. So neither the answer nor its time tells which ids exist.
   */
  async authenticate(creds: Credentials, opts: { admission?: LookupAdmission; header?: string; connection?: object } = {}): Promise<Principal> {
    const { keyId, secret } = creds
    const wellFormed = KEY_ID.test(keyId) && SECRET.test(secret)
    this.hashes++
    const candidate = hashSecret(this.pepper, secret)
    const cached = wellFormed ? this.fresh(keyId) : NO_KEY
    let entry = cached ?? NO_KEY
    let ok = this.matches(candidate, entry)
    // The database, for an id not cached, and for a failed attempt against a cached record no failed attempt has read.
    if (cached === undefined || (!ok && !cached.failed)) {
      entry = await this.lookup(keyId, opts.admission)
      ok = this.matches(candidate, entry)
      if (!ok) entry.failed = true
    }
    if (!ok) throw unauthorized('Invalid API key credentials.')
    if (entry.revoked) throw unauthorized('This API key has been revoked.')
    // A lookup that proved a valid key was no failed authentication.
    opts.admission?.giveBack()
    if (entry === cached) this.refreshAhead(keyId, this.clock() - entry.at)
    this.lastUsed.set(keyId, this.clock())
    const principal: Principal = { accountId: entry.accountId, userId: entry.userId, method: 'api_key', credentialId: keyId, quotaExempt: false, enhancedMcpSecurity: entry.enhancedMcp }
    // Only a header verified against a cached entry is remembered: it lives exactly as long as that entry.
    if (opts.header !== undefined && this.cache.get(keyId) === entry) {
      if (this.verified.size >= MAX_VERIFIED) this.verified.delete(this.verified.keys().next().value!)
      const v: VerifiedHeader = { keyId, entry, principal }
      this.verified.set(headerDigest(opts.header), v)
      this.rememberOn(opts.connection, opts.header, v)
    }
    return principal
  }

  /**
   * The caller named by an Authorization header this process verified, while the key's cached entry is still the one
   * it was verified against and fresh; undefined otherwise (then the header takes the full path: decoded, hashed,
   * compared). Only successes are remembered, so a wrong secret or an unknown id always takes the full path.
   * `connection` (the request's socket): a header the same connection had verified is recognised by comparing the
   * two in constant time, before any digest; it is only ever compared with what that connection itself sent.
   */
  verifiedHeader(header: string, connection?: object): Principal | undefined {
    const now = this.clock()
    if (connection !== undefined) {
      const c = this.byConnection.get(connection)
      if (c !== undefined) {
        const presented = Buffer.from(header, 'latin1')
        if (presented.length === c.header.length && timingSafeEqual(presented, c.header)) {
          if (this.current(c.v, now)) return this.recognised(c.v, now)
          this.byConnection.delete(connection)
        }
      }
    }
    if (this.verified.size === 0) return undefined
    const digest = headerDigest(header)
    const v = this.verified.get(digest)
    if (v === undefined) return undefined
    if (!this.current(v, now)) {
      this.verified.delete(digest)
      return undefined
    }
    this.rememberOn(connection, header, v)
    return this.recognised(v, now)
  }

  /** Whether the key entry a header was verified against is still the cached one, and fresh. */
  private current(v: VerifiedHeader, now: number): boolean {
    return this.cache.get(v.keyId) === v.entry && now - v.entry.at < this.cacheMs
  }

  private recognised(v: VerifiedHeader, now: number): Principal {
    this.verifiedHits++
    this.refreshAhead(v.keyId, now - v.entry.at)
    this.lastUsed.set(v.keyId, now)
    return v.principal
  }

  /** Keeps a verified header with the connection that sent it (as bytes, for the constant-time comparison). */
  private rememberOn(connection: object | undefined, header: string, v: VerifiedHeader): void {
    if (connection !== undefined) this.byConnection.set(connection, { header: Buffer.from(header, 'latin1'), v })
  }

  /** The record the cache holds for the id while it is fresh. */
  private fresh(keyId: string): KeyRecord | undefined {
    const hit = this.cache.get(keyId)
    return hit !== undefined && this.clock() - hit.at < this.cacheMs ? hit : undefined
  }

  /** Whether `candidate` is the record's hash (compared in constant time, also for a record of no key) and the key exists. */
  private matches(candidate: Buffer, record: KeyRecord): boolean {
    this.comparisons++
    return timingSafeEqual(candidate, record.hash) && record.known
  }

  /** Forgets what this process remembers of a key id (after it was created or revoked here). */
  forget(keyId: string): void {
    this.cache.delete(keyId)
  }

  /** Forgets the keys of an account (after its settings changed here). */
  forgetAccount(accountId: string): void {
    for (const [id, k] of this.cache) if (k.known && k.accountId === accountId) this.cache.delete(id)
  }

  /**
   * The id's record from the database (once for concurrent requests of the same id). The lookup is first admitted by
   * `admission` (it takes a token of the caller's failed-authentication allowance; refused: `LookupNotAdmitted`); a
   * request joining a lookup under way takes none.
   */
  private async lookup(keyId: string, admission: LookupAdmission | undefined): Promise<KeyRecord> {
    const joining = this.inFlight.has(keyId)
    if (!joining && admission && !admission.take()) throw new LookupNotAdmitted()
    const p = shared(this.inFlight, keyId, () => this.fetch(keyId))
    // The database did not answer: no authentication failed.
    if (!joining) p.catch(() => admission?.giveBack())
    return p
  }

  /**
   * A valid key's record past half its lifetime is read again in the background: a busy key's requests never wait for
   * its lookup (on the embedded database one may wait for a running data read), and the bound on a revocation made
   * elsewhere stays `cacheMs`. A failure is nobody's: the record serves out its lifetime.
   */
  private refreshAhead(keyId: string, age: number): void {
    if (2 * age >= this.cacheMs && !this.inFlight.has(keyId)) shared(this.inFlight, keyId, () => this.fetch(keyId)).catch(() => undefined)
  }

  private async fetch(keyId: string): Promise<KeyRecord> {
    const now = this.clock()
    this.lookups++
    const rows = await withDeadline(this.sql<{ secret_hash: Buffer; account_id: string; user_id: string | null; revoked: boolean; ems: boolean }[]>`
      SELECT k.secret_hash, k.account_id::text AS account_id, k.user_id::text AS user_id, k.revoked_at IS NOT NULL AS revoked,
        a.enhanced_mcp_security AS ems
      FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.key_id = ${keyId}`)
    const r = rows[0]
    const read: KeyRecord = r
      ? { known: true, hash: Buffer.from(r.secret_hash), accountId: r.account_id, userId: r.user_id, revoked: r.revoked, enhancedMcp: r.ems, at: now, failed: false }
      : { known: false, hash: DUMMY_HASH, accountId: '', userId: null, revoked: false, enhancedMcp: false, at: now, failed: false }
    // Read again for a failed attempt while cached, and unchanged: the same record stays, so the headers its owner
    // verified against it stay recognised.
    const prev = this.fresh(keyId)
    if (prev !== undefined && sameKey(prev, read)) {
      prev.at = now
      return prev
    }
    if (this.cacheMs > 0) {
      this.cache.delete(keyId)
      if (this.cache.size >= this.maxCached) this.cache.delete(this.cache.keys().next().value!)
      this.cache.set(keyId, read)
    }
    return read
  }

  /** Writes the recorded last-use times (called periodically and on shutdown). */
  async flush(): Promise<void> {
    if (this.lastUsed.size === 0) return
    const batch = [...this.lastUsed]
    this.lastUsed.clear()
    const ids = batch.map(([k]) => k)
    const times = batch.map(([, t]) => new Date(t).toISOString())
    await this.sql`
      UPDATE api_keys k SET last_used_at = greatest(coalesce(k.last_used_at, u.t), u.t)
      FROM (SELECT unnest(${ids}::text[]) AS id, unnest(${times}::timestamptz[]) AS t) u
      WHERE k.key_id = u.id`
  }

  async close(): Promise<void> {
    clearInterval(this.flushTimer)
    await this.flush().catch(() => undefined)
  }
}

/** Whether two records say the same of a key (its hash, owner, revocation and settings). */
function sameKey(a: KeyRecord, b: KeyRecord): boolean {
  return a.known === b.known && a.hash.equals(b.hash) && a.accountId === b.accountId && a.userId === b.userId && a.revoked === b.revoked && a.enhancedMcp === b.enhancedMcp
}
