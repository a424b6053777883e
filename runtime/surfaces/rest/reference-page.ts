/**
 * The human API reference at `GET /docs`: Swagger UI, served from the installed `swagger-ui-dist` package (no CDN:
 * it works with no internet), reading `GET /v1/openapi.json`. "Try it out" sends requests from the browser with the
 * credentials the reader enters (Basic with an API key, or OAuth: "Authorize" signs in with PKCE through a client whose
 * redirect URI is `<origin>/docs/oauth2-redirect.html`). Unauthenticated, free.
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
  // Where the OAuth sign-in of "Authorize" comes back to (register it as the client's redirect URI).
  'oauth2-redirect.html': 'text/html; charset=utf-8',
  'oauth2-redirect.js': 'text/javascript; charset=utf-8',
}

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>orgscan API reference</title><link rel="stylesheet" href="/docs/swagger-ui.css"></head>
<body><div id="reference"></div><script src="/docs/swagger-ui-bundle.js"></script><script src="/docs/init.js"></script></body></html>
`

const INIT = `window.ui = SwaggerUIBundle({
  url: '/v1/openapi.json',
  dom_id: '#reference',
  deepLinking: true,
  docExpansion: 'list',
  defaultModelsExpandDepth: 0,
  tryItOutEnabled: false,
  persistAuthorization: false,
  oauth2RedirectUrl: window.location.origin + '/docs/oauth2-redirect.html',
})
// The authorization server requires PKCE (S256) of every client.
window.ui.initOAuth({ usePkceWithAuthorizationCodeGrant: true })
`

const CSP = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'"

export function buildReferenceRoutes(): Routes {
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
      'Content-Security-Policy': CSP,
      'X-Content-Type-Options': 'nosniff',
    })
    res.end(res.req.method === 'HEAD' ? undefined : body)
  }
  const router = FindMyWay<HTTPVersion.V1>({ ignoreTrailingSlash: true, caseSensitive: true })
  router.on(['GET', 'HEAD'], '/docs', (_req, res) => send(res as ServerResponse, 'text/html; charset=utf-8', PAGE, 300))
  router.on(['GET', 'HEAD'], '/docs/init.js', (_req, res) => send(res as ServerResponse, 'text/javascript; charset=utf-8', INIT, 300))
  for (const [name, type] of Object.entries(ASSETS)) router.on(['GET', 'HEAD'], `/docs/${name}`, (_req, res) => send(res as ServerResponse, type, asset(name), 86_400))
  return { router, allow: ['GET', 'HEAD'] }
}
