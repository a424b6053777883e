/**
 * HTTP plumbing of the MCP endpoint: reading a bounded body, JSON-RPC error answers, and the conversion between
 * node:http and the web-standard Request/Response the SDK speaks.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { Readable } from 'node:stream'
import { bodyCutBy } from '../http/body-cut.ts'
import type { ApiError } from '../errors.ts'

/** JSON-RPC error codes used outside the SDK (the SDK's own errors keep theirs). */
export const RPC = { parseError: -32700, invalidRequest: -32600, internalError: -32603, serverError: -32000, sessionNotFound: -32001 } as const

export function sendRpcError(res: ServerResponse, status: number, code: number, message: string, extra: { id?: unknown; headers?: Record<string, string>; data?: unknown } = {}): void {
  if (res.headersSent) return
  const body = JSON.stringify({ jsonrpc: '2.0', id: extra.id ?? null, error: { code, message, ...(extra.data !== undefined ? { data: extra.data } : {}) } })
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store', ...extra.headers })
  res.end(body)
}

/**
 * A request refused or failed outside the SDK (authentication, the endpoint's last catch), as a JSON-RPC error with the
 * error's HTTP status; `data` carries the status and the registry's code. A 503 carries Retry-After (runtime/errors.ts
 * gives every 503 its wait), and a server fault says nothing more than "Internal error.".
 */
export function sendRpcApiError(res: ServerResponse, err: ApiError, extra: { id?: unknown; headers?: Record<string, string> } = {}): void {
  const headers = { ...err.extras.headers, ...extra.headers }
  if (err.extras.retryAfterSeconds !== undefined) headers['Retry-After'] = String(err.extras.retryAfterSeconds)
  const data = { status: err.status, code: err.code }
  if (err.status === 500) return sendRpcError(res, 500, RPC.internalError, 'Internal error.', { id: extra.id, headers, data })
  sendRpcError(res, err.status, RPC.serverError, err.message, { id: extra.id, headers, data })
}

/**
 * A body read, or why not: beyond the limit (the caller answers 413), or cut by bytes the HTTP parser could not read or
 * by the server's time limit for receiving a request (the caller answers 400 with `cut`, the sentence saying which).
 */
export type BodyResult = { ok: true; text: string } | { ok: false; tooLarge: true } | { ok: false; cut: string }

function cutResult(err: Error): BodyResult {
  const timeout = (err as NodeJS.ErrnoException).code === 'ERR_HTTP_REQUEST_TIMEOUT'
  return { ok: false, cut: timeout ? 'The request body did not arrive in time.' : 'The request body could not be read: its framing (chunked encoding) is malformed.' }
}

/**
 * Reads the request body, at most `max` bytes; beyond it, stops reading and reports it. A body the server found cut
 * (runtime/http/body-cut.ts) is reported at once, never waited for.
 */
export function readBody(req: IncomingMessage, max: number): Promise<BodyResult> {
  const declared = Number(req.headers['content-length'] ?? NaN)
  if (declared > max) return Promise.resolve({ ok: false, tooLarge: true })
  const cut = bodyCutBy(req)
  if (cut) return Promise.resolve(cutResult(cut))
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (c: Buffer) => {
      size += c.length
      if (size > max) {
        req.removeAllListeners('data')
        req.pause()
        resolve({ ok: false, tooLarge: true })
        return
      }
      chunks.push(c)
    })
    req.on('end', () => resolve({ ok: true, text: Buffer.concat(chunks, size).toString('utf8') }))
    req.on('error', (e: Error) => (bodyCutBy(req) === e ? resolve(cutResult(e)) : reject(e)))
  })
}

/** A web Request carrying the node request's method, URL and headers (the body is handed to the SDK parsed). */
export function toWebRequest(req: IncomingMessage): Request {
  const headers = new Headers()
  for (const [k, v] of Object.entries(req.headers)) {
    if (typeof v === 'string') headers.set(k, v)
    else if (Array.isArray(v)) for (const x of v) headers.append(k, x)
  }
  const scheme = (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http'
  return new Request(`${scheme}://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, { method: req.method, headers })
}

/** Writes an SDK Response to the node response, with extra headers. */
export async function sendWebResponse(res: ServerResponse, r: Response, extra: Record<string, string> = {}): Promise<void> {
  const headers: Record<string, string> = { ...extra }
  r.headers.forEach((v, k) => {
    headers[k] = v
  })
  if (!r.body) {
    res.writeHead(r.status, headers)
    res.end()
    return
  }
  if (headers['content-type']?.startsWith('text/event-stream')) {
    res.writeHead(r.status, headers)
    Readable.fromWeb(r.body as never).pipe(res)
    return
  }
  const body = Buffer.from(await r.arrayBuffer())
  headers['content-length'] = String(body.length)
  res.writeHead(r.status, headers)
  res.end(body)
}
