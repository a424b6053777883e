/**
 * The HTTP listener: node:http with find-my-way. Everything that is not a route answers with the JSON error
 * envelope — 404, 405 with Allow, 400 for a URL over 8 KB, 431, and the answers Node would otherwise give
 * without a body: 400 for an HTTP/1.1 request without Host, 417 for an `Expect` other than 100-continue, 400 for
 * bytes that are not HTTP. No client input can crash the process, and a valid request pipelined before
 * unparseable bytes still gets its own answer first.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { Socket } from 'node:net'
import { randomUUID } from 'node:crypto'
import { accessLine, type AccessLog } from './access-log.ts'
import { noteRoute, Request } from '../../core/http/request-facts.ts'
import { ApiError } from '../../core/errors.ts'
import { sendError } from '../../core/http/respond.ts'
import { whenResponseDone } from '../../core/http/response-done.ts'
import { cutBody } from '../../core/http/body-cut.ts'
import { Response } from '../../core/http/response.ts'
import type { Router, Routes } from '../../core/http/routes.ts'
import { MAX_URL } from '../../core/limits.ts'

/** The head as a whole (URL and headers) is limited to this many bytes; the URL alone to `MAX_URL` characters. */
export const MAX_HEAD = 20_480

export interface HttpServerOptions {
  /** Runs before anything answers the request: sets headers every answer to it carries (CORS). */
  beforeAnswer?: (req: IncomingMessage, res: ServerResponse) => void
  /** Runs first; false means it answered (edge shedding). */
  onRequest?: (req: IncomingMessage, res: ServerResponse) => boolean
  /**
   * Headers for answers given here (404, 405, a malformed request) by path, e.g. the version header under /v1/; or the
   * answer itself, when every request to the path gets the same one (410 for a path of a removed version).
   */
  headersFor?: (path: string) => Record<string, string> | ApiError
  /** Serve HTTPS with this certificate and key (PEM). */
  tls?: { cert: Buffer; key: Buffer }
  /**
   * Shared with the service: requests being answered now (`inFlight`), and whether it is draining for shutdown
   * (answers then carry `Connection: close`, so clients reconnect to another process).
   */
  lifecycle?: { inFlight: number; draining: boolean }
  /**
   * Closes a connection on which nothing was read or written for this long (ms; 0 or absent: never). Node's own
   * timeouts bound a client that sends slowly; this one bounds a client that stops reading what it asked for.
   */
  idleSocketMs?: number
  /**
   * The time a request's head and body have to arrive (ms; default 30 s, Node's default is 5 minutes): past it the
   * request is answered 400 and its connection closed. Its head has at most 20 s of it. Node checks every 30 s, or a
   * quarter of this when that is shorter, so a slow request ends between this and that much later.
   */
  requestTimeoutMs?: number
  /**
   * How long a keep-alive connection may wait for its next request (ms; default `KEEP_ALIVE_MS`), said to clients as
   * `Keep-Alive: timeout=N` (whole seconds). While a connection waits for its next request this bound replaces
   * `idleSocketMs` (Node swaps the connection's timeout), so the shorter of the two never cuts a keep-alive connection.
   */
  keepAliveMs?: number
  /** One line per answered request (runtime/platform/http/access-log.ts). */
  accessLog?: AccessLog
}

/**
 * The default keep-alive time: longer than the 60 s a load balancer keeps an idle connection to its targets, so the
 * balancer, not this server, closes an idle connection (the server closing first races the balancer's next request
 * on it, which then fails).
 */
export const KEEP_ALIVE_MS = 65_000

/**
 * Resolves once the event loop has polled for I/O after this call (two turns of its check phase): what clients had
 * sent by then has been read, and a request whose head arrived is being answered.
 */
export function afterPoll(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)))
}

/** What `router.find` returns for a path (find-my-way). */
interface Match {
  handler: (req: IncomingMessage, res: ServerResponse, params: Record<string, string | undefined>, store: unknown, searchParams: unknown) => void
  params: Record<string, string | undefined>
  store: unknown
  searchParams: unknown
}

/** An incoming X-Request-Id is kept when it is well formed; otherwise one is made. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/**
 * TLS 1.2 and 1.3 only, with FIPS-approved suites: ECDHE key exchange with AES-GCM. No CBC, RC4, 3DES, and no
 * ChaCha20-Poly1305 (not FIPS-approved). Names starting with TLS_ are the TLS 1.3 suites.
 */
export const TLS_MIN_VERSION = 'TLSv1.2'
/** Key exchange on the NIST curves only: X25519 is not FIPS-approved. */
export const TLS_CURVES = 'P-256:P-384'
export const TLS_CIPHERS = [
  'TLS_AES_256_GCM_SHA384',
  'TLS_AES_128_GCM_SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
].join(':')

/**
 * Responses not yet finished per connection, the parse error to send once they are (pipelining), and the last request
 * the connection brought with its response (the one whose body bad bytes would cut).
 */
interface SocketState {
  open: number
  pendingError?: string
  lastReq?: IncomingMessage
  lastRes?: ServerResponse
}

/** The answer's request id: the caller's `X-Request-Id` when well formed, else a new one. */
function assignRequestId(req: IncomingMessage, res: ServerResponse): string {
  const incoming = req.headers['x-request-id']
  const id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID()
  ;(res as Response).requestId = id
  return id
}

function decodable(path: string): boolean {
  try {
    decodeURIComponent(path)
    return true
  } catch {
    return false
  }
}

/** The methods `path` takes across the route tables, in each table's order (empty: no such path). */
function allowedMethods(routes: readonly Routes[], path: string): string[] {
  const out: string[] = []
  for (const r of routes) for (const m of r.allow) if (!out.includes(m) && r.router.find(m as 'GET', path)) out.push(m)
  return out
}

/** An answer written on the socket itself (the request could not be parsed): the envelope, and a request id as on every answer. */
function rawError(status: number, title: string, code: string, detail: string): string {
  const body = JSON.stringify({ error: { status, title, detail, code } })
  return `HTTP/1.1 ${status} ${title}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${randomUUID()}\r\nConnection: close\r\n\r\n${body}`
}

export function createHttpServer(routes: readonly Routes[], opts: HttpServerOptions = {}): Server {
  const sockets = new WeakMap<Socket, SocketState>()
  const stateOf = (socket: Socket): SocketState => {
    let st = sockets.get(socket)
    if (!st) sockets.set(socket, (st = { open: 0 }))
    return st
  }
  const requestTimeout = opts.requestTimeoutMs ?? 30_000
  const httpOptions = {
    IncomingMessage: Request,
    ServerResponse: Response,
    maxHeaderSize: MAX_HEAD,
    requestTimeout,
    // Node refuses a head timeout longer than the request's.
    headersTimeout: Math.min(20_000, requestTimeout),
    connectionsCheckingInterval: Math.max(100, Math.min(30_000, Math.floor(requestTimeout / 4))),
    keepAliveTimeout: opts.keepAliveMs ?? KEEP_ALIVE_MS,
    requireHostHeader: false,
  }
  const life = opts.lifecycle
  const log = opts.accessLog
  /** An answer given here, before a route's handler: with the path's own headers (or the path's fixed answer). */
  const refuse = (res: ServerResponse, path: string, err: ApiError): void => {
    const headers = opts.headersFor?.(path) ?? {}
    if (headers instanceof ApiError) return sendError(res, headers, headers.extras.headers)
    sendError(res, err, headers)
  }
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const st = stateOf(req.socket)
    const startedAt = log ? performance.now() : 0
    st.open++
    st.lastReq = req
    st.lastRes = res
    if (life) life.inFlight++
    // Every answer carries a request id (the caller's, when well formed) for logs and support.
    const requestId = assignRequestId(req, res)
    // Done when the response closes, or its connection does first (a pipelined response queued behind a stalled one).
    whenResponseDone(res, () => {
      if (life) life.inFlight--
      if (log) log(accessLine(req, res.statusCode, startedAt, requestId, !res.writableFinished))
      if (st.lastReq === req) st.lastReq = st.lastRes = undefined
      if (--st.open === 0 && st.pendingError !== undefined && req.socket.writable) req.socket.end(st.pendingError)
      // An answer whose head said keep-alive before the drain began leaves its connection idle: closed like the others.
      else if (st.open === 0 && life?.draining) server.closeIdleConnections()
    })
    // Its head says Connection: close if it is written while the service drains (response.ts).
    ;(res as Response).lifecycle = life
    try {
      opts.beforeAnswer?.(req, res)
      if (opts.onRequest && !opts.onRequest(req, res)) return
      const url = req.url ?? '/'
      const path = url.split('?')[0]
      if (req.httpVersion === '1.1' && req.headers.host === undefined) {
        return refuse(res, path, new ApiError('invalid_parameter', 'HTTP/1.1 requests need a Host header.', { headers: { Connection: 'close' } }))
      }
      if (url.length > MAX_URL) return refuse(res, path, new ApiError('invalid_parameter', `The request URL exceeds ${MAX_URL} characters.`))
      const method = req.method ?? 'GET'
      // A read takes no body: one that carries one is refused before anything reads it (the connection closes rather
      // than take in bytes nobody asked for).
      if ((method === 'GET' || method === 'HEAD') && (req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0')) {
        return refuse(res, path, new ApiError('payload_too_large', `A ${method} request takes no body; send the parameters in the query string.`, { headers: { Connection: 'close' } }))
      }
      let match: Match | null = null
      const found = routes.find((r) => r.allow.includes(method) && (match = r.router.find(method as 'GET', path) as Match | null))
      if (found) {
        const m = match as unknown as Match
        if (log) noteRoute(req, path, m.params, m.handler)
        // The route found above, called as the router's own lookup would call it (without finding it a second time).
        m.handler(req, res, m.params, m.store, m.searchParams)
        return
      }
      // A path segment that is not valid percent-encoded UTF-8 (`%FF`): the router finds no route for it, but the
      // fault is the request's, not a missing endpoint.
      if (path.includes('%') && !decodable(path)) return refuse(res, path, new ApiError('invalid_parameter', 'The request path is not valid percent-encoded UTF-8.'))
      // The path exists for other methods: 405 with exactly the methods it takes.
      const allowed = allowedMethods(routes, path)
      if (allowed.length) {
        // OPTIONS (a CORS preflight) is in Allow but is no way to use the endpoint.
        const usable = allowed.filter((m) => m !== 'OPTIONS')
        const detail = usable.includes('HEAD') && usable.every((m) => m === 'GET' || m === 'HEAD') ? `${method} is not allowed here; this API is read-only.` : `${method} is not allowed here; use ${usable.join(' or ')}.`
        return refuse(res, path, new ApiError('method_not_allowed', detail, { headers: { Allow: allowed.join(', ') } }))
      }
      refuse(res, path, new ApiError('not_found', 'No such endpoint. Endpoints are under /v1/; GET / lists the versions.'))
    } catch {
      sendError(res, new ApiError('internal_error', 'The server failed to process the request.'))
    }
  }
  const server: Server = opts.tls
    ? (createHttpsServer({ ...httpOptions, cert: opts.tls.cert, key: opts.tls.key, minVersion: TLS_MIN_VERSION, ciphers: TLS_CIPHERS, ecdhCurve: TLS_CURVES, honorCipherOrder: true }, handler) as unknown as Server)
    : createServer(httpOptions, handler)
  // The peer's address is read (and kept by Node) when the connection opens: read first by a request, a connection
  // the client already reset has none, and every per-address limit would lose track of it.
  server.on(opts.tls ? 'secureConnection' : 'connection', (socket: Socket) => void socket.remoteAddress)
  // No listener for 'timeout': Node destroys a connection idle this long (pending writes are dropped with it).
  if (opts.idleSocketMs) server.setTimeout(opts.idleSocketMs)
  deferIdleClose(server)
  // Node answers an unexpected `Expect` with a bodiless 417 unless this event is handled.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    // Answered without the request handler: the id is given here, as every answer carries one.
    assignRequestId(req, res)
    const headers = opts.headersFor?.((req.url ?? '/').split('?')[0])
    sendError(res, new ApiError('expectation_failed', `Expect: ${String(req.headers.expect).slice(0, 64)} is not supported; only 100-continue is.`, { headers: { Connection: 'close' } }), headers instanceof ApiError ? headers.extras.headers : headers)
  })
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    if (!socket.writable || err.code === 'ECONNRESET') return socket.destroy()
    const overflow = err.code === 'HPE_HEADER_OVERFLOW'
    const answer = overflow
      ? rawError(431, 'Request Header Fields Too Large', 'headers_too_large', 'The request headers are too large.')
      : rawError(400, 'Bad Request', 'invalid_parameter', 'The request could not be parsed.')
    const st = sockets.get(socket)
    const last = st?.lastReq
    if (st && st.open > 0 && last && !last.complete && !st.lastRes!.headersSent) {
      // The bad bytes are in the body of a request not yet answered: its answer is the answer to them (a reader of the
      // body answers 400: body-cut.ts), and the connection closes after it, as the parser cannot go on.
      st.lastRes!.shouldKeepAlive = false
      cutBody(last, err)
      return
    }
    // Requests before the bad bytes are still being answered: the error follows their answers.
    if (st && st.open > 0) st.pendingError = answer
    else socket.end(answer)
  })
  return server
}

/**
 * Makes `closeIdleConnections` (which `close()` calls) close the connections that are idle once the event loop has
 * polled for I/O, not at the moment it is called. A client may have sent a request on a keep-alive connection the server
 * has not read yet (it is in the kernel's buffer, or arrived while the process was busy, e.g. handling the signal that
 * stops it); closing that connection at once destroys it with the request unread, and the client sees a reset. After
 * the poll that request is being answered (with `Connection: close` while draining), and the connection is no longer
 * idle. A call while one waits makes one more round after it, so every call is followed by a poll.
 */
function deferIdleClose(server: Server): void {
  const closeNow = server.closeIdleConnections.bind(server)
  let waiting = false
  let again = false
  const round = () => {
    waiting = true
    void afterPoll().then(() => {
      closeNow()
      waiting = false
      if (again) {
        again = false
        round()
      }
    })
  }
  server.closeIdleConnections = () => {
    if (waiting) again = true
    else round()
  }
}
