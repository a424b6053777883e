/**
 * The access log (docs/operating.md "Logs"): one JSON line per answered request — method, route template (never the
 * concrete path or its query string, which may carry filter values), status, duration, request id, and who called
 * (account, API key id or OAuth client id, user). Never a secret, a token or a header. Written as pino's JSON lines
 * (`formatAccessLine`), in blocks (access-sink.ts), by `orgscan serve`; a service started without an access log writes
 * none.
 */
import { IncomingMessage } from 'node:http'
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

/**
 * The request class of the server (`createServer`'s `IncomingMessage` option): the facts' property exists from
 * construction, so noting a fact never adds a property to a request. Added later, it changed the request objects'
 * hidden class in the middle of their handling, and every function of ours and of node:http that reads a request
 * then met two shapes: measured, that alone cost 5–8 % of a cache hit's throughput (docs/decisions.md "Operations").
 */
export class Request extends IncomingMessage {
  [FACTS]: Facts | undefined = undefined
}

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

/** Characters a JSON string may hold as they are; anything else (quotes, backslashes, controls, non-ASCII) is escaped by JSON.stringify. */
const PLAIN = /^[A-Za-z0-9._:/ ()-]*$/
/** A string as JSON: ids, request ids and route templates are plain, and quoted without JSON.stringify's cost. */
const q = (s: string): string => (PLAIN.test(s) ? `"${s}"` : JSON.stringify(s))

/**
 * An access-log line as text: the JSON line pino 9 writes for `info(line)` (with `{ worker }` as its `base` in a
 * worker), byte for byte — `level` 30, `time` in epoch milliseconds, the worker's slot, then the line's fields in
 * their order — built directly for the one shape it has. pino cost about 3 µs of CPU per line here against about 1 µs
 * for this, and in the served process about 7 µs more per request than this (docs/decisions.md "Operations");
 * test/ops/access-log.test.ts holds the two equal.
 */
export function formatAccessLine(l: AccessLine, time: number, worker?: number): string {
  let s = worker === undefined ? `{"level":30,"time":${time},"msg":"request"` : `{"level":30,"time":${time},"worker":${worker},"msg":"request"`
  s += `${methodAndRoute(l.method, l.route)},"status":${l.status},"durationMs":${l.durationMs},"requestId":${q(l.requestId)}`
  if (l.accountId !== undefined) s += `,"accountId":${q(l.accountId)}`
  if (l.keyId !== undefined) s += `,"keyId":${q(l.keyId)}`
  if (l.userId !== undefined) s += `,"userId":${q(l.userId)}`
  if (l.aborted) s += ',"aborted":true'
  return s + '}\n'
}

/** `,"method":…,"route":…` by method and route: a closed set (route templates, HTTP methods), rendered once each. */
const fragments = new Map<string, Map<string, string>>()
const MAX_FRAGMENTS = 2000
let fragmentCount = 0

function methodAndRoute(method: string, route: string): string {
  let byRoute = fragments.get(method)
  const known = byRoute?.get(route)
  if (known !== undefined) return known
  const text = `,"method":${q(method)},"route":${q(route)}`
  if (fragmentCount < MAX_FRAGMENTS) {
    if (!byRoute) fragments.set(method, (byRoute = new Map()))
    byRoute.set(route, text)
    fragmentCount++
  }
  return text
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

