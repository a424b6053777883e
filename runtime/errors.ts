/**
 * The one error registry of orgscan: a closed union of string codes grouped by
 * pipeline stage, one class, and one code → HTTP status / MCP code table. Every failure a client can
 * see is an `ApiError`; anything else is a server fault and renders as `internal_error` without detail.
 */

/** Every code a client can receive, grouped by the stage that raises it. */
export const ERROR_CODES = {
  // authenticate
  unauthorized: { status: 401, title: 'Unauthorized', mcp: 'access_denied' },
  // org access (docs/contract.md §4.2: 403 for an org of the account the caller may not see)
  forbidden: { status: 403, title: 'Forbidden', mcp: 'access_denied' },
  // quota (docs/contract.md §7, §8)
  rate_limited: { status: 429, title: 'Too Many Requests', mcp: 'rate_limited' },
  // too many failed authentications from one client address: a bare 429 (docs/decisions.md "Authentication under attack")
  authentication_throttled: { status: 429, title: 'Too Many Requests', mcp: 'rate_limited' },
  // fair share: too many requests of one account at once (docs/decisions.md "Fair share")
  concurrency_limited: { status: 429, title: 'Too Many Requests', mcp: 'rate_limited' },
  // parse / plan (docs/contract.md §4.1, §7)
  invalid_parameter: { status: 400, title: 'Bad Request', mcp: 'bad_filter' },
  unknown_parameter: { status: 400, title: 'Bad Request', mcp: 'bad_filter' },
  filter_parse_error: { status: 400, title: 'Bad Request', mcp: 'bad_filter' },
  unknown_filter_field: { status: 400, title: 'Bad Request', mcp: 'bad_filter' },
  invalid_filter_value: { status: 400, title: 'Bad Request', mcp: 'bad_filter' },
  unsupported_filter_operator: { status: 400, title: 'Bad Request', mcp: 'bad_filter' },
  filter_too_complex: { status: 400, title: 'Bad Request', mcp: 'bad_filter' },
  unknown_sort_field: { status: 400, title: 'Bad Request', mcp: 'bad_filter' },
  unknown_field: { status: 400, title: 'Bad Request', mcp: 'bad_filter' },
  invalid_id: { status: 400, title: 'Bad Request', mcp: 'bad_filter' },
  // a statement cancelled for its own cost (statement_timeout): charged like any 4xx, not refunded
  query_too_expensive: { status: 400, title: 'Bad Request', mcp: 'bad_filter' },
  // routing / lookup
  not_found: { status: 404, title: 'Not Found', mcp: 'not_found' },
  method_not_allowed: { status: 405, title: 'Method Not Allowed', mcp: 'bad_filter' },
  gone: { status: 410, title: 'Gone', mcp: 'not_found' },
  payload_too_large: { status: 413, title: 'Payload Too Large', mcp: 'bad_filter' },
  expectation_failed: { status: 417, title: 'Expectation Failed', mcp: 'bad_filter' },
  headers_too_large: { status: 431, title: 'Request Header Fields Too Large', mcp: 'bad_filter' },
  // server faults
  internal_error: { status: 500, title: 'Internal Server Error', mcp: 'server_error' },
  service_unavailable: { status: 503, title: 'Service Unavailable', mcp: 'server_error' },
} as const satisfies Record<string, { status: number; title: string; mcp: McpErrorCode }>

/**
 * The closed set of `structuredContent.error` codes of failed MCP tool calls. `bad_filter` is MCP's one code for a
 * client's invalid query, whatever argument is at fault (docs/decisions.md "MCP errors").
 */
export type McpErrorCode = 'bad_filter' | 'rate_limited' | 'not_found' | 'access_denied' | 'server_error'

export type ErrorCode = keyof typeof ERROR_CODES

/** Extra members rendered into `error` next to status/title/detail/code (e.g. `parameter`, `offset`). */
export interface ErrorExtras {
  /** The query or path parameter at fault, e.g. `filter`, `limit`, `sort`, `fieldId`. */
  parameter?: string
  /** Character offset into the parameter value (RQL parse errors). */
  offset?: number
  /** The filter/sort/fields field name at fault. */
  field?: string
  /** Valid choices, when short enough to list. */
  allowed?: readonly (string | number)[]
  /** Seconds to wait (rate limit). Rendered as Retry-After, not in the body. */
  retryAfterSeconds?: number
  /** The limit that was reached (requests at once, for `concurrency_limited`). */
  limit?: number
  /** The OAuth scope a call lacks (`access_denied`). */
  scope?: string
  /** Answer with the bare status: no body and no rate-limit headers (the shedding form of a 429). */
  bare?: boolean
  /** Extra HTTP headers to send with the error (e.g. WWW-Authenticate, Allow). */
  headers?: Record<string, string>
}

export class ApiError extends Error {
  readonly code: ErrorCode
  readonly status: number
  readonly title: string
  readonly extras: ErrorExtras

  constructor(code: ErrorCode, detail: string, extras: ErrorExtras = {}) {
    super(detail)
    this.name = 'ApiError'
    this.code = code
    this.status = ERROR_CODES[code].status
    this.title = ERROR_CODES[code].title
    this.extras = extras
  }
}

/** The challenge every 401 carries (docs/decisions.md: 401 with `WWW-Authenticate: Basic realm="orgscan"`). */
const CHALLENGE = { 'WWW-Authenticate': 'Basic realm="orgscan", charset="UTF-8"' }

/** A 401: the credential is missing, invalid, revoked, or its account no longer exists. */
export function unauthorized(detail: string): ApiError {
  return new ApiError('unauthorized', detail, { headers: CHALLENGE })
}

export function isApiError(e: unknown): e is ApiError {
  return e instanceof ApiError
}

/** Turns anything thrown into an ApiError; unknown errors become a detail-free internal_error. */
export function toApiError(e: unknown): ApiError {
  if (e instanceof ApiError) return e
  return new ApiError('internal_error', 'The server failed to process the request.')
}

/** The REST error envelope (docs/contract.md §7 fixes status/title/detail for 429). */
export function errorBody(err: ApiError): { error: Record<string, unknown> } {
  const { headers: _h, retryAfterSeconds: _r, bare: _b, ...rest } = err.extras
  return { error: { status: err.status, title: err.title, detail: err.message, code: err.code, ...rest } }
}
