/**
 * Maps database failures to API errors (contract §7 three-way split): a value PostgreSQL rejects while
 * processing a client's input is a 400 with a safe classification hint (the SQLSTATE, never SQL text);
 * an unreachable database is a 503; everything else is a 500.
 */
import { ApiError } from '../errors.ts'

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

const UNAVAILABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT', 'ENOENT', 'EPIPE', '57P01', '57P03', '53300'])

export function classifyDbError(e: unknown, hasFilter: boolean): ApiError {
  if (e instanceof ApiError) return e
  const code = typeof e === 'object' && e !== null ? String((e as { code?: unknown }).code ?? '') : ''
  const hint = DATA_EXCEPTIONS[code]
  if (hint) {
    return new ApiError(hasFilter ? 'invalid_filter_value' : 'invalid_parameter', `A value in the request could not be processed (${hint}, SQLSTATE ${code}).`, hasFilter ? { parameter: 'filter' } : {})
  }
  if (UNAVAILABLE.has(code)) return new ApiError('service_unavailable', 'The database is temporarily unavailable; retry shortly.')
  return new ApiError('internal_error', 'The server failed to process the request.')
}
