/** HTTP plumbing of the authorization server: bodies, JSON and OAuth error answers, redirects, cookies. */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { readBody } from '../../core/http/request-body.ts'
import type { ApiError } from '../../core/errors.ts'
import { errorPage, sendPage } from './pages.ts'

const MAX_BODY = 16 * 1024

/** An OAuth error answer (RFC 6749 §5.2): `{"error","error_description"}`. */
export class OAuthError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    description: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(description)
  }
}

/**
 * A JSON answer, `no-store` (with HTTP/1.0's `Pragma: no-cache`, RFC 6749 §5.1) unless `headers` gives its own
 * `Cache-Control` — a cacheable answer (the metadata, the keys) then carries no `Pragma` contradicting it.
 */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body)
  const caching = headers['Cache-Control'] ? {} : { 'Cache-Control': 'no-store', Pragma: 'no-cache' }
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), ...caching, ...headers })
  res.end(text)
}

export function sendOAuthError(res: ServerResponse, e: OAuthError): void {
  sendJson(res, e.status, { error: e.error, error_description: e.message }, e.headers)
}

/**
 * A failure no handler answered (`toApiError`'s classification of it), as the authorization server answers: the
 * database unreachable is 503 with Retry-After and `temporarily_unavailable` (RFC 6749 §4.1.2.1's code for it, used at
 * every endpoint), a fault 500 `server_error`, a value the database refused 400 `invalid_request`. `page`: a browser's request, answered with a page
 * of the same status. Never the cause's text.
 */
export function sendFailure(res: ServerResponse, err: ApiError, page: boolean): void {
  const status = err.status >= 500 ? err.status : 400
  const headers: Record<string, string> = err.extras.retryAfterSeconds !== undefined ? { 'Retry-After': String(err.extras.retryAfterSeconds) } : {}
  const unavailable = status === 503
  if (page) return sendPage(res, status, 'Sign-in failed', errorPage(unavailable ? 'The service is briefly unavailable. Try again in a moment.' : 'The service could not complete the sign-in. Try again in a moment.'), headers)
  const error = unavailable ? 'temporarily_unavailable' : status >= 500 ? 'server_error' : 'invalid_request'
  const description = unavailable ? 'The service is temporarily unavailable; retry shortly.' : status >= 500 ? 'The service could not process the request.' : err.message
  sendJson(res, status, { error, error_description: description }, headers)
}

/** The parameters of an `application/x-www-form-urlencoded` POST body; a parameter given twice is an error. */
export async function readForm(req: IncomingMessage): Promise<Map<string, string>> {
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase()
  if (type !== 'application/x-www-form-urlencoded') throw new OAuthError(400, 'invalid_request', 'The body must be application/x-www-form-urlencoded.')
  const body = await readBody(req, MAX_BODY)
  if (!body.ok) throw 'cut' in body ? new OAuthError(400, 'invalid_request', body.cut) : new OAuthError(413, 'invalid_request', `The body exceeds ${MAX_BODY} bytes.`, { Connection: 'close' })
  return uniqueParams(new URLSearchParams(body.text))
}

/** The JSON object of a POST body (client registration). */
export async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase()
  if (type !== 'application/json') throw new OAuthError(400, 'invalid_client_metadata', 'The body must be application/json.')
  const body = await readBody(req, MAX_BODY)
  if (!body.ok) throw 'cut' in body ? new OAuthError(400, 'invalid_client_metadata', body.cut) : new OAuthError(413, 'invalid_client_metadata', `The body exceeds ${MAX_BODY} bytes.`, { Connection: 'close' })
  let json: unknown
  try {
    json = JSON.parse(body.text)
  } catch {
    throw new OAuthError(400, 'invalid_client_metadata', 'The body is not valid JSON.')
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new OAuthError(400, 'invalid_client_metadata', 'The body must be a JSON object.')
  return json as Record<string, unknown>
}

export function uniqueParams(p: URLSearchParams): Map<string, string> {
  const out = new Map<string, string>()
  for (const [k, v] of p) {
    if (out.has(k)) throw new OAuthError(400, 'invalid_request', `The parameter ${k.slice(0, 40)} is given more than once.`)
    out.set(k, v)
  }
  return out
}

export function queryOf(req: IncomingMessage): Map<string, string> {
  const url = req.url ?? '/'
  const q = url.indexOf('?')
  return uniqueParams(new URLSearchParams(q < 0 ? '' : url.slice(q + 1)))
}

export function redirect(res: ServerResponse, location: string, headers: Record<string, string | string[]> = {}): void {
  res.writeHead(303, { Location: location, 'Cache-Control': 'no-store', 'Content-Length': '0', 'Referrer-Policy': 'no-referrer', ...headers })
  res.end()
}

/** A URL with parameters added to its query. */
export function withParams(base: string, params: Record<string, string | undefined | null>): string {
  const u = new URL(base)
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null) u.searchParams.set(k, v)
  return u.toString()
}

export function cookie(req: IncomingMessage, name: string): string | undefined {
  const header = req.headers.cookie
  if (!header) return undefined
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim()
  }
  return undefined
}

export function setCookie(name: string, value: string, secure: boolean, maxAgeSeconds: number): string {
  return `${name}=${value}; Path=/oauth; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`
}
