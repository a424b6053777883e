/**
 * The access log (docs/operating.md "Logs"): one JSON line per answered request — method, route template (never the
 * concrete path or its query string, which may carry filter values), status, duration, request id, and who called
 * (account, API key id or OAuth client id, user). Never a secret, a token or a header. Written with pino
 * (asynchronously, in blocks) by `orgscan serve`; a service started without an access log writes none.
 */
import type { IncomingMessage } from 'node:http'
import type { Principal } from '../auth/principal.ts'

export interface AccessLine {
  msg: 'request'
  method: string
  /** The route template (`/v1/orgs/:orgId/fields`), `(unmatched)` when no route took the request. */
  route: string
  status: number
  durationMs: number
  requestId: string
  accountId?: string
  /** The API key id or the OAuth client id: never a secret. */
  keyId?: string
  userId?: string
  /** Set when the client went away before the answer was complete. */
  aborted?: true
}

export type AccessLog = (line: AccessLine) => void

interface Facts {
  route?: string
  principal?: Principal
}

/** The facts ride on the request object itself (a symbol-keyed property: cheaper than a WeakMap per request). */
const FACTS = Symbol('orgscan.accessFacts')
type WithFacts = IncomingMessage & { [FACTS]?: Facts }

const of = (req: IncomingMessage): Facts => ((req as WithFacts)[FACTS] ??= {})

/** Route templates by the router's handler of the route (one handler per route): derived once per route. */
const templates = new WeakMap<object, string>()

/**
 * The route that took the request, as a template: each path parameter's segment replaced by `:name`; `handler` is
 * the router's handler for the route, so the template is derived on its first request only.
 */
export function noteRoute(req: IncomingMessage, path: string, params: Record<string, string | undefined> | undefined, handler?: object): void {
  const known = handler && templates.get(handler)
  if (known) {
    of(req).route = known
    return
  }
  let route = path
  if (params) {
    const byValue = new Map(Object.entries(params).filter(([, v]) => v !== undefined).map(([k, v]) => [v!, k]))
    route = path
      .split('/')
      .map((seg) => {
        const name = byValue.get(decodeSegment(seg))
        return name === undefined ? seg : `:${name}`
      })
      .join('/')
  }
  // Only a template free of parameter values may be kept (a value equal to a fixed segment would be kept as it is).
  if (handler && (!params || Object.keys(params).every((k) => route.includes(`:${k}`)))) templates.set(handler, route)
  of(req).route = route
}

function decodeSegment(s: string): string {
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}

/** Who the request authenticated as (REST and MCP call this once they know). */
export function notePrincipal(req: IncomingMessage, p: Principal): void {
  of(req).principal = p
}

export function accessLine(req: IncomingMessage, status: number, startedAt: number, requestId: string, aborted: boolean): AccessLine {
  const f = (req as WithFacts)[FACTS]
  const line: AccessLine = {
    msg: 'request',
    method: req.method ?? 'GET',
    route: f?.route ?? '(unmatched)',
    status,
    durationMs: Math.round((performance.now() - startedAt) * 100) / 100,
    requestId,
  }
  const p = f?.principal
  if (p) {
    line.accountId = p.accountId
    line.keyId = p.credentialId
    if (p.userId) line.userId = p.userId
  }
  if (aborted) line.aborted = true
  return line
}

