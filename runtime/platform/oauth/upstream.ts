/**
 * Sign-in delegated to an upstream OpenID Connect provider (configured by issuer, client id and secret): discovery,
 * the authorization-code flow with PKCE and a nonce, the token call, and ID-token verification against the
 * provider's published keys. Outbound calls use undici with a timeout; ID tokens are verified with jose (issuer,
 * audience = our client id, expiry, nonce). Only a verified e-mail identifies a user.
 */
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet, type JWTPayload } from 'jose'
import type { Clock } from '../../core/config-types.ts'

/**
 * undici's `request`, loaded on the first outbound call: a service without an upstream provider never needs it, and
 * it is about 6 MB of heap (docs/adr/0020-compiled-ascii-bundle.md: packages a served process loads).
 */
const request: typeof import('undici').request = async (...args) => (await import('undici')).request(...args)

interface Discovery {
  issuer: string
  authorization_endpoint: string
  token_endpoint: string
  jwks_uri: string
  userinfo_endpoint?: string
}

export interface UpstreamIdentity {
  email: string
  name?: string
  subject: string
}

export class UpstreamError extends Error {}

const TIMEOUT = { headersTimeout: 10_000, bodyTimeout: 10_000 }

async function getJson(url: string): Promise<unknown> {
  const r = await request(url, { method: 'GET', headers: { accept: 'application/json' }, ...TIMEOUT })
  if (r.statusCode !== 200) {
    await r.body.dump()
    throw new UpstreamError(`${url} answered ${r.statusCode}`)
  }
  return r.body.json()
}

export class Upstream {
  private discovery?: { doc: Discovery; at: number }
  private jwks?: { set: ReturnType<typeof createLocalJWKSet>; at: number }

  constructor(
    readonly cfg: { issuer: string; clientId: string; clientSecret: string; name: string },
    private readonly clock: Clock,
  ) {}

  private async meta(): Promise<Discovery> {
    if (this.discovery && this.clock() - this.discovery.at < 3_600_000) return this.discovery.doc
    const doc = (await getJson(`${this.cfg.issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`)) as Discovery
    if (doc.issuer !== this.cfg.issuer || typeof doc.authorization_endpoint !== 'string' || typeof doc.token_endpoint !== 'string' || typeof doc.jwks_uri !== 'string') {
      throw new UpstreamError('The provider\'s discovery document does not match its configured issuer.')
    }
    this.discovery = { doc, at: this.clock() }
    return doc
  }

  private async keySet(refresh: boolean): Promise<ReturnType<typeof createLocalJWKSet>> {
    if (!refresh && this.jwks && this.clock() - this.jwks.at < 3_600_000) return this.jwks.set
    const set = createLocalJWKSet((await getJson((await this.meta()).jwks_uri)) as JSONWebKeySet)
    this.jwks = { set, at: this.clock() }
    return set
  }

  async authorizationUrl(p: { state: string; nonce: string; challenge: string; redirectUri: string }): Promise<string> {
    const u = new URL((await this.meta()).authorization_endpoint)
    for (const [k, v] of Object.entries({
      response_type: 'code',
      client_id: this.cfg.clientId,
      redirect_uri: p.redirectUri,
      scope: 'openid email profile',
      state: p.state,
      nonce: p.nonce,
      code_challenge: p.challenge,
      code_challenge_method: 'S256',
    })) u.searchParams.set(k, v)
    return u.toString()
  }

  /** Verifies an ID token of the provider issued to our client (and, when given, with this nonce). */
  async verifyIdToken(idToken: string, nonce?: string): Promise<UpstreamIdentity> {
    return identityOf(await this.idTokenClaims(idToken, nonce))
  }

  private async idTokenClaims(idToken: string, nonce?: string): Promise<JWTPayload> {
    const check = async (refresh: boolean) =>
      jwtVerify(idToken, await this.keySet(refresh), { issuer: this.cfg.issuer, audience: this.cfg.clientId, currentDate: new Date(this.clock()), requiredClaims: ['sub', 'exp', 'iat'] })
    let payload: JWTPayload
    try {
      payload = (await check(false)).payload
    } catch (e) {
      if ((e as { code?: string }).code !== 'ERR_JWKS_NO_MATCHING_KEY') throw new UpstreamError('The identity provider\'s ID token did not verify.')
      payload = (await check(true).catch(() => {
        throw new UpstreamError('The identity provider\'s ID token did not verify.')
      })).payload
    }
    if (nonce !== undefined && payload.nonce !== nonce) throw new UpstreamError('The ID token is not for this sign-in (nonce).')
    return payload
  }

  /** The user's claims from the userinfo endpoint (providers that keep the e-mail out of the ID token). */
  private async userinfo(accessToken: string, subject: string): Promise<JWTPayload> {
    const endpoint = (await this.meta()).userinfo_endpoint
    if (!endpoint) throw new UpstreamError('The identity provider gave no e-mail address.')
    const r = await request(endpoint, { method: 'GET', headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' }, ...TIMEOUT })
    const body = (await r.body.json().catch(() => ({}))) as JWTPayload
    if (r.statusCode !== 200 || body.sub !== subject) throw new UpstreamError('The identity provider\'s userinfo does not match the ID token.')
    return body
  }

  /** Exchanges the provider's code for its ID token and verifies it. */
  async exchange(p: { code: string; verifier: string; redirectUri: string; nonce: string }): Promise<UpstreamIdentity> {
    const meta = await this.meta()
    const basic = Buffer.from(`${encodeURIComponent(this.cfg.clientId)}:${encodeURIComponent(this.cfg.clientSecret)}`).toString('base64')
    const r = await request(meta.token_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', authorization: `Basic ${basic}` },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: p.code, redirect_uri: p.redirectUri, code_verifier: p.verifier }).toString(),
      ...TIMEOUT,
    })
    const body = (await r.body.json().catch(() => ({}))) as { id_token?: unknown; access_token?: unknown; error?: unknown }
    if (r.statusCode !== 200 || typeof body.id_token !== 'string') throw new UpstreamError(`The identity provider refused the sign-in (${String(body.error ?? r.statusCode).slice(0, 60)}).`)
    const claims = await this.idTokenClaims(body.id_token, p.nonce)
    if (typeof claims.email === 'string' || typeof body.access_token !== 'string') return identityOf(claims)
    return identityOf({ ...(await this.userinfo(body.access_token, claims.sub!)), sub: claims.sub })
  }
}

/** Only a verified e-mail identifies a user. */
function identityOf(c: JWTPayload): UpstreamIdentity {
  if (typeof c.email !== 'string' || c.email_verified !== true) throw new UpstreamError('The identity provider did not vouch for an e-mail address (email_verified).')
  return { email: c.email, name: typeof c.name === 'string' ? c.name : undefined, subject: c.sub! }
}
