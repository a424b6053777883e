/**
 * The REST surface: every route is derived from the registry; each request is routed, handed to the one
 * pipeline (runtime/platform/pipeline/pipeline.ts) and its outcome rendered as JSON with the version and rate-limit headers.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import FindMyWay, { type HTTPVersion } from 'find-my-way'
import { ApiError, toApiError } from '../../core/errors.ts'
import type { ServiceContext } from '../../core/service-context.ts'
import { renderRead, renderReadParts } from '../../core/envelope.ts'
import { notePrincipal } from '../../core/http/request-facts.ts'
import { authorizationOf } from '../../core/http/authorization.ts'
import type { Operation } from '../../core/pipeline.ts'
import { parseQuery } from './query.ts'
import { buildOpenApi } from '../docs/openapi.ts'
import { sendError, sendJson, sendNotModified, type Headers } from '../../core/http/respond.ts'
import { discoveryPayload, versionState, type VersionSource } from '../../core/version-state.ts'
import type { Clock } from '../../core/config-types.ts'
import type { Surface } from '../../core/plan.ts'
import type { Routes } from '../../core/http/routes.ts'
import type { ReadResult } from '../../core/read.ts'
import { releaseWhenWritten } from '../../core/http/response-done.ts'
import { allOperations } from '../../core/operations.ts'

export const VERSION_HEADER = 'X-Orgscan-API-Version'

/** The one major these routes serve (runtime/platform/versions/operations.ts SERVED_VERSIONS). */
const VERSION = 'v1'

type Handler = (req: IncomingMessage, res: ServerResponse, params: Record<string, string | undefined>, qs: string) => Promise<void>

/**
 * The headers of every answer under /v1/ (the version that handled it, and `Deprecation`/`Sunset` while it is
 * deprecated), or the answer itself when the version is removed (410) or not released (404), whatever the path.
 * Read from the version table in memory (runtime/platform/versions/live.ts): no database round trip per request.
 */
export function restVersionHeaders(ctx: Pick<ServiceContext, 'versions' | 'clock'>): () => Headers | ApiError {
  return () => {
    const st = versionState(ctx.versions.rows('rest'), VERSION, ctx.clock)
    const h: Headers = { [VERSION_HEADER]: '1' }
    if (st.state === 'removed') return new ApiError('gone', 'API version v1 has reached its sunset date and is no longer served.', { headers: h })
    if (st.state === 'unknown') return new ApiError('not_found', 'No such endpoint: API version v1 is not released. GET / lists the versions.', { headers: h })
    if (st.state === 'deprecated') {
      h.Deprecation = 'true'
      h.Sunset = st.sunsetHttpDate
    }
    return h
  }
}

export function buildRestRouter(ctx: ServiceContext): Routes {
  const router = FindMyWay<HTTPVersion.V1>({ ignoreTrailingSlash: true, caseSensitive: true, maxParamLength: 1024 })

  const versionHeaders = restVersionHeaders(ctx)

  /** version → authenticate → the pipeline → render: the same for every authenticated route. */
  const handle = (operation: (params: Record<string, string | undefined>, qs: string) => Operation): Handler => async (req, res, params, qs) => {
    const vh = versionHeaders()
    if (vh instanceof ApiError) return sendError(res, vh, vh.extras.headers)
    let principal
    const authorization = authorizationOf(req)
    try {
      principal = await ctx.pipeline.authenticate(authorization, req.socket, 'rest', VERSION)
      notePrincipal(req, principal)
    } catch (e) {
      let err = toApiError(e)
      if (err.status === 401) err = new ApiError(err.code, err.message, { ...err.extras, headers: { ...err.extras.headers, 'WWW-Authenticate': ctx.challenge('rest', authorization, 'invalid_token', err.message) } })
      return sendError(res, err, vh)
    }
    // An OAuth token reads with the read scope (API keys always read); without it, RFC 6750's insufficient_scope
    // challenge names the scope, so a client knows to ask the user for it.
    const unscoped = principal.scopes !== undefined && !principal.scopes.includes('mcp:read')
    const out = unscoped
      ? await ctx.pipeline.refuse(principal, new ApiError('forbidden', 'This access token was not granted the mcp:read scope, which reading needs.', { scope: 'mcp:read' }))
      : await ctx.pipeline.execute(principal, operation(params, qs), 'rest')
    if (unscoped) vh['WWW-Authenticate'] = ctx.challenge('rest', undefined, 'insufficient_scope')
    // vh is this request's own object: the answer's headers are added to it.
    const headers = out.rate ? Object.assign(vh, out.rate.headers) : vh
    if (!out.ok) return sendError(res, out.error, headers)
    if (out.kind === 'quota') return sendJson(res, 200, JSON.stringify({ data: { rateLimit: out.state } }), headers)
    try {
      respond(req, res, out.result, qs, headers)
    } finally {
      // Records lent by the response cache are given back once the socket has taken them.
      if (out.result.release) releaseWhenWritten(res, out.result.release)
    }
  }

  /** The answer of a read: tagged when org-scoped (200, or 304 when the client holds it), plain otherwise. */
  const respond = (req: IncomingMessage, res: ServerResponse, r: ReadResult, qs: string, headers: Headers): void => {
    const etag = r.etag
    if (etag === undefined) return sendJson(res, 200, renderRead(r, (req.url ?? '').split('?')[0], qs), headers)
    // An org-scoped answer: tagged, revalidated by the client on every use (it stays authenticated and counted),
    // and 304 with no body when the client holds the current answer (docs/adr/0034-etags-and-charged-304.md).
    const tagged = Object.assign(headers, { ETag: etag, 'Cache-Control': 'private, no-cache' })
    if (matchesIfNoneMatch(req.headers['if-none-match'], etag)) return sendNotModified(res, tagged)
    const path = (req.url ?? '').split('?')[0]
    // An answer from the cache holds its records as bytes: written as they are, between the envelope's head and tail.
    sendJson(res, 200, r.dataBytes ? renderReadParts(r as typeof r & { dataBytes: Buffer }, path, qs) : renderRead(r, path, qs), tagged)
  }

  const add = (path: string, h: Handler) => {
    router.on(['GET', 'HEAD'], path, (req, res, params) => {
      void h(req, res as ServerResponse, params, rawQuery(req.url))
    })
  }

  for (const op of allOperations(ctx.resources)) {
    add(op.route, handle((params, qs) => ({ kind: 'read', resource: op.resource, op: op.kind, params, query: () => parseQuery(qs) })))
  }

  // The OpenAPI document: unauthenticated, free, built once from the registry.
  const openapi = JSON.stringify(buildOpenApi(ctx.resources))
  router.on(['GET', 'HEAD'], '/v1/openapi.json', (req, res) => {
    const vh = versionHeaders()
    if (vh instanceof ApiError) return sendError(res as ServerResponse, vh, vh.extras.headers)
    if (rawQuery(req.url) !== '') return sendError(res as ServerResponse, new ApiError('unknown_parameter', 'This endpoint takes no query parameters.'), vh)
    sendJson(res as ServerResponse, 200, openapi, { ...vh, 'Cache-Control': 'public, max-age=300' })
  })

  // Quota state: free reads at both addresses (docs/adr/0010-quota-counting-rules.md).
  const quota = handle((params, qs) => ({ kind: 'quota', orgId: params.orgId, query: qs }))
  add('/v1/account/quota', quota)
  add('/v1/orgs/:orgId/quota', quota)

  return { router, allow: ['GET', 'HEAD'] }
}

/** `GET /`: the unauthenticated, unversioned version table of the surface a listener serves. */
export function buildDiscoveryRoutes(versions: VersionSource, surface: Surface, clock: Clock): Routes {
  const router = FindMyWay<HTTPVersion.V1>({ ignoreTrailingSlash: false, caseSensitive: true })
  router.on(['GET', 'HEAD'], '/', (_req, res) => {
    sendJson(res as ServerResponse, 200, JSON.stringify(discoveryPayload(versions.rows(surface), clock)))
  })
  return { router, allow: ['GET', 'HEAD'] }
}

/** RFC 9110 §13.1.2: `*`, or a list of tags compared weakly (a `W/` prefix is ignored). */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false
  if (header.trim() === '*') return true
  for (const part of header.split(',')) {
    const tag = part.trim()
    if ((tag.startsWith('W/') ? tag.slice(2) : tag) === etag) return true
  }
  return false
}

export function rawQuery(url: string | undefined): string {
  if (!url) return ''
  const i = url.indexOf('?')
  return i < 0 ? '' : url.slice(i + 1)
}
