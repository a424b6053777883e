/**
 * HTTP plumbing of the MCP endpoint: reading a bounded body, JSON-RPC error answers, and the conversion between
 * node:http and the web-standard Request/Response the SDK speaks.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { Readable } from 'node:stream'
import type { ApiError } from '../../core/errors.ts'

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
 * error's HTTP status; `data` carries the status and the registry's code. A 503 carries Retry-After (runtime/core/errors.ts
 * gives every 503 its wait), and a server fault says nothing more than "Internal error.".
 */
export function sendRpcApiError(res: ServerResponse, err: ApiError, extra: { id?: unknown; headers?: Record<string, string> } = {}): void {
  const headers = { ...err.extras.headers, ...extra.headers }
  if (err.extras.retryAfterSeconds !== undefined) headers['Retry-After'] = String(err.extras.retryAfterSeconds)
  const data = { status: err.status, code: err.code }
  if (err.status === 500) return sendRpcError(res, 500, RPC.internalError, 'Internal error.', { id: extra.id, headers, data })
  sendRpcError(res, err.status, RPC.serverError, err.message, { id: extra.id, headers, data })
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
