/**
 * The authorization server, assembled: its routes (on the MCP listener), the Bearer verifier the surfaces use, and
 * periodic pruning of expired state. Endpoints (all under the issuer, the service's public URL):
 *
 *   GET  /.well-known/oauth-authorization-server           RFC 8414 metadata
 *   GET  /.well-known/oauth-protected-resource/v1/mcp      RFC 9728 metadata of the MCP endpoint
 *   GET  /.well-known/oauth-protected-resource/v1          … of the REST API
 *   GET  /oauth/jwks                                       the keys that sign access tokens
 *   POST /oauth/register                                   automatic registration of public clients
 *   GET  /oauth/authorize                                  starts a sign-in (PKCE S256 required)
 *   GET  /oauth/sign-in, POST /oauth/sign-in               the sign-in page
 *   POST /oauth/consent                                    the consent page's answer
 *   GET  /oauth/upstream, GET /oauth/callback              the upstream OpenID Connect round trip
 *   POST /oauth/token, POST /oauth/revoke                  tokens; RFC 7009 revocation
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import FindMyWay, { type HTTPVersion } from 'find-my-way'
import type postgres from 'postgres'
import type { Clock, OAuthConfig } from '../../core/config-types.ts'
import { toApiError } from '../../core/errors.ts'
import type { Routes } from '../../core/http/routes.ts'
import type { Logger } from '../../core/log.ts'
import type { Surface } from '../../core/plan.ts'
import { BurstGuard } from '../quota/burst-guard.ts'
import { answerOptions, applyCors, METADATA_CORS, OAUTH_CORS } from '../../core/http/cors.ts'
import type { BearerVerifier } from '../auth/authenticate.ts'
import { AccessTokens } from './access-tokens.ts'
import { authorizeHandlers } from './authorize.ts'
import type { OAuthContext, OAuthUrls } from './context.ts'
import { Grants } from './grants.ts'
import { sendFailure } from './http-util.ts'
import { metadataHandlers } from './metadata.ts'
import { SigningKeys } from './signing-keys.ts'
import { tokenHandlers } from './token.ts'
import { Upstream } from './upstream.ts'

export interface OAuthServerDeps {
  sql: postgres.Sql
  pepper: string
  clock: Clock
  log: Logger
  config: OAuthConfig
  /** How long a checked token is trusted before the database is asked again (the API-key cache time). */
  cacheMs: number
}

export interface OAuthServer {
  routes: Routes
  bearer: BearerVerifier
  tokens: AccessTokens
  keys: SigningKeys
  /** The public addresses, set once the listeners are up. */
  setUrls(urls: OAuthUrls): void
  urls(): OAuthUrls
  /** Forget every checked token (an administrative change in this process). */
  forgetAll(): void
  close(): void
}

type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void>

export function createOAuthServer(d: OAuthServerDeps): OAuthServer {
  let urls: OAuthUrls | undefined
  const getUrls = () => {
    if (!urls) throw new Error('OAuth URLs are not set')
    return urls
  }
  const keys = new SigningKeys(d.sql, d.pepper, d.clock, { rotateMs: d.config.signingKeyRotationMs, graceMs: d.config.accessTokenTtlMs + 60_000 })
  const tokens = new AccessTokens(d.sql, keys, d.clock, {
    get issuer() {
      return getUrls().issuer
    },
    ttlMs: d.config.accessTokenTtlMs,
    cacheMs: d.cacheMs,
    agentClients: new Set(d.config.agentClients),
  })
  const grants = new Grants(d.sql, d.config.refreshTokenTtlMs)
  const o: OAuthContext = {
    sql: d.sql,
    pepper: d.pepper,
    clock: d.clock,
    log: d.log,
    config: d.config,
    urls: getUrls,
    keys,
    tokens,
    grants,
    upstream: d.config.upstream ? new Upstream(d.config.upstream, d.clock) : undefined,
    signInFailures: new BurstGuard({ enabled: true, ratePerSecond: 0.2, burst: 20, clock: d.clock }),
    onRevoke: (what) => tokens.forget(what),
  }

  /**
   * Failures no handler answered, classified as on every surface (`toApiError`): 503 with Retry-After when the database
   * is unreachable, else 500; never a stack or SQL text. The cause is logged (identical ones at most every few seconds).
   */
  const guarded = (h: Handler, page: boolean): Handler => async (req, res) => {
    try {
      await h(req, res)
    } catch (e) {
      const err = toApiError(e)
      if (err.status >= 500) d.log.error({ msg: 'oauth: request failed', code: err.code, err: err.cause ?? e })
      if (res.headersSent) return void res.destroy()
      sendFailure(res, err, page)
    }
  }

  const m = metadataHandlers(o)
  const a = authorizeHandlers(o)
  const t = tokenHandlers(o)
  const router = FindMyWay<HTTPVersion.V1>({ ignoreTrailingSlash: true, caseSensitive: true })
  const get = (path: string, h: Handler, page = false) => router.on(['GET', 'HEAD'], path, guarded(h, page))
  // A GET that writes (starts a sign-in, takes an upstream answer) is not also a HEAD: HEAD must change nothing,
  // and its answer could not be the GET's headers without doing the GET's work. HEAD there is 405 (Allow: GET).
  const getOnly = (path: string, h: Handler) => router.on('GET', path, guarded(h, true))
  const post = (path: string, h: Handler, page = false) => router.on('POST', path, guarded(h, page))
  // What a browser-based client posts to: answered with CORS for any origin (runtime/core/http/cors.ts), preflight included.
  const postFromBrowsers = (path: string, h: Handler) => {
    const handler = guarded(h, false)
    router.on('POST', path, (req, res) => {
      applyCors(req, res, '*', OAUTH_CORS)
      return handler(req, res)
    })
    router.on('OPTIONS', path, (req, res) => answerOptions(req, res, '*', OAUTH_CORS))
  }
  // The metadata and keys (answered with `Access-Control-Allow-Origin: *`): a browser client sending a header of its
  // own (MCP clients send MCP-Protocol-Version) asks first with a preflight.
  const metadata = (path: string, h: Handler) => {
    get(path, h)
    router.on('OPTIONS', path, (req, res) => answerOptions(req, res, '*', METADATA_CORS))
  }
  metadata('/.well-known/oauth-authorization-server', m.authorizationServer)
  metadata('/.well-known/oauth-protected-resource/v1/mcp', m.mcpResource)
  metadata('/.well-known/oauth-protected-resource/v1', m.restResource)
  metadata('/oauth/jwks', m.jwks)
  postFromBrowsers('/oauth/register', m.register)
  getOnly('/oauth/authorize', a.authorize)
  get('/oauth/sign-in', a.signInPage, true)
  post('/oauth/sign-in', a.signIn, true)
  post('/oauth/consent', a.consent, true)
  getOnly('/oauth/upstream', a.upstream)
  getOnly('/oauth/callback', a.callback)
  postFromBrowsers('/oauth/token', t.token)
  postFromBrowsers('/oauth/revoke', t.revoke)

  const prune = setInterval(() => void grants.prune(d.clock()).catch(() => undefined), 60_000)
  prune.unref()

  return {
    routes: { router, allow: ['GET', 'HEAD', 'POST', 'OPTIONS'] },
    bearer: {
      authenticate: (token: string, surface: Surface) => tokens.authenticate(token, surface === 'mcp' ? getUrls().mcpResource : getUrls().restResource),
    },
    tokens,
    keys,
    setUrls: (u) => (urls = u),
    urls: getUrls,
    forgetAll: () => tokens.forgetAll(),
    close: () => clearInterval(prune),
  }
}
