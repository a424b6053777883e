/** Rendering of REST responses: JSON bodies, the error envelope, common headers. */
import type { ServerResponse } from 'node:http'
import { type ApiError, errorBody } from '../errors.ts'
import { withRequestId } from './response.ts'

export type Headers = Record<string, string>

/** A body as text, or as byte parts written one after the other (no copy into one buffer). */
export type Body = string | readonly Buffer[]

/** Its length in bytes, for Content-Length. */
export function bodyLength(body: Body): number {
  return typeof body === 'string' ? Buffer.byteLength(body) : body.reduce((n, b) => n + b.length, 0)
}

/** Ends a response whose head is written with the body; parts are corked, so head and parts leave in one writev. */
export function endWithBody(res: ServerResponse, body: Body): void {
  if (typeof body === 'string') return void res.end(body)
  res.cork()
  for (let i = 0; i < body.length - 1; i++) res.write(body[i])
  res.end(body[body.length - 1])
}

/** A JSON answer. */
export function sendJson(res: ServerResponse, status: number, body: Body, headers: Headers = {}): void {
  if (res.headersSent) return
  res.writeHead(status, withRequestId(res, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': bodyLength(body), 'Cache-Control': 'no-store', ...headers }))
  if (res.req.method === 'HEAD') return void res.end()
  endWithBody(res, body)
}

/**
 * 304 Not Modified: the headers of the 200 it stands for (ETag, Cache-Control, version, rate limit), no body.
 * `headers` is this answer's own object (the request id is added to it).
 */
export function sendNotModified(res: ServerResponse, headers: Headers): void {
  if (res.headersSent) return
  res.writeHead(304, withRequestId(res, headers))
  res.end()
}

export function sendError(res: ServerResponse, err: ApiError, headers: Headers = {}): void {
  if (err.extras.bare) {
    // The shedding form: the status alone, no body and no rate-limit headers.
    if (res.headersSent) return
    const bare: Headers = { ...headers, 'Content-Length': '0' }
    for (const k of Object.keys(bare)) if (/^(x-)?ratelimit/i.test(k)) delete bare[k]
    if (err.extras.retryAfterSeconds !== undefined) bare['Retry-After'] = String(err.extras.retryAfterSeconds)
    res.writeHead(err.status, bare)
    return void res.end()
  }
  const extra: Headers = { ...headers, ...(err.extras.headers ?? {}) }
  if (err.extras.retryAfterSeconds !== undefined) extra['Retry-After'] = String(err.extras.retryAfterSeconds)
  sendJson(res, err.status, JSON.stringify(errorBody(err)), extra)
}
