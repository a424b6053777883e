/**
 * The one place that knows database error codes: SQLSTATEs from PostgreSQL and the connection codes of
 * postgres.js and node's sockets. Callers ask these predicates, never compare codes themselves.
 *
 * In responses (docs/adr/0014-database-errors-in-responses.md, docs/adr/0110-database-errors.md): a value PostgreSQL rejects while processing a client's input is a
 * 400 with a safe classification hint (the SQLSTATE, never SQL text); a statement cancelled by `statement_timeout` is a
 * 400 too (the request's own cost: charged, not refunded); an unreachable database (a connection lost, refused or
 * shut down, or too many connections) or one whose disk is full is a 503 the client retries; everything else is a 500. `dbFailure` says which;
 * `toApiError` (runtime/core/errors.ts), which every surface renders its errors through, applies it, so no call site has
 * to remember to.
 */

/** Data exceptions caused by client input, with the hint a response may carry. */
const DATA_EXCEPTIONS: Record<string, string> = {
  '22P02': 'invalid text representation',
  '22003': 'numeric value out of range',
  '22007': 'invalid date or time format',
  '22008': 'date or time out of range',
  '22023': 'invalid parameter value',
  '2201B': 'invalid regular expression',
  '22025': 'invalid escape sequence',
  '22021': 'invalid byte sequence',
  '54001': 'statement too complex',
}

/** An established connection that broke (postgres.js and socket codes). */
const CONNECTION_LOST = ['CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'ECONNRESET', 'EPIPE']
/** The server did not accept a connection (refused, or no answer in time). */
const CONNECTION_REFUSED = ['ECONNREFUSED', 'CONNECT_TIMEOUT']
/** No server to connect to: unknown host, no route, no Unix socket file. */
const NO_SERVER = ['ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOENT']

/** A connection never established: nothing was sent, so the statement certainly did not run. */
const NOT_SENT = new Set([...CONNECTION_REFUSED, ...NO_SERVER])
/** Connection codes of a failed connection (with SQLSTATE class 08, and class 57 but for query_canceled). */
const CONNECTION_FAILURE = new Set([...CONNECTION_LOST, ...CONNECTION_REFUSED])
/** too_many_connections: the server is up but refuses more clients for now. */
const TOO_MANY_CONNECTIONS = '53300'
/** deadlock_detected, serialization_failure: the transaction was rolled back entirely. */
const RETRYABLE_TRANSACTION = new Set(['40P01', '40001'])
/** query_canceled: raised by `statement_timeout` (and by a cancel request). */
const QUERY_CANCELED = '57014'
/** disk_full, and the file system's own word for it (the embedded database writes through node:fs). */
const DISK_FULL = new Set(['53100', 'ENOSPC', 'EDQUOT'])

/** The SQLSTATE or driver/socket code of an error; '' when it has none. */
export function errorCode(e: unknown): string {
  return typeof e === 'object' && e !== null ? String((e as { code?: unknown }).code ?? '') : ''
}

/**
 * A database connection failure: SQLSTATE class 08 (connection exception) or 57 (operator intervention: shutdown,
 * crash, cannot connect now) except 57014 (a cancelled statement), or a socket error of a connection.
 */
export function isConnectionFailure(e: unknown): boolean {
  const code = errorCode(e)
  return CONNECTION_FAILURE.has(code) || (/^(08|57)[0-9A-Z]{3}$/.test(code) && code !== QUERY_CANCELED)
}

/** The connection was never established: the statement certainly never reached the server. */
export function isNotSent(e: unknown): boolean {
  return NOT_SENT.has(errorCode(e))
}

/** A deadlock or serialization failure: rolled back entirely, so running it again cannot apply it twice. */
export function isRetryableTransaction(e: unknown): boolean {
  return RETRYABLE_TRANSACTION.has(errorCode(e))
}

/** The statement was cancelled, as `statement_timeout` does to a statement that runs too long. */
export function isStatementTimeout(e: unknown): boolean {
  return errorCode(e) === QUERY_CANCELED
}

/**
 * The database is unreachable for now: a connection failure, a connection that could not be made, or a server refusing
 * more clients (too_many_connections). A client retries shortly; no request was at fault.
 */
export function isUnavailable(e: unknown): boolean {
  return isConnectionFailure(e) || isNotSent(e) || errorCode(e) === TOO_MANY_CONNECTIONS
}

/** The database could not write for want of disk space. */
export function isDiskFull(e: unknown): boolean {
  return DISK_FULL.has(errorCode(e))
}

/** How a database failure shows in an answer: the error registry's code, its detail and extras. */
export interface DbFailure {
  code: 'invalid_filter_value' | 'invalid_parameter' | 'query_too_expensive' | 'service_unavailable'
  detail: string
  extras: { parameter?: string }
}

/**
 * What a failure of a database call shows a client, or undefined for anything that is not one of the database
 * failures a client is told about (a server fault: `internal_error`). `hasFilter`: the request had a filter, so a value
 * the server rejected came from it.
 */
export function dbFailure(e: unknown, hasFilter = false): DbFailure | undefined {
  const code = errorCode(e)
  const hint = DATA_EXCEPTIONS[code]
  if (hint) {
    return { code: hasFilter ? 'invalid_filter_value' : 'invalid_parameter', detail: `A value in the request could not be processed (${hint}, SQLSTATE ${code}).`, extras: hasFilter ? { parameter: 'filter' } : {} }
  }
  if (isStatementTimeout(e)) {
    return { code: 'query_too_expensive', detail: 'The request took too long to evaluate and was cancelled; narrow the filter or the page.', extras: hasFilter ? { parameter: 'filter' } : {} }
  }
  // A full disk is said once in the log (runtime/platform/db/disk-space.ts), never in the answer.
  if (isUnavailable(e) || isDiskFull(e)) return { code: 'service_unavailable', detail: 'The database is temporarily unavailable; retry shortly.', extras: {} }
  return undefined
}
