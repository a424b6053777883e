/**
 * REST surface (contract §4.2, §7, §9): every route is derived from the registry. Pipeline per request:
 * authenticate → quota → read (parse, plan, query) → render.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import FindMyWay, { type HTTPVersion } from 'find-my-way'
import { ApiError, toApiError } from '../errors.ts'
import type { CompiledResource } from '../registry.ts'
import type { ServiceContext } from '../service-context.ts'
import { read } from '../read.ts'
import { parseQuery } from './query.ts'
import { sendError, sendJson, type Headers } from './respond.ts'
import { discoveryPayload, versionState } from '../versions.ts'
import type { ListPlan } from '../plan.ts'

export const VERSION_HEADER = 'X-Orgscan-API-Version'

type Handler = (req: IncomingMessage, res: ServerResponse, params: Record<string, string | undefined>, qs: string) => Promise<void>

function selfLinks(path: string, qs: string, plan: ListPlan, hasMore: boolean): string {
  const make = (offset: number | null) => {
    const p = new URLSearchParams(qs)
    if (offset === null) return path + (qs ? `?${p.toString()}` : '')
    p.set('offset', String(offset))
    if (plan.requestedLimit !== undefined) p.set('limit', String(plan.limit))
    return `${path}?${p.toString()}`
  }
  const links: Record<string, string> = { self: make(null) }
  if (hasMore) links.next = make(plan.offset + plan.limit)
  if (plan.offset > 0) links.prev = make(Math.max(0, plan.offset - plan.limit))
  return JSON.stringify(links)
}

export function buildRestRouter(ctx: ServiceContext) {
  const router = FindMyWay<HTTPVersion.V1>({ ignoreTrailingSlash: true, caseSensitive: true, maxParamLength: 512 })

  const versionHeaders = (): Headers | ApiError => {
    const st = versionState(ctx.config.versions, 'v1', ctx.clock)
    const h: Headers = { [VERSION_HEADER]: '1' }
    if (st.state === 'removed') return new ApiError('gone', 'API version v1 has reached its sunset date and is no longer served.', { headers: h })
    if (st.state === 'deprecated') {
      h.Deprecation = 'true'
      h.Sunset = st.sunsetHttpDate
    }
    return h
  }

  /** Renders any failure; a server fault is logged and its quota unit given back (a retry is not charged twice). */
  const fail = (req: IncomingMessage, res: ServerResponse, e: unknown, headers: Headers, refund?: () => void) => {
    const err = toApiError(e)
    if (err.status >= 500) {
      refund?.()
      ctx.log.error({ msg: 'request failed', url: req.url, err: e })
    }
    sendError(res, err, headers)
  }

  const resourceHandler = (c: CompiledResource, op: 'list' | 'get'): Handler => async (req, res, params, qs) => {
    const vh = versionHeaders()
    if (vh instanceof ApiError) return sendError(res, vh, vh.extras.headers)
    let headers: Headers = vh
    let refund: (() => void) | undefined
    try {
      const principal = await ctx.authenticate(req.headers.authorization)
      const charge = await ctx.quota.charge(principal)
      headers = { ...headers, ...charge.headers }
      if (!charge.allowed) throw charge.error
      refund = charge.refund
      const result = await read(ctx.sql, { resource: c, op, params, query: parseQuery(qs), surface: 'rest', principal })
      let body: string
      if (result.kind === 'list') {
        const { plan } = result
        const meta: Record<string, unknown> = { count: result.count, hasMore: result.hasMore }
        if (!c.decl.unpaged) {
          meta.limit = plan.limit
          meta.offset = plan.offset
          if (plan.requestedLimit !== undefined) meta.requestedLimit = plan.requestedLimit
        }
        const path = (req.url ?? '').split('?')[0]
        body = `{"data":${result.data},"meta":${JSON.stringify(meta)},"links":${selfLinks(path, qs, plan, result.hasMore)}}`
      } else {
        body = `{"data":${result.data}}`
      }
      sendJson(res, 200, body, headers)
    } catch (e) {
      fail(req, res, e, headers, refund)
    }
  }

  const add = (path: string, h: Handler) => {
    router.on(['GET', 'HEAD'], path, (req, res, params) => {
      void h(req, res as ServerResponse, params, rawQuery(req.url))
    })
  }

  for (const c of ctx.resources) {
    const d = c.decl
    const base = d.scope === 'org' ? `/v1/orgs/:orgId/${d.path}` : `/v1/${d.path}`
    const fmw = base.replace(/\{([A-Za-z]+)\}/g, ':$1')
    if (d.operations.list) add(fmw, resourceHandler(c, 'list'))
    if (d.operations.get) add(d.kind === 'singleton' ? fmw : `${fmw}/:${d.id!.param}`, resourceHandler(c, 'get'))
  }

  // Quota state (issue 3): free reads at both addresses the contract names.
  const quotaHandler: Handler = async (req, res, params) => {
    const vh = versionHeaders()
    if (vh instanceof ApiError) return sendError(res, vh, vh.extras.headers)
    try {
      const principal = await ctx.authenticate(req.headers.authorization)
      if (params.orgId !== undefined) await ctx.checkOrgAccess(principal, params.orgId)
      const state = await ctx.quota.state(principal)
      sendJson(res, 200, JSON.stringify({ data: { rateLimit: state.body } }), { ...vh, ...state.headers })
    } catch (e) {
      fail(req, res, e, vh)
    }
  }
  add('/v1/account/quota', quotaHandler)
  add('/v1/orgs/:orgId/quota', quotaHandler)

  router.on(['GET', 'HEAD'], '/', (_req, res) => {
    sendJson(res as ServerResponse, 200, JSON.stringify(discoveryPayload(ctx.config.versions, ctx.clock)))
  })
  return router
}

export function rawQuery(url: string | undefined): string {
  if (!url) return ''
  const i = url.indexOf('?')
  return i < 0 ? '' : url.slice(i + 1)
}
