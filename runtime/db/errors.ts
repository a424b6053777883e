/**
 * The one place that knows database error codes: SQLSTATEs from PostgreSQL and the connection codes of
 * postgres.js and node's sockets. Callers ask these predicates, never compare codes themselves.
 *
 * In responses (docs/decisions.md "Database errors in responses"): a value PostgreSQL rejects while
 * processing a client's input is a 400 with a safe classification hint (the SQLSTATE, never SQL text); a
 * statement cancelled by `statement_timeout` is a 400 too (the request's own cost: charged, not refunded);
 * an unreachable database, or one whose disk is full, is a 503; everything else is a 500.
 */
import { ApiError } from '../errors.ts'

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
/** disk_full, and the OS's own codes of a full disk or quota: nothing can be written until space is freed. */
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

/** The database could not write for want of disk space. */
export function isDiskFull(e: unknown): boolean {
  return DISK_FULL.has(errorCode(e))
}

/** Maps a failure of a request's query to the error its response shows. */
export function classifyDbError(e: unknown, hasFilter: boolean): ApiError {
  if (e instanceof ApiError) return e
  const code = errorCode(e)
  const hint = DATA_EXCEPTIONS[code]
  if (hint) {
    return new ApiError(hasFilter ? 'invalid_filter_value' : 'invalid_parameter', `A value in the request could not be processed (${hint}, SQLSTATE ${code}).`, hasFilter ? { parameter: 'filter' } : {})
  }
  if (isStatementTimeout(e)) {
    return new ApiError('query_too_expensive', 'The request took too long to evaluate and was cancelled; narrow the filter or the page.', hasFilter ? { parameter: 'filter' } : {})
  }
  if (isConnectionFailure(e) || isNotSent(e) || code === TOO_MANY_CONNECTIONS) {
    return new ApiError('service_unavailable', 'The database is temporarily unavailable; retry shortly.')
  }
  if (isDiskFull(e)) {
    // The cause goes to the log (once: runtime/db/disk-space.ts), never into the answer.
    const full = new ApiError('service_unavailable', 'The database is temporarily unavailable; retry shortly.')
    full.cause = e
    return full
  }
  // The cause stays on the error (never in the answer) so that whoever handles it logs what failed.
  const fault = new ApiError('internal_error', 'The server failed to process the request.')
  fault.cause = e
  return fault
}
