/**
 * Authentication of a request, for every surface (the pipeline's `authenticate`): the Authorization header's
 * credentials, checked by the API-key authenticator, behind a limit on failed authentications per client address.
 *
 * After `burst` failed authentications from one address (IPv6 by /64), refilled at `ratePerSecond`, further requests
 * from it are answered with a bare 429 (no body, no rate-limit headers, `Retry-After`) before any database work. A key
 * this process already verified (and still caches) keeps working from a throttled address; anything that would need
 * the database does not. Successful authentications take no token.
 */
import { ApiError, isApiError, unauthorized } from '../errors.ts'
import type { BurstGuard } from '../quota/burst-guard.ts'
import { parseBasic, type ApiKeyAuthenticator } from './api-keys.ts'
import type { Principal } from './principal.ts'

export interface AuthenticateDeps {
  keys: ApiKeyAuthenticator
  /** Failed authentications per client address; undefined: no limit. */
  failures?: BurstGuard
}

function throttled(seconds: number): ApiError {
  return new ApiError('authentication_throttled', 'Too many failed authentications from this address.', { bare: true, retryAfterSeconds: seconds })
}

export function createAuthenticate(d: AuthenticateDeps): (authorization: string | undefined, clientAddress: string | undefined) => Promise<Principal> {
  return async (authorization, address) => {
    const wait = d.failures?.waitSeconds(address) ?? 0
    try {
      const creds = parseBasic(authorization)
      if (!creds) throw unauthorized('Authentication required: send HTTP Basic credentials (API key id and secret).')
      return await d.keys.authenticate(creds, { cachedOnly: wait > 0 })
    } catch (e) {
      if (isApiError(e) && e.code === 'unauthorized') {
        if (wait > 0) throw throttled(wait)
        d.failures?.allow(address)
      }
      throw e
    }
  }
}
