/**
 * The one error registry of orgscan: a closed union of string codes grouped by
 * pipeline stage, one class, and one code → HTTP status / MCP code table. Every failure a client can
 * see is an `ApiError`; anything else is turned into one by `toApiError` — a database failure as its classification
 * says (runtime/core/db/errors.ts), any other fault as `internal_error` without detail.
 */
import { dbFailure } from './db/errors.ts'

/** Every code a client can receive, grouped by the stage that raises it. */
export const ERROR_CODES = {
  // authenticate
  unauthorized: { status: 401, title: 'Unauthorized', mcp: 'access_denied' },
  // org access (docs/contract.md §4.2: 403 for an org of the account the caller may not see)
  forbidden: { status: 403, title: 'Forbidden', mcp: 'access_denied' },
  // quota (docs/contract.md §7, §8)
  rate_limited: { status: 429, title: 'Too Many Requests', mcp: 'rate_limited' },
  // too many failed authentications from one client address: a bare 429 (docs/adr/0021-authentication-under-attack.md)
  authentication_throttled: { status: 429, title: 'Too Many Requests', mcp: 'rate_limited' },
  // fair share: a read that could not start in time (docs/adr/0100-fair-share.md)
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
  // the database unreachable, or busy: retried after `retryAfterSeconds` unless the error names its own wait
  service_unavailable: { status: 503, title: 'Service Unavailable', mcp: 'server_error', retryAfterSeconds: 1 },
  // MCP only: a tool asked its caller (sampling, elicitation) and got no usable answer (docs/adr/0190-mcp-client-requests.md)
  client_request_failed: { status: 502, title: 'Bad Gateway', mcp: 'server_error' },
} as const satisfies Record<string, { status: number; title: string; mcp: McpErrorCode; retryAfterSeconds?: number }>

/**
 * The closed set of `structuredContent.error` codes of failed MCP tool calls. `bad_filter` is MCP's one code for a
 * client's invalid query, whatever argument is at fault (docs/adr/0024-mcp-errors-quota-and-payload.md).
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
    const entry: { status: number; title: string; retryAfterSeconds?: number } = ERROR_CODES[code]
    this.status = entry.status
    this.title = entry.title
    // A code with a wait of its own (a 503) always carries one, so that every surface's renderer sends Retry-After.
    this.extras = entry.retryAfterSeconds !== undefined && extras.retryAfterSeconds === undefined ? { ...extras, retryAfterSeconds: entry.retryAfterSeconds } : extras
  }
}

/**
 * The challenge every 401 carries (docs/adr/0003-error-envelope-and-status-codes.md: 401 with
 * `WWW-Authenticate: Basic realm="orgscan"`).
 */
const CHALLENGE = { 'WWW-Authenticate': 'Basic realm="orgscan", charset="UTF-8"' }

/** A 401: the credential is missing, invalid, revoked, or its account no longer exists. */
export function unauthorized(detail: string): ApiError {
  return new ApiError('unauthorized', detail, { headers: CHALLENGE })
}

export function isApiError(e: unknown): e is ApiError {
  return e instanceof ApiError
}

/**
 * Turns anything thrown into an ApiError: the one path from a failure to an answer, for every surface (REST, MCP's
 * JSON-RPC errors and tool results, OAuth). A database or driver error becomes what its classification says
 * (runtime/core/db/errors.ts `dbFailure`: a lost or refused connection is a retryable 503); anything else a detail-free
 * internal_error. The failure stays on the result as `cause` (never in the answer), for whoever logs it. `hasFilter`:
 * the request had a filter, so a value the database rejected came from it.
 */
export function toApiError(e: unknown, hasFilter = false): ApiError {
  if (e instanceof ApiError) return e
  const db = dbFailure(e, hasFilter)
  const err = db ? new ApiError(db.code, db.detail, db.extras) : new ApiError('internal_error', 'The server failed to process the request.')
  err.cause = e
  return err
}

/** The REST error envelope (docs/contract.md §7 fixes status/title/detail for 429). */
export function errorBody(err: ApiError): { error: Record<string, unknown> } {
  const { headers: _h, retryAfterSeconds: _r, bare: _b, ...rest } = err.extras
  return { error: { status: err.status, title: err.title, detail: err.message, code: err.code, ...rest } }
}

/** What each code means and what a client does about it (the generated error reference, docs/reference/errors.md). */
export const ERROR_HELP: Record<ErrorCode, { meaning: string; remedy: string }> = {
  unauthorized: { meaning: 'The credentials are missing, malformed, unknown, wrong, revoked or expired, or the access token was issued for the other resource (the REST API or the MCP endpoint; `detail` names both).', remedy: 'Send `Authorization: Basic` with an API key id and secret, or `Bearer` with a valid access token; refresh or sign in again; for another resource, ask for a token with `resource` set to this one.' },
  forbidden: { meaning: 'The caller may not see this org (a user who was not granted it), or its token lacks a scope.', remedy: 'Ask an administrator to grant the org (`orgscan users grant`) or the scope.' },
  rate_limited: { meaning: "The account's daily or monthly quota is spent.", remedy: 'Wait `Retry-After` seconds (the window resets at `X-RateLimit-Reset`), or ask for a higher limit.' },
  authentication_throttled: { meaning: 'Too many failed authentications from this address; answered with a bare 429 (no body).', remedy: 'Fix the credentials, then retry after `Retry-After` seconds.' },
  concurrency_limited: { meaning: "The request's read could not start in time (`ORGSCAN_ACCOUNT_QUEUE_WAIT_MS`): the account's share of the process's database connections, or all of them, stayed busy, or too many of its requests were already waiting.", remedy: 'Retry after `Retry-After` seconds with fewer requests in parallel; the unit is not charged.' },
  invalid_parameter: { meaning: 'A parameter has a value of the wrong type or out of range, or a single-valued one was repeated, or a `sort` or `fields` entry was given twice (`parameter` names it).', remedy: 'Correct the value; see the endpoint reference.' },
  unknown_parameter: { meaning: 'The endpoint takes no parameter of that name (`allowed` lists those it takes).', remedy: 'Remove it; parameters are case-sensitive.' },
  filter_parse_error: { meaning: 'The RQL filter is not well formed; `offset` points at the problem.', remedy: 'Fix the syntax at `offset` (docs/rql.md).' },
  unknown_filter_field: { meaning: 'The filter names a field that cannot be filtered on; `allowed` lists those that can.', remedy: 'Use one of `allowed`.' },
  invalid_filter_value: { meaning: "A filter value does not fit its field's type or values (`field`, `offset`).", remedy: 'Use a value of the right type; enumerated values are listed in the reference and at the MCP `resource://filter-values/…` resources.' },
  unsupported_filter_operator: { meaning: "The operator does not apply to the field's type (e.g. `ilike` on a number).", remedy: 'Use an operator the field supports (docs/rql.md).' },
  filter_too_complex: { meaning: 'The filter exceeds a cost bound (depth, terms, patterns, wildcards, pattern length).', remedy: 'Simplify it; the limits are in docs/rql.md.' },
  unknown_sort_field: { meaning: 'The sort names a field that cannot be sorted on; `allowed` lists the sortable fields.', remedy: 'Use fields of `allowed`, each once, `-` for descending.' },
  unknown_field: { meaning: '`fields` names a field the record does not have; `allowed` lists them.', remedy: 'Use fields of `allowed`, each once.' },
  invalid_id: { meaning: 'An id in the path is malformed (an org id that is not 15 or 18 letters and digits, a non-integer record id, a bad issue key); `detail` says what is wrong with it.', remedy: 'Use the id exactly as the list shows it.' },
  query_too_expensive: { meaning: 'The query was cancelled after the statement timeout; it is charged.', remedy: 'Narrow the filter (fewer wildcards, a more selective field) or page with a smaller limit.' },
  not_found: { meaning: 'No such endpoint, record or org for this caller (an org of another account is also 404, and an 18-character org id whose checksum does not match, which `detail` says), or the org has no completed scan.', remedy: 'Check the path and id; list the parent collection to find valid ids.' },
  method_not_allowed: { meaning: 'The API is read-only: the endpoint takes GET and HEAD only (`Allow` lists them).', remedy: 'Use GET.' },
  gone: { meaning: 'The API version has reached its sunset date and is removed.', remedy: 'Move to the current version listed at `GET /`.' },
  payload_too_large: { meaning: 'The request body exceeds the limit: a GET or HEAD takes none; an MCP message at most ORGSCAN_MCP_MAX_BODY_BYTES.', remedy: 'Send the parameters in the query string (REST), or a smaller message (MCP).' },
  expectation_failed: { meaning: 'An `Expect` header other than `100-continue`.', remedy: 'Remove the header.' },
  headers_too_large: { meaning: 'The request head (the URL and the headers) exceeds 20 KB.', remedy: 'Send smaller headers.' },
  internal_error: { meaning: 'An unexpected server fault; nothing about it is disclosed; the unit is given back.', remedy: 'Retry later; report it if it persists.' },
  client_request_failed: { meaning: "MCP only: a tool asked the client during the call (sampling or elicitation, in a 2025-era session) and got no usable answer: none within ORGSCAN_MCP_CLIENT_ANSWER_MS, an error, an answer of the wrong shape, or the call's stream closed first.", remedy: 'Call the tool again and answer its request (the MCP result is `server_error` with `retryable: true`).' },
  service_unavailable: { meaning: 'The database is unreachable for the moment (a connection lost, refused or shut down, too many clients) or cannot write (its disk is full) or the request timed out waiting for it; the unit is given back.', remedy: 'Retry after `Retry-After` seconds (MCP: the tool result is `server_error` with `retryable: true`).' },
}
