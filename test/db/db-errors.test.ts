/**
 * Database error classification (runtime/core/db/errors.ts) as a table: each code, what every predicate says
 * about it, and the API error a response shows (`toApiError`, the one path every surface renders errors through).
 * Plus a real `statement_timeout` on the test database.
 */
import { t } from '../helpers/file-test.ts'
import { errorCode, isConnectionFailure, isNotSent, isRetryableTransaction, isStatementTimeout } from '../../runtime/core/db/errors.ts'
import { ApiError, ERROR_CODES, toApiError } from '../../runtime/core/errors.ts'
import { openDatabase } from '../../runtime/platform/db/connect.ts'
import { createFreshPostgresDatabase } from '../helpers/test-db.ts'

type Row = [code: string, connectionFailure: boolean, notSent: boolean, retryable: boolean, statementTimeout: boolean, response: string]

// prettier-ignore
const TABLE: Row[] = [
  // data exceptions from client input: 400
  ['22P02', false, false, false, false, 'invalid_parameter'],
  ['22003', false, false, false, false, 'invalid_parameter'],
  ['22007', false, false, false, false, 'invalid_parameter'],
  ['22008', false, false, false, false, 'invalid_parameter'],
  ['22023', false, false, false, false, 'invalid_parameter'],
  ['2201B', false, false, false, false, 'invalid_parameter'],
  ['22025', false, false, false, false, 'invalid_parameter'],
  ['22021', false, false, false, false, 'invalid_parameter'],
  ['54001', false, false, false, false, 'invalid_parameter'],
  // statement_timeout: the request's own cost, 400 (a cancelled statement, not a failed connection)
  ['57014', false, false, false, true, 'query_too_expensive'],
  // rolled back entirely: retried by the quota, 500 in a response
  ['40P01', false, false, true, false, 'internal_error'],
  ['40001', false, false, true, false, 'internal_error'],
  // an established connection broke
  ['CONNECTION_CLOSED', true, false, false, false, 'service_unavailable'],
  ['CONNECTION_ENDED', true, false, false, false, 'service_unavailable'],
  ['CONNECTION_DESTROYED', true, false, false, false, 'service_unavailable'],
  ['ECONNRESET', true, false, false, false, 'service_unavailable'],
  ['EPIPE', true, false, false, false, 'service_unavailable'],
  // never connected: nothing was sent
  ['ECONNREFUSED', true, true, false, false, 'service_unavailable'],
  ['CONNECT_TIMEOUT', true, true, false, false, 'service_unavailable'],
  ['ENOENT', false, true, false, false, 'service_unavailable'],
  ['ENOTFOUND', false, true, false, false, 'service_unavailable'],
  ['EHOSTUNREACH', false, true, false, false, 'service_unavailable'],
  ['ENETUNREACH', false, true, false, false, 'service_unavailable'],
  ['EAI_AGAIN', false, true, false, false, 'service_unavailable'],
  // the server is shutting down, not accepting, or full
  ['57P01', true, false, false, false, 'service_unavailable'],
  ['57P02', true, false, false, false, 'service_unavailable'],
  ['57P03', true, false, false, false, 'service_unavailable'],
  ['53300', false, false, false, false, 'service_unavailable'],
  // connection exceptions (class 08)
  ['08006', true, false, false, false, 'service_unavailable'],
  ['08003', true, false, false, false, 'service_unavailable'],
  // anything else
  ['42P01', false, false, false, false, 'internal_error'],
  ['23505', false, false, false, false, 'internal_error'],
  ['XX000', false, false, false, false, 'internal_error'],
  ['', false, false, false, false, 'internal_error'],
]

t.test('each code: predicates and response', async (t) => {
  for (const [code, connectionFailure, notSent, retryable, statementTimeout, response] of TABLE) {
    const e = Object.assign(new Error('driver message'), { code })
    t.same(
      { code: errorCode(e), connectionFailure: isConnectionFailure(e), notSent: isNotSent(e), retryable: isRetryableTransaction(e), statementTimeout: isStatementTimeout(e), response: toApiError(e, false).code },
      { code, connectionFailure, notSent, retryable, statementTimeout, response },
      code || '(no code)',
    )
  }
})

t.test('what has no code', async (t) => {
  for (const e of [undefined, null, 'text', 42, new Error('boom'), { code: undefined }]) {
    t.equal(errorCode(e), '')
    t.notOk(isConnectionFailure(e) || isNotSent(e) || isRetryableTransaction(e) || isStatementTimeout(e))
    t.equal(toApiError(e, true).code, 'internal_error')
  }
})

t.test('responses never carry the driver message', async (t) => {
  const data = toApiError(Object.assign(new Error('SELECT secret'), { code: '22P02' }), true)
  t.equal(data.code, 'invalid_filter_value', 'a data exception in a filtered request points at the filter')
  t.same(data.extras, { parameter: 'filter' })
  t.match(data.message, /SQLSTATE 22P02/)
  const timeout = toApiError(Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }), true)
  t.equal(timeout.status, 400)
  t.same(ERROR_CODES.query_too_expensive, { status: 400, title: 'Bad Request', mcp: 'bad_filter' })
  t.match(timeout.message, /took too long to evaluate and was cancelled/)
  t.same(timeout.extras, { parameter: 'filter' }, 'a filtered request that ran too long points at the filter')
  t.same(toApiError(Object.assign(new Error('x'), { code: '57014' }), false).extras, {}, 'an unfiltered one at nothing')
  for (const e of [data, timeout, toApiError({ code: 'ECONNRESET' }, false), toApiError({ code: '42P01' }, false)]) {
    t.notMatch(e.message, /SELECT|secret|canceling|driver/)
  }
  const api = new ApiError('not_found', 'x')
  t.equal(toApiError(api, false), api, 'an ApiError passes through')
})

const PG = process.env.TEST_DATABASE_URL
// Embedded PGlite does not enforce statement_timeout (pg_sleep(2) completes under a 50 ms timeout): PostgreSQL only.
t.test('a real statement_timeout is classified as query_too_expensive', { skip: PG ? false : 'needs TEST_DATABASE_URL (PostgreSQL)' }, async (t) => {
  const where = await createFreshPostgresDatabase(PG!)
  t.teardown(() => where.drop())
  const db = await openDatabase({ databaseUrl: where.databaseUrl })
  t.teardown(() => db.close())
  const err = await db.sql
    .begin(async (sql) => {
      await sql`SET LOCAL statement_timeout = 50`
      await sql`SELECT pg_sleep(2)`
    })
    .then(() => undefined, (e: unknown) => e)
  t.ok(isStatementTimeout(err), `SQLSTATE ${errorCode(err)}`)
  t.equal(toApiError(err, false).code, 'query_too_expensive')
})
