/**
 * Cross-origin access (CORS) for the endpoints a browser-based client calls directly: the MCP endpoint and the OAuth
 * endpoints a public client posts to (registration, token, revocation). None of them uses cookies, so no
 * `Access-Control-Allow-Credentials` is ever sent: the browser adds no ambient credential, and the client sends its
 * own `Authorization` header, which a preflight allows.
 *
 * - The MCP endpoint answers an origin its Host/Origin policy accepts (runtime/surfaces/mcp/origin.ts: a configured origin, or a
 *   loopback origin on a loopback host), naming that origin and `Vary: Origin`; any other origin is refused there
 *   (403) before this runs, so a page on another site can neither call it nor read an answer.
 * - The OAuth endpoints (and the metadata and key set, public documents) answer any origin (`*`): what they accept (a PKCE verifier, a refresh token, client
 *   credentials) is proof the caller holds, never something the browser attaches, so an origin list would protect
 *   nothing and would only break browser clients on origins nobody configured.
 *
 * The REST API sends no CORS headers: its callers are servers, scripts and the typed client
 * (docs/adr/0028-cors-per-surface.md).
 */
import type { IncomingMessage, ServerResponse } from 'node:http'

export interface CorsPolicy {
  /** The methods a preflight allows. */
  methods: string
  /** The request headers a preflight allows (besides the CORS-safelisted ones). */
  allowHeaders: string
  /** The response headers a script may read. */
  exposeHeaders: string
}

/** How long a browser may reuse a preflight's answer, in seconds. */
const MAX_AGE = '600'

/**
 * Sets the CORS headers of an answer to `origin` (`*`: any) on `res`, so that every way the handler then writes
 * its answer carries them (`writeHead` merges them in). A preflight (`OPTIONS` with `Access-Control-Request-Method`)
 * is answered here: 204, and true is returned; the handler then has nothing to do.
 */
export function applyCors(req: IncomingMessage, res: ServerResponse, origin: string, p: CorsPolicy): boolean {
  if (req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined) {
    allowOrigin(res, origin)
    res.writeHead(204, {
      'Access-Control-Allow-Methods': p.methods,
      'Access-Control-Allow-Headers': p.allowHeaders,
      'Access-Control-Max-Age': MAX_AGE,
      'Content-Length': '0',
    })
    res.end()
    return true
  }
  exposeTo(res, origin, p)
  return false
}

function allowOrigin(res: ServerResponse, origin: string): void {
  res.setHeader('Access-Control-Allow-Origin', origin)
  if (origin !== '*') res.setHeader('Vary', 'Origin')
}

/** The CORS headers of an answer (not a preflight) to `origin`, set on `res` for whatever writes it. */
export function exposeTo(res: ServerResponse, origin: string, p: CorsPolicy): void {
  allowOrigin(res, origin)
  if (p.exposeHeaders) res.setHeader('Access-Control-Expose-Headers', p.exposeHeaders)
}

/** An `OPTIONS` request of an endpoint with the policy `p`: a preflight is answered as above, any other 204 with `Allow`. */
export function answerOptions(req: IncomingMessage, res: ServerResponse, origin: string, p: CorsPolicy): void {
  if (applyCors(req, res, origin, p)) return
  res.writeHead(204, { Allow: `${p.methods}, OPTIONS`, 'Content-Length': '0' })
  res.end()
}

/** The MCP endpoint's policy: the Streamable HTTP transport's headers both ways. */
export const MCP_CORS: CorsPolicy = {
  methods: 'POST, DELETE',
  allowHeaders: 'Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Mcp-Method, Mcp-Name, Last-Event-ID, X-Request-Id',
  exposeHeaders: 'Mcp-Session-Id, WWW-Authenticate, Retry-After, X-Request-Id, Deprecation, Sunset',
}

/** The OAuth metadata and key set (GET), public to every origin. */
export const METADATA_CORS: CorsPolicy = {
  methods: 'GET, HEAD',
  allowHeaders: 'MCP-Protocol-Version',
  exposeHeaders: '',
}

/**
 * The OAuth endpoints a browser client posts to. Swagger UI (the reference page, when the OAuth server is on another
 * origin) sends `X-Requested-With` with its token request.
 */
export const OAUTH_CORS: CorsPolicy = {
  methods: 'POST',
  allowHeaders: 'Authorization, Content-Type, X-Requested-With',
  exposeHeaders: 'WWW-Authenticate, Retry-After, X-Request-Id',
}
