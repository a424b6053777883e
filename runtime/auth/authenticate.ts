/**
 * Authentication of a request, for every surface (the pipeline's `authenticate`): the Authorization header's
 * credentials — HTTP Basic with an API key, or `Bearer` with an OAuth access token issued for that surface (its
 * audience: the REST API or the MCP endpoint) — behind a limit on failed authentications per client address.
 *
 * After `burst` failed authentications from one address (IPv6 by /64), refilled at `ratePerSecond`, further requests
 * from it are answered with a bare 429 (no body, no rate-limit headers, `Retry-After`) before any database work. A key
 * this process already verified (and still caches) keeps working from a throttled address; anything that would need
 * the database does not. Successful authentications take no token.
 */
import type { IncomingMessage } from 'node:http'
import { ApiError, isApiError, unauthorized } from '../errors.ts'
import type { BurstGuard } from '../quota/burst-guard.ts'
import { parseBasic, type ApiKeyAuthenticator } from './api-keys.ts'
import type { Principal } from './principal.ts'
import type { Surface } from '../plan.ts'

/** Verifies an OAuth access token presented to a surface (runtime/oauth/access-tokens.ts). */
export interface BearerVerifier {
  authenticate(token: string, surface: Surface): Promise<Principal>
}

export interface AuthenticateDeps {
  keys: ApiKeyAuthenticator
  /** OAuth access tokens; undefined: Bearer is refused like any unknown scheme. */
  bearer?: BearerVerifier
  /** Failed authentications per client address; undefined: no limit. */
  failures?: BurstGuard
}

function throttled(seconds: number): ApiError {
  return new ApiError('authentication_throttled', 'Too many failed authentications from this address.', { bare: true, retryAfterSeconds: seconds })
}

const BEARER = /^Bearer +([A-Za-z0-9._~+/-]+=*) *$/i

/**
 * The connection a request came on (its socket): failed authentications are counted by its address, and a header it
 * had verified is recognised when it sends it again.
 */
export interface Client {
  readonly remoteAddress?: string
}

/** What `authorizationOf` gives for a request with more than one Authorization header. */
export const SEVERAL_AUTHORIZATIONS = '(several Authorization headers)'

/**
 * The Authorization header of a request. Node keeps the first of several and drops the others; a proxy in front may
 * keep the last, and the two would disagree on who is calling. So a request with several is refused as malformed
 * (401), on every surface.
 */
export function authorizationOf(req: IncomingMessage): string | undefined {
  const raw = req.rawHeaders
  let n = 0
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].length === 13 && raw[i].toLowerCase() === 'authorization' && ++n > 1) return SEVERAL_AUTHORIZATIONS
  }
  return req.headers.authorization
}

export function createAuthenticate(d: AuthenticateDeps): (authorization: string | undefined, client: Client, surface: Surface) => Promise<Principal> {
  return async (authorization, client, surface) => {
    const address = client.remoteAddress
    const wait = d.failures?.waitSeconds(address) ?? 0
    try {
      if (authorization === SEVERAL_AUTHORIZATIONS) throw unauthorized('Send one Authorization header, not several.')
      if (d.bearer && authorization !== undefined && /^bearer /i.test(authorization)) {
        const m = BEARER.exec(authorization)
        if (!m) throw unauthorized('Malformed Bearer token.')
        if (wait > 0) throw unauthorized('Too many failed authentications.')
        return await d.bearer.authenticate(m[1], surface)
      }
      // A header this process verified while its key is cached (runtime/auth/api-keys.ts).
      const known = authorization !== undefined ? d.keys.verifiedHeader(authorization, client) : undefined
      if (known) return known
      const creds = parseBasic(authorization)
      if (!creds) throw unauthorized('Authentication required: send HTTP Basic credentials (API key id and secret).')
      return await d.keys.authenticate(creds, { cachedOnly: wait > 0, header: authorization, connection: client })
    } catch (e) {
      if (isApiError(e) && e.code === 'unauthorized') {
        if (wait > 0) throw throttled(wait)
        d.failures?.allow(address)
      }
      throw e
    }
  }
}
