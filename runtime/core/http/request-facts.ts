/**
 * What the access log says of a request, noted on the request while it is handled: the route template that took it
 * (the HTTP server notes it) and who it authenticated as (REST and MCP note it). Read by the access log
 * (runtime/platform/http/access-log.ts) when the answer is done.
 */
import { IncomingMessage } from 'node:http'
import type { Principal } from '../principal.ts'

/** The facts ride on the request object itself (symbol-keyed properties: cheaper than a WeakMap per request). */
export const ROUTE = Symbol('orgscan.accessRoute')
export const PRINCIPAL = Symbol('orgscan.accessPrincipal')

/**
 * The request class of the server (`createServer`'s `IncomingMessage` option): the facts' properties exist from
 * construction, so noting a fact never adds a property to a request. Added later, it changed the request objects'
 * hidden class in the middle of their handling, and every function of ours and of node:http that reads a request
 * then met two shapes: measured, that alone cost 5–8 % of a cache hit's throughput
 * (docs/adr/0036-access-log-hand-encoded-pino-lines.md).
 */
export class Request extends IncomingMessage {
  [ROUTE]: string | undefined = undefined;
  [PRINCIPAL]: Principal | undefined = undefined
}

/** The server's requests are `Request`s; one made elsewhere (a test's) gets the properties when a fact is noted. */
export const factsOf = (req: IncomingMessage): Request => req as Request

/** Route templates by the router's handler of the route (one handler per route): derived once per route. */
const templates = new WeakMap<object, string>()

/**
 * The route that took the request, as a template: each path parameter's segment replaced by `:name`; `handler` is
 * the router's handler for the route, so the template is derived on its first request only.
 */
export function noteRoute(req: IncomingMessage, path: string, params: Record<string, string | undefined> | undefined, handler?: object): void {
  const known = handler && templates.get(handler)
  if (known) {
    factsOf(req)[ROUTE] = known
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
  factsOf(req)[ROUTE] = route
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
  factsOf(req)[PRINCIPAL] = p
}
