/**
 * Authentication of a request, for every surface (the pipeline's `authenticate`): the Authorization header's
 * credentials — HTTP Basic with an API key, or `Bearer` with an OAuth access token issued for that surface (its
 * audience: the REST API or the MCP endpoint) — behind a limit on failed authentications per client address.
 *
 * After `burst` failed authentications from one address (IPv6 by /64), refilled at `ratePerSecond`, further requests
 * from it are answered with a bare 429 (no body, no rate-limit headers, `Retry-After`) before any database work. The
 * limit holds under concurrency: an API-key lookup takes its token before it starts and gives it back when it succeeds.
 * A key this process already verified (and still caches) keeps working from a throttled address, and so does a valid
 * OAuth access token (its signature is checked without the database); an API key that would need the database does
 * not. Successful authentications take no token.
 */
import { SEVERAL_AUTHORIZATIONS } from '../../core/http/authorization.ts'
import { ApiError, isApiError, unauthorized } from '../../core/errors.ts'
import type { BurstGuard } from '../quota/burst-guard.ts'
import { LookupNotAdmitted, parseBasic, type ApiKeyAuthenticator, type LookupAdmission } from './api-keys.ts'
import type { Principal } from '../../core/principal.ts'
import type { Client } from '../../core/pipeline.ts'
import type { Surface } from '../../core/plan.ts'

/** Verifies an OAuth access token presented to a surface (runtime/platform/oauth/access-tokens.ts). */
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
  return new ApiError('authentication_throttled', 'Too many failed authentications from this address.', { bare: true, retryAfterSeconds: Math.max(1, seconds) })
}

const BEARER = /^Bearer +([A-Za-z0-9._~+/-]+=*) *$/i

/** How to authenticate, as a 401 without usable credentials says it: every way in the service offers. */
const WITH_BEARER = 'send an API key as HTTP Basic credentials (key id and secret), or an OAuth access token as Bearer'
const BASIC_ONLY = 'send HTTP Basic credentials (API key id and secret)'

/** One request's admission to a key lookup: at most one token of its address, given back at most once. */
class Admission implements LookupAdmission {
  took = false
  constructor(
    private readonly guard: BurstGuard,
    private readonly address: string | undefined,
  ) {}

  take(): boolean {
    this.took = this.guard.allow(this.address)
    return this.took
  }

  giveBack(): void {
    if (!this.took) return
    this.took = false
    this.guard.giveBack(this.address)
  }
}

export function createAuthenticate(d: AuthenticateDeps): (authorization: string | undefined, client: Client, surface: Surface) => Promise<Principal> {
  /**
   * Counts a refusal that cost no database lookup of its own, after the fact (nothing is awaited between the check
   * and the count, so concurrency cannot overrun it): a 401, or the bare 429 once the address is out of tokens.
   */
  const refused = (address: string | undefined, e: unknown): unknown => {
    if (!d.failures || !isApiError(e) || e.code !== 'unauthorized') return e
    return d.failures.allow(address) ? e : throttled(d.failures.waitSeconds(address))
  }
  const howTo = d.bearer ? WITH_BEARER : BASIC_ONLY
  return async (authorization, client, surface) => {
    const address = client.remoteAddress
    // An API-key lookup takes a token before it starts and gives it back when it proves a valid key: N requests
    // arriving at once start at most as many lookups as the address has tokens (checking first and counting after let
    // all N reach the database). Requests joining a lookup under way take none.
    let admission: Admission | undefined
    try {
      if (authorization === SEVERAL_AUTHORIZATIONS) throw unauthorized('Send one Authorization header, not several.')
      if (d.bearer && authorization !== undefined && /^bearer /i.test(authorization)) {
        const m = BEARER.exec(authorization)
        if (!m) throw unauthorized('Malformed Bearer token.')
        // Checked whatever the address's failures: the signature is verified without the database, and only a token
        // the service signed reaches it (once per cache time, refusals included: runtime/platform/oauth/access-tokens.ts). So a
        // flood of bad credentials from a shared address cannot lock out a valid token, and costs the database nothing.
        return await d.bearer.authenticate(m[1], surface)
      }
      // A header this process verified while its key is cached (runtime/platform/auth/api-keys.ts).
      const known = authorization !== undefined ? d.keys.verifiedHeader(authorization, client) : undefined
      if (known) return known
      const creds = parseBasic(authorization, howTo)
      if (!creds) throw unauthorized(`Authentication required: ${howTo}.`)
      if (d.failures) admission = new Admission(d.failures, address)
      return await d.keys.authenticate(creds, { admission, header: authorization, connection: client })
    } catch (e) {
      if (e instanceof LookupNotAdmitted) throw throttled(d.failures!.waitSeconds(address))
      // A failed lookup kept the token it took: counted already.
      if (admission?.took) throw e
      throw refused(address, e)
    }
  }
}
