/** What the authorization server's handlers share. */
import { createHmac } from 'node:crypto'
import type postgres from 'postgres'
import type { Clock, OAuthConfig } from '../../core/config-types.ts'
import type { Logger } from '../../core/log.ts'
import type { BurstGuard } from '../quota/burst-guard.ts'
import type { AccessTokens } from './access-tokens.ts'
import type { Grants } from './grants.ts'
import type { SigningKeys } from './signing-keys.ts'
import type { Upstream } from './upstream.ts'
import { SCOPES } from './clients.ts'

/** The service's public addresses, known once its listeners are up. */
export interface OAuthUrls {
  /** Issuer and base of the authorization server's endpoints (no trailing slash). */
  issuer: string
  /** Resource identifiers (token audiences) of the two surfaces. */
  restResource: string
  mcpResource: string
}

export interface OAuthContext {
  sql: postgres.Sql
  pepper: string
  clock: Clock
  log: Logger
  config: OAuthConfig
  urls: () => OAuthUrls
  keys: SigningKeys
  tokens: AccessTokens
  grants: Grants
  upstream?: Upstream
  /** Failed password sign-ins per client address. */
  signInFailures: BurstGuard
  /** Called after something a running process caches changed (a revocation). */
  /** What this process remembers of checked access tokens of a revoked sign-in (family) or token (jti) is forgotten. */
  onRevoke: (what: { family: string } | { jti: string }) => void
}

export const BROWSER_COOKIE = 'orgscan_browser'

/** The CSRF token of a page of sign-in `requestId` in the browser holding `browser`. */
export function csrfToken(pepper: string, requestId: string, browser: string): string {
  return createHmac('sha256', pepper).update(`csrf\0${requestId}\0${browser}`).digest('base64url')
}

/** The scopes of a request: the asked ones (space-separated) or, without any, all the client has. */
export function requestedScopes(raw: string | undefined, clientScopes: readonly string[]): { scopes: string[] } | { invalid: string } {
  if (raw === undefined || raw.trim() === '') return { scopes: [...clientScopes] }
  const asked = [...new Set(raw.split(' ').filter((s) => s !== ''))]
  for (const s of asked) {
    if (!(SCOPES as readonly string[]).includes(s)) return { invalid: `Unknown scope ${s.slice(0, 40)}; scopes: ${SCOPES.join(' ')}.` }
    if (!clientScopes.includes(s)) return { invalid: `${s} cannot be granted here (${clientScopes.length ? `the scopes that can: ${clientScopes.join(' ')}` : 'no scope can'}).` }
  }
  return { scopes: asked }
}

/** The resource a token is for: one of the two surfaces (default: the REST API). */
export function resolveResource(raw: string | undefined, urls: OAuthUrls): string | undefined {
  if (raw === undefined || raw === '') return urls.restResource
  const r = raw.replace(/\/+$/, '')
  return r === urls.mcpResource || r === urls.restResource ? r : undefined
}
