/**
 * The short-lived state of sign-ins, stored hashed: authorization requests (a sign-in the service started, bound to
 * the browser that started it), single-use authorization codes, and refresh tokens rotated on every use.
 *
 * - A request lives `REQUEST_TTL_MS`; a code `CODE_TTL_MS` and one use: presenting it again revokes everything
 *   issued from it (its family).
 * - A refresh token is replaced by a new one at every use; presenting a replaced token again revokes the family
 *   (the token leaked, or a client is replaying it), and with it every access token of the family.
 */
import { randomUUID } from 'node:crypto'
import type postgres from 'postgres'
import { randomToken, sha256 } from './crypto.ts'

export const REQUEST_TTL_MS = 10 * 60_000
export const CODE_TTL_MS = 60_000

export interface AuthRequest {
  idHash: Buffer
  browserHash: Buffer
  clientId: string
  redirectUri: string
  state: string | null
  scopes: string[]
  resource: string
  codeChallenge: string
  userId: string | null
  upstreamNonce: string | null
  upstreamVerifier: string | null
  expiresAt: number
}

type RequestRow = {
  id_hash: Buffer
  browser_hash: Buffer
  client_id: string
  redirect_uri: string
  state: string | null
  scopes: string[]
  resource: string
  code_challenge: string
  user_id: string | null
  upstream_nonce: string | null
  upstream_verifier: string | null
  expires_at: Date
}

const toRequest = (r: RequestRow): AuthRequest => ({
  idHash: Buffer.from(r.id_hash),
  browserHash: Buffer.from(r.browser_hash),
  clientId: r.client_id,
  redirectUri: r.redirect_uri,
  state: r.state,
  scopes: r.scopes,
  resource: r.resource,
  codeChallenge: r.code_challenge,
  userId: r.user_id,
  upstreamNonce: r.upstream_nonce,
  upstreamVerifier: r.upstream_verifier,
  expiresAt: r.expires_at.getTime(),
})

const REQUEST_COLUMNS = `id_hash, browser_hash, client_id, redirect_uri, state, scopes, resource, code_challenge, user_id::text AS user_id,
  upstream_nonce, upstream_verifier, expires_at`

export class Grants {
  constructor(
    private readonly sql: postgres.Sql,
    private readonly refreshTtlMs: number,
  ) {}

  /** Starts a sign-in; returns its id (for the pages) — the browser binding is the caller's cookie. */
  async createRequest(r: { browser: string; clientId: string; redirectUri: string; state: string | null; scopes: string[]; resource: string; codeChallenge: string; now: number }): Promise<string> {
    const id = randomToken()
    await this.sql`INSERT INTO oauth_requests (id_hash, browser_hash, client_id, redirect_uri, state, scopes, resource, code_challenge, created_at, expires_at)
      VALUES (${sha256(id)}, ${sha256(r.browser)}, ${r.clientId}, ${r.redirectUri}, ${r.state}, ${r.scopes}, ${r.resource}, ${r.codeChallenge},
        ${new Date(r.now)}, ${new Date(r.now + REQUEST_TTL_MS)})`
    return id
  }

  /** The live request `id` started by the browser holding `browser`, or undefined (unknown, expired, another browser). */
  async request(id: string, browser: string | undefined, now: number): Promise<AuthRequest | undefined> {
    if (!/^[A-Za-z0-9_-]{43}$/.test(id) || !browser) return undefined
    const [r] = await this.sql.unsafe<RequestRow[]>(`SELECT ${REQUEST_COLUMNS} FROM oauth_requests WHERE id_hash = $1`, [sha256(id)])
    if (!r || r.expires_at.getTime() <= now || !sha256(browser).equals(Buffer.from(r.browser_hash))) return undefined
    return toRequest(r)
  }

  async setUser(idHash: Buffer, userId: string): Promise<void> {
    await this.sql`UPDATE oauth_requests SET user_id = ${userId}::bigint WHERE id_hash = ${idHash}`
  }

  /** Records the upstream round trip of a request; returns the upstream `state`. */
  async startUpstream(idHash: Buffer, nonce: string, verifier: string): Promise<string> {
    const state = randomToken()
    await this.sql`UPDATE oauth_requests SET upstream_state_hash = ${sha256(state)}, upstream_nonce = ${nonce}, upstream_verifier = ${verifier} WHERE id_hash = ${idHash}`
    return state
  }

  /** The request an upstream callback belongs to, consumed by its own browser (a replayed callback finds nothing; another browser consumes nothing). */
  async takeUpstream(state: string, browser: string | undefined, now: number): Promise<AuthRequest | undefined> {
    if (!/^[A-Za-z0-9_-]{43}$/.test(state) || !browser) return undefined
    const [r] = await this.sql.unsafe<RequestRow[]>(
      `UPDATE oauth_requests SET upstream_state_hash = NULL WHERE upstream_state_hash = $1 AND browser_hash = $2 RETURNING ${REQUEST_COLUMNS}`,
      [sha256(state), sha256(browser)],
    )
    if (!r || r.expires_at.getTime() <= now) return undefined
    return toRequest(r)
  }

  /** Ends a request (after its code was issued, or it was denied). */
  async endRequest(idHash: Buffer): Promise<void> {
    await this.sql`DELETE FROM oauth_requests WHERE id_hash = ${idHash}`
  }

  async hasConsent(userId: string, clientId: string, scopes: readonly string[]): Promise<boolean> {
    const [r] = await this.sql`SELECT scopes FROM oauth_consents WHERE user_id = ${userId}::bigint AND client_id = ${clientId}`
    return !!r && scopes.every((s) => (r.scopes as string[]).includes(s))
  }

  async recordConsent(userId: string, clientId: string, scopes: readonly string[], now: number): Promise<void> {
    await this.sql`INSERT INTO oauth_consents (user_id, client_id, scopes, granted_at) VALUES (${userId}::bigint, ${clientId}, ${scopes as string[]}, ${new Date(now)})
      ON CONFLICT (user_id, client_id) DO UPDATE SET scopes = EXCLUDED.scopes, granted_at = EXCLUDED.granted_at`
  }

  /** Issues the code of a completed sign-in and ends the request. */
  async issueCode(req: AuthRequest, userId: string, now: number): Promise<string> {
    const code = randomToken()
    await this.sql.begin(async (tx) => {
      await tx`INSERT INTO oauth_codes (code_hash, client_id, user_id, redirect_uri, scopes, resource, code_challenge, family, expires_at)
        VALUES (${sha256(code)}, ${req.clientId}, ${userId}::bigint, ${req.redirectUri}, ${req.scopes}, ${req.resource}, ${req.codeChallenge},
          ${randomUUID()}, ${new Date(now + CODE_TTL_MS)})`
      await tx`DELETE FROM oauth_requests WHERE id_hash = ${req.idHash}`
    })
    return code
  }

  /**
   * Takes a code for its one use. `reused`: it was used before (its family is now revoked); undefined: unknown.
   */
  async takeCode(code: string, now: number): Promise<
    | { ok: true; clientId: string; userId: string; redirectUri: string; scopes: string[]; resource: string; codeChallenge: string; family: string; expired: boolean }
    | { ok: false; reused: false }
    | { ok: false; reused: true; family: string }
  > {
    if (!/^[A-Za-z0-9_-]{43}$/.test(code)) return { ok: false, reused: false }
    const h = sha256(code)
    const [r] = await this.sql`UPDATE oauth_codes SET used_at = ${new Date(now)} WHERE code_hash = ${h} AND used_at IS NULL
      RETURNING client_id, user_id::text AS user_id, redirect_uri, scopes, resource, code_challenge, family::text AS family, expires_at`
    if (r) {
      return { ok: true, clientId: r.client_id, userId: r.user_id, redirectUri: r.redirect_uri, scopes: r.scopes, resource: r.resource, codeChallenge: r.code_challenge, family: r.family, expired: (r.expires_at as Date).getTime() <= now }
    }
    const [used] = await this.sql`SELECT family::text AS family FROM oauth_codes WHERE code_hash = ${h}`
    if (!used) return { ok: false, reused: false }
    await this.revokeFamily(used.family as string, now)
    return { ok: false, reused: true, family: used.family as string }
  }

  async issueRefresh(f: { family: string; clientId: string; userId: string; scopes: readonly string[]; resource: string; now: number }): Promise<string> {
    const token = randomToken()
    await this.sql`INSERT INTO oauth_refresh_tokens (token_hash, family, client_id, user_id, scopes, resource, created_at, expires_at)
      VALUES (${sha256(token)}, ${f.family}::uuid, ${f.clientId}, ${f.userId}::bigint, ${f.scopes as string[]}, ${f.resource}, ${new Date(f.now)}, ${new Date(f.now + this.refreshTtlMs)})`
    return token
  }

  /**
   * Takes a refresh token for rotation. A token already rotated revokes its family (`reused`); an expired or revoked
   * one, or an unknown one, is refused.
   */
  async takeRefresh(token: string, now: number): Promise<
    | { ok: true; family: string; clientId: string; userId: string; scopes: string[]; resource: string }
    | { ok: false; reused: false }
    | { ok: false; reused: true; family: string }
  > {
    if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return { ok: false, reused: false }
    const h = sha256(token)
    const [r] = await this.sql`UPDATE oauth_refresh_tokens SET rotated_at = ${new Date(now)}
      WHERE token_hash = ${h} AND rotated_at IS NULL AND revoked_at IS NULL AND expires_at > ${new Date(now)}
      RETURNING family::text AS family, client_id, user_id::text AS user_id, scopes, resource`
    if (r) return { ok: true, family: r.family, clientId: r.client_id, userId: r.user_id, scopes: r.scopes, resource: r.resource }
    const [old] = await this.sql`SELECT family::text AS family, rotated_at FROM oauth_refresh_tokens WHERE token_hash = ${h}`
    if (old?.rotated_at) {
      await this.revokeFamily(old.family as string, now)
      return { ok: false, reused: true, family: old.family as string }
    }
    return { ok: false, reused: false }
  }

  /** A refresh token that can still be taken, read without taking it; undefined otherwise. */
  async peekRefresh(token: string, now: number): Promise<{ clientId: string; userId: string; scopes: string[]; resource: string } | undefined> {
    if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return undefined
    const [r] = await this.sql`SELECT client_id, user_id::text AS user_id, scopes, resource FROM oauth_refresh_tokens
      WHERE token_hash = ${sha256(token)} AND rotated_at IS NULL AND revoked_at IS NULL AND expires_at > ${new Date(now)}`
    return r ? { clientId: r.client_id, userId: r.user_id, scopes: r.scopes, resource: r.resource } : undefined
  }

  /** The family and client of a refresh token (revocation). */
  async refreshFamily(token: string): Promise<{ family: string; clientId: string } | undefined> {
    if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return undefined
    const [r] = await this.sql`SELECT family::text AS family, client_id FROM oauth_refresh_tokens WHERE token_hash = ${sha256(token)}`
    return r ? { family: r.family, clientId: r.client_id } : undefined
  }

  /** Revokes every refresh token of a family, and (listed until they expire) its access tokens. */
  async revokeFamily(family: string, now: number): Promise<void> {
    await this.sql.begin(async (tx) => {
      await tx`UPDATE oauth_refresh_tokens SET revoked_at = coalesce(revoked_at, ${new Date(now)}) WHERE family = ${family}::uuid`
      await tx`INSERT INTO oauth_revoked_families (family, revoked_at, expires_at) VALUES (${family}::uuid, ${new Date(now)}, ${new Date(now + this.refreshTtlMs)})
        ON CONFLICT (family) DO NOTHING`
    })
  }

  async revokeAccessToken(jti: string, expiresAt: number): Promise<void> {
    await this.sql`INSERT INTO oauth_revoked_tokens (jti, expires_at) VALUES (${jti}, ${new Date(expiresAt)}) ON CONFLICT (jti) DO NOTHING`
  }

  /** Deletes what has expired. */
  async prune(now: number): Promise<void> {
    const at = new Date(now)
    await this.sql`DELETE FROM oauth_requests WHERE expires_at < ${at}`
    await this.sql`DELETE FROM oauth_codes WHERE expires_at < ${new Date(now - 86_400_000)}`
    await this.sql`DELETE FROM oauth_refresh_tokens WHERE expires_at < ${at}`
    await this.sql`DELETE FROM oauth_revoked_tokens WHERE expires_at < ${at}`
    await this.sql`DELETE FROM oauth_revoked_families WHERE expires_at < ${at}`
  }
}
