/**
 * Access tokens: JWTs (`typ: at+jwt`) signed by the service, bound to one resource (audience), with `jti`, the user
 * (`sub`), the client (`client_id`), the scopes and the sign-in family (`sid`). Verifying one checks, in this order,
 * the signature (a key of the service), the issuer, the audience of the surface it is presented to, the expiry (by
 * the injected clock), and then the database, at most once per `cacheMs` per token: the user still exists and its
 * tokens were not ended by an administrator after this one was issued, the client is not revoked, neither the token
 * nor its family was revoked. A refusal is remembered like an answer (each of those is final). The scopes a token
 * grants are its own scopes limited to the client's current scopes, so narrowing a client applies to the next call of
 * every token it holds.
 */
import { errors as joseErrors, jwtVerify, type JWTPayload } from 'jose'
import { randomUUID } from 'node:crypto'
import type postgres from 'postgres'
import type { Clock } from '../../core/config-types.ts'
import { withDeadline } from '../../core/db/deadline.ts'
import { ApiError, unauthorized } from '../../core/errors.ts'
import type { Principal } from '../../core/principal.ts'
import { ALG, type SigningKeys } from './signing-keys.ts'
import { shared } from '../../core/single-flight.ts'

export const TOKEN_TYPE = 'at+jwt'

export interface AccessTokenClaims extends JWTPayload {
  sub: string
  client_id: string
  scope: string
  sid: string
  jti: string
}

export interface IssueInput {
  userId: string
  clientId: string
  scopes: readonly string[]
  resource: string
  family: string
}

interface Checked {
  /** undefined: the database refused the token (revoked, its user or client gone). */
  principal: Principal | undefined
  /** The token's sign-in (`sid`): revoking it forgets the entry. */
  family: string
  at: number
}

const MAX_CACHED = 50_000

export interface AccessTokenOptions {
  issuer: string
  ttlMs: number
  cacheMs: number
  /** Client ids of the service's own assistant agents: their tokens consume no quota. */
  agentClients: ReadonlySet<string>
}

export class AccessTokens {
  private cache = new Map<string, Checked>()
  /** Database checks under way, by jti: requests carrying the same token meanwhile share one. */
  private pending = new Map<string, Promise<Principal>>()
  /** Bumped by every forgetting. */
  private generation = 0
  /** Database checks made (tests). */
  lookups = 0

  constructor(
    private readonly sql: postgres.Sql,
    private readonly keys: SigningKeys,
    private readonly clock: Clock,
    readonly opts: AccessTokenOptions,
  ) {}

  async issue(i: IssueInput): Promise<{ token: string; expiresIn: number; jti: string }> {
    const ms = this.clock()
    const now = Math.floor(ms / 1000)
    const expiresIn = Math.floor(this.opts.ttlMs / 1000)
    const jti = randomUUID()
    const claims: AccessTokenClaims = {
      iss: this.opts.issuer,
      sub: i.userId,
      aud: i.resource,
      client_id: i.clientId,
      scope: i.scopes.join(' '),
      sid: i.family,
      jti,
      // To the millisecond (a NumericDate may have a fraction, RFC 7519 §2): a token issued in the same second after
      // an administrator ended the user's tokens (`tokens_valid_after`) is then told apart from one issued before.
      iat: ms / 1000,
      exp: now + expiresIn,
    }
    return { token: await this.keys.sign(claims, TOKEN_TYPE), expiresIn, jti }
  }

  /** The claims of a token signed by this service for `audience`, or a 401 (`invalid_token`). */
  async claims(token: string, audience: string): Promise<AccessTokenClaims> {
    if (token.length > 4096) throw invalidToken()
    try {
      return await this.verified(token, audience)
    } catch (e) {
      if (e instanceof ApiError) throw e
      // The signature held (jose checks it before the claims) and only the audience did not: said as such, when the
      // token is otherwise good, so that a client asks for a token of this resource instead of signing in again.
      if (e instanceof joseErrors.JWTClaimValidationFailed && e.claim === 'aud') throw await this.wrongAudience(token, audience)
      if (e instanceof joseErrors.JOSEError) throw invalidToken()
      throw e
    }
  }

  /** Every check of `claims`; `audience` undefined: any audience. */
  private async verified(token: string, audience: string | undefined): Promise<AccessTokenClaims> {
    const { payload } = await jwtVerify(token, async (header) => {
      const key = await this.keys.publicKey(header.kid)
      if (!key) throw new joseErrors.JWKSNoMatchingKey()
      return key
    }, { issuer: this.opts.issuer, audience, algorithms: [ALG], typ: TOKEN_TYPE, currentDate: new Date(this.clock()), requiredClaims: ['sub', 'jti', 'exp', 'iat'] })
    const c = payload as AccessTokenClaims
    if (typeof c.client_id !== 'string' || typeof c.scope !== 'string' || typeof c.sid !== 'string' || !/^[1-9][0-9]{0,17}$/.test(c.sub)) throw invalidToken()
    return c
  }

  /**
   * The 401 of a token this service issued for another resource (the REST API, the MCP endpoint): it names the one
   * the token was issued for and the one expected, both addresses of this service, so it tells nothing of any account.
   * A token that fails another check too (expired, say) gets the usual answer.
   */
  private async wrongAudience(token: string, audience: string): Promise<ApiError> {
    let c: AccessTokenClaims
    try {
      c = await this.verified(token, undefined)
    } catch {
      return invalidToken()
    }
    const issuedFor = typeof c.aud === 'string' ? c.aud : undefined
    if (issuedFor === undefined || !/^[\x20-\x7e]{1,200}$/.test(issuedFor) || /["\\]/.test(issuedFor)) return invalidToken()
    return unauthorized(`This access token was issued for another resource (${issuedFor}); this endpoint accepts tokens issued for ${audience}: ask for one with resource=${audience}.`)
  }

  /** The principal of a bearer token presented to `audience`. */
  async authenticate(token: string, audience: string): Promise<Principal> {
    const c = await this.claims(token, audience)
    const hit = this.cache.get(c.jti)
    if (hit && this.clock() - hit.at < this.opts.cacheMs) {
      if (hit.principal === undefined) throw invalidToken()
      return hit.principal
    }
    return shared(this.pending, c.jti, () => this.checkAndRemember(c))
  }

  private async checkAndRemember(c: AccessTokenClaims): Promise<Principal> {
    // A check that began before a revocation or an administrative change does not remember its (maybe stale) answer.
    const gen = this.generation
    let principal: Principal
    try {
      principal = await this.check(c)
    } catch (e) {
      // A refusal is remembered like an answer: a revoked token presented again and again costs the database one
      // lookup per cache time, however many requests carry it (the failed-authentication limit does not stop it).
      if (e instanceof ApiError && e.code === 'unauthorized' && gen === this.generation) this.remember(c, undefined)
      throw e
    }
    if (gen === this.generation) this.remember(c, principal)
    return principal
  }

  private remember(c: AccessTokenClaims, principal: Principal | undefined): void {
    if (this.opts.cacheMs <= 0) return
    this.cache.delete(c.jti)
    if (this.cache.size >= MAX_CACHED) this.cache.delete(this.cache.keys().next().value!)
    this.cache.set(c.jti, { principal, family: c.sid, at: this.clock() })
  }

  private async check(c: AccessTokenClaims): Promise<Principal> {
    this.lookups++
    const rows = await withDeadline(this.sql<{
      account_id: string
      tokens_valid_after: Date | null
      client_scopes: string[] | null
      client_revoked: boolean | null
      confidential: boolean | null
      issued_for: string | null
      ems: boolean
      revoked: boolean
    }[]>`
      SELECT u.account_id::text AS account_id, u.tokens_valid_after, c.scopes AS client_scopes,
        c.revoked_at IS NOT NULL AS client_revoked, c.secret_hash IS NOT NULL AS confidential, c.account_id::text AS issued_for, a.enhanced_mcp_security AS ems,
        (EXISTS (SELECT 1 FROM oauth_revoked_tokens WHERE jti = ${c.jti})
          OR EXISTS (SELECT 1 FROM oauth_revoked_families WHERE family = ${c.sid}::uuid)) AS revoked
      FROM users u JOIN accounts a ON a.id = u.account_id
      LEFT JOIN oauth_clients c ON c.client_id = ${c.client_id}
      WHERE u.id = ${c.sub}::bigint`)
    const r = rows[0]
    if (!r || r.revoked || r.client_scopes === null || r.client_revoked) throw invalidToken()
    // Issued at or before the end of the user's tokens: refused (a token of the very millisecond counts as before).
    if (r.tokens_valid_after && Math.round((c.iat ?? 0) * 1000) <= r.tokens_valid_after.getTime()) throw invalidToken()
    // A client issued for one account only acts for that account's users.
    if (r.issued_for !== null && r.issued_for !== r.account_id) throw invalidToken()
    const scopes = c.scope.split(' ').filter((s) => s !== '' && r.client_scopes!.includes(s))
    return {
      accountId: r.account_id,
      userId: c.sub,
      method: 'oauth',
      credentialId: c.client_id,
      // Only a confidential client proves it is the agent: a public client's id is no secret, and anyone may sign in
      // through it (docs/authentication.md "Agents").
      quotaExempt: this.opts.agentClients.has(c.client_id) && r.confidential === true,
      scopes,
      enhancedMcpSecurity: r.ems,
      client: { id: c.client_id, issuedFor: r.issued_for },
    }
  }

  /** Forgets every checked token (after an administrative change: scopes, revocations, the account setting). */
  forgetAll(): void {
    this.generation++
    this.cache.clear()
    this.pending.clear()
  }

  /** Forgets the checked tokens of one revoked sign-in, or one revoked token. */
  forget(what: { family: string } | { jti: string }): void {
    this.generation++
    if ('jti' in what) {
      this.cache.delete(what.jti)
      this.pending.delete(what.jti)
      return
    }
    for (const [jti, e] of this.cache) if (e.family === what.family) this.cache.delete(jti)
    // A check under way may have read before the revocation: later requests do not join it.
    this.pending.clear()
  }
}

export function invalidToken(): ApiError {
  return unauthorized('The access token is invalid, expired or revoked.')
}
