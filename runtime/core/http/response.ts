/**
 * The response class of the server (`createServer`'s `ServerResponse` option): every answer carries `X-Request-Id`,
 * added to the head as it is written. Set earlier with `setHeader`, it sent node:http down its per-header path for the
 * whole head (each header set, lowercased and stored, then written): about 2.4 % of a cache hit's time, profiled
 * (docs/adr/0036-access-log-hand-encoded-pino-lines.md). The busy writers (REST's `sendJson` and 304, MCP's answers)
 * put the id in the head object they build (`withRequestId`); a head object without it gets it in a copy (never the
 * caller's object, which may be shared); any other head through `setHeader`, as before.
 */
import { ServerResponse, type IncomingMessage, type OutgoingHttpHeader, type OutgoingHttpHeaders } from 'node:http'

type Head = OutgoingHttpHeaders | OutgoingHttpHeader[] | undefined

const isObject = (h: Head): h is OutgoingHttpHeaders => h !== undefined && h !== null && !Array.isArray(h)

export class Response<Req extends IncomingMessage = IncomingMessage> extends ServerResponse<Req> {
  /** The request id this answer carries ('' until the server's handler sets it: then no id is added). */
  requestId = ''
  /**
   * The service's shutdown state, set by the server's handler: an answer whose head is written while the service
   * drains says `Connection: close` (also one begun before the drain), so the client does not reuse the connection.
   */
  lifecycle: { readonly draining: boolean } | undefined = undefined

  override writeHead(statusCode: number, reasonOrHeaders?: string | Head, maybeHeaders?: Head): this {
    if (this.lifecycle?.draining) this.shouldKeepAlive = false
    const id = this.requestId
    if (id === '') return super.writeHead(statusCode, reasonOrHeaders as string, maybeHeaders)
    if (typeof reasonOrHeaders === 'string') {
      if (isObject(maybeHeaders)) return super.writeHead(statusCode, reasonOrHeaders, { ...maybeHeaders, 'X-Request-Id': id })
    } else if (isObject(reasonOrHeaders)) {
      if (reasonOrHeaders['X-Request-Id'] !== undefined) return super.writeHead(statusCode, reasonOrHeaders)
      return super.writeHead(statusCode, { ...reasonOrHeaders, 'X-Request-Id': id })
    }
    if (!this.hasHeader('x-request-id')) this.setHeader('X-Request-Id', id)
    return super.writeHead(statusCode, reasonOrHeaders as string, maybeHeaders)
  }
}

/**
 * `head` with this answer's request id added: for a head object the writer built for this answer alone (it is changed
 * in place). A response of another class, or before its id is set, gets nothing.
 */
export function withRequestId<H extends OutgoingHttpHeaders>(res: ServerResponse, head: H): H {
  const id = (res as Partial<Response>).requestId
  if (id) (head as OutgoingHttpHeaders)['X-Request-Id'] = id
  return head
}
