/**
 * The human API reference at `GET /docs`: Swagger UI, served from the installed `swagger-ui-dist` package (no CDN:
 * it works with no internet), reading `GET /v1/openapi.json`, with a style sheet of our own that makes it readable on
 * a phone (docs/adr/0165-reference-page-on-phones-and-its-oauth-client.md). "Try it out" sends requests from the
 * browser with the credentials the reader enters: Basic with an API key, or OAuth, where "Authorize" signs in with
 * PKCE through the service's own client for this page (its id is filled in; its redirect URI is
 * `<origin>/docs/oauth2-redirect.html`). Unauthenticated, free.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import type { ServerResponse } from 'node:http'
import FindMyWay, { type HTTPVersion } from 'find-my-way'
import type { Routes } from '../../core/http/routes.ts'

const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  // Where the OAuth sign-in of "Authorize" comes back to: the redirect URI of the page's client.
  'oauth2-redirect.html': 'text/html; charset=utf-8',
  'oauth2-redirect.js': 'text/javascript; charset=utf-8',
}

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>orgscan API reference</title><link rel="stylesheet" href="/docs/swagger-ui.css"><link rel="stylesheet" href="/docs/reference.css"></head>
<body><div id="reference"></div><script src="/docs/swagger-ui-bundle.js"></script><script src="/docs/init.js"></script></body></html>
`

/**
 * Swagger UI lays a section's description beside its name and a response's description between two other columns,
 * which a phone squeezes to a letter a line: below 40em the description goes under the name, and the responses and
 * their headers become one column. Wider screens keep Swagger UI's own layout.
 */
const STYLE = `@media (max-width: 40em) {
  .swagger-ui .wrapper { padding: 0 12px }
  .swagger-ui .opblock-tag { flex-wrap: wrap; padding: 10px 4px }
  .swagger-ui .opblock-tag > a { flex: 1 }
  .swagger-ui .opblock-tag small { flex: 1 0 100%; order: 1; padding: 4px 0 0 }
  .swagger-ui .opblock .opblock-section-header { padding: 8px 12px }
  .swagger-ui .opblock-description-wrapper, .swagger-ui .opblock-external-docs-wrapper, .swagger-ui .opblock-title_normal { padding: 12px }
  .swagger-ui .responses-inner { padding: 12px }
  .swagger-ui .responses-table, .swagger-ui .responses-table > tbody, .swagger-ui .responses-table tr.response,
  .swagger-ui .responses-table tr.response > td { display: block; width: auto; max-width: none; padding-left: 0 }
  .swagger-ui .responses-table .responses-header { display: none }
  .swagger-ui .responses-table tr.response { padding: 10px 0; border-bottom: 1px solid rgba(59,65,81,.2) }
  .swagger-ui .responses-table .response-col_status { font-weight: 700 }
  .swagger-ui .responses-table .response-col_links:has(> i:only-child) { display: none }
  .swagger-ui .response-controls, .swagger-ui .response-control-media-type, .swagger-ui .response-control-examples { display: block; padding-right: 0 }
  .swagger-ui select { max-width: 100% }
  .swagger-ui table.headers, .swagger-ui table.headers tbody { display: block }
  .swagger-ui table.headers thead { display: none }
  .swagger-ui table.headers tr { display: grid; grid-template-columns: 1fr auto; column-gap: 8px; align-items: baseline; padding: 6px 0; border-bottom: 1px solid rgba(59,65,81,.1) }
  .swagger-ui table.headers td { padding: 0; overflow-wrap: anywhere }
  .swagger-ui table.headers td:nth-child(2) { grid-column: 1 / -1; grid-row: 2; font-family: sans-serif; font-weight: 400 }
  .swagger-ui table.parameters td { padding-right: 8px }
  .swagger-ui .microlight, .swagger-ui pre { overflow-wrap: anywhere }
}
`

/**
 * What the page is told of the service's OAuth server: the id of its own client for this page, and the issuer when
 * it is not this page's origin (a separate MCP listener without a public URL), so that "Authorize" goes there.
 */
export interface ReferencePageOAuth {
  clientId: string
  issuer?: string
}

function init(oauth: ReferencePageOAuth | undefined): string {
  // The document names the OAuth endpoints relative to itself; when they live on another origin, the page's copy
  // of the document names them there.
  const toIssuer = oauth?.issuer
    ? `
  responseInterceptor: (res) => {
    if (!res.url.endsWith('/v1/openapi.json') || !res.ok) return res
    const doc = JSON.parse(res.text)
    const flow = doc.components?.securitySchemes?.oauth?.flows?.authorizationCode
    if (flow) for (const k of ['authorizationUrl', 'tokenUrl', 'refreshUrl']) if (flow[k]?.startsWith('/')) flow[k] = ${JSON.stringify(oauth.issuer)} + flow[k]
    res.text = JSON.stringify(doc)
    return res
  },`
    : ''
  return `window.ui = SwaggerUIBundle({
  url: '/v1/openapi.json',
  dom_id: '#reference',
  deepLinking: true,
  docExpansion: 'list',
  defaultModelsExpandDepth: 0,
  tryItOutEnabled: false,
  persistAuthorization: false,
  oauth2RedirectUrl: window.location.origin + '/docs/oauth2-redirect.html',${toIssuer}
})
// The authorization server requires PKCE (S256) of every client; the page's own client reads with mcp:read.
window.ui.initOAuth(${JSON.stringify(oauth ? { clientId: oauth.clientId, scopes: ['mcp:read'], usePkceWithAuthorizationCodeGrant: true } : { usePkceWithAuthorizationCodeGrant: true })})
`
}

/** The page may fetch from its own origin, and from the OAuth server's when that is another (its token endpoint). */
const csp = (issuer: string | undefined) =>
  `default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'${issuer ? ` ${new URL(issuer).origin}` : ''}; frame-ancestors 'none'; base-uri 'none'`

/** `oauth`: asked at each request of the page's script (the service's addresses are known once it listens). */
export function buildReferenceRoutes(oauth: () => ReferencePageOAuth | undefined = () => undefined): Routes {
  const dir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'))
  const cache = new Map<string, Buffer>()
  const asset = (name: string): Buffer => {
    let b = cache.get(name)
    if (!b) cache.set(name, (b = readFileSync(join(dir, name))))
    return b
  }
  const send = (res: ServerResponse, type: string, body: Buffer | string, maxAge: number) => {
    res.writeHead(200, {
      'Content-Type': type,
      'Content-Length': Buffer.byteLength(body),
      'Cache-Control': `public, max-age=${maxAge}`,
      'Content-Security-Policy': csp(oauth()?.issuer),
      'X-Content-Type-Options': 'nosniff',
    })
    res.end(res.req.method === 'HEAD' ? undefined : body)
  }
  const router = FindMyWay<HTTPVersion.V1>({ ignoreTrailingSlash: true, caseSensitive: true })
  router.on(['GET', 'HEAD'], '/docs', (_req, res) => send(res as ServerResponse, 'text/html; charset=utf-8', PAGE, 300))
  router.on(['GET', 'HEAD'], '/docs/init.js', (_req, res) => send(res as ServerResponse, 'text/javascript; charset=utf-8', init(oauth()), 300))
  router.on(['GET', 'HEAD'], '/docs/reference.css', (_req, res) => send(res as ServerResponse, 'text/css; charset=utf-8', STYLE, 300))
  for (const [name, type] of Object.entries(ASSETS)) router.on(['GET', 'HEAD'], `/docs/${name}`, (_req, res) => send(res as ServerResponse, type, asset(name), 86_400))
  return { router, allow: ['GET', 'HEAD'] }
}
