/**
 * The HTTP listener: node:http with find-my-way. Everything that is not a route answers with the JSON error
 * envelope (404, 405 with Allow, 414, 431), and no client input can crash the process.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { ApiError } from '../errors.ts'
import { sendError } from './respond.ts'

export type Router = {
  lookup(req: IncomingMessage, res: ServerResponse): unknown
  find(method: 'GET', path: string): unknown
}

const MAX_URL = 8192

export interface HttpServerOptions {
  /** Runs first; false means it answered (edge shedding). */
  onRequest?: (req: IncomingMessage, res: ServerResponse) => boolean
  /** Headers for answers given here (404, 405) by path, e.g. the version header under /v1/. */
  headersFor?: (path: string) => Record<string, string>
}

export function createHttpServer(routers: Router[], opts: HttpServerOptions = {}): Server {
  const server = createServer({ maxHeaderSize: 16384, requestTimeout: 30_000, headersTimeout: 20_000, keepAliveTimeout: 5_000 }, (req, res) => {
    try {
      if (opts.onRequest && !opts.onRequest(req, res)) return
      const url = req.url ?? '/'
      if (url.length > MAX_URL) return sendError(res, new ApiError('invalid_parameter', `The request URL exceeds ${MAX_URL} characters.`))
      const path = url.split('?')[0]
      const method = req.method ?? 'GET'
      const headers = opts.headersFor?.(path) ?? {}
      for (const r of routers) {
        if (method !== 'GET' && method !== 'HEAD') {
          if (r.find('GET', path)) {
            return sendError(res, new ApiError('method_not_allowed', `${method} is not allowed here; this API is read-only.`, { headers: { Allow: 'GET, HEAD' } }), headers)
          }
          continue
        }
        if (r.find('GET', path)) {
          r.lookup(req, res)
          return
        }
      }
      sendError(res, new ApiError('not_found', 'No such endpoint. Endpoints are under /v1/; GET / lists the versions.'), headers)
    } catch {
      sendError(res, new ApiError('internal_error', 'The server failed to process the request.'))
    }
  })
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    if (!socket.writable) return socket.destroy()
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? '431 Request Header Fields Too Large' : '400 Bad Request'
    const code = err.code === 'HPE_HEADER_OVERFLOW' ? 'headers_too_large' : 'invalid_parameter'
    const body = JSON.stringify({ error: { status: Number(status.slice(0, 3)), title: status.slice(4), detail: 'The request could not be parsed.', code } })
    socket.end(`HTTP/1.1 ${status}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
  })
  return server
}
