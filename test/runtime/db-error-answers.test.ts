/**
 * Every kind of driver or server error, through the one path from a failure to an answer (`toApiError`,
 * docs/adr/0110-database-errors.md), as each surface's renderer answers it on a real HTTP connection: REST's error
 * envelope, MCP's JSON-RPC error and tool result, and the OAuth endpoints' JSON and pages. A lost, refused or shut-down
 * connection and too many connections are a 503 with Retry-After that a client retries; a statement cancelled for its
 * cost and a value the server refused are the request's own 400; anything else is a 500 that says nothing. No answer
 * carries the driver's text.
 */
import { t } from '../helpers/file-test.ts'
import { createServer, type Server } from 'node:http'
import type { Test } from 'tap'
import type { AddressInfo } from 'node:net'
import { ApiError, toApiError } from '../../runtime/core/errors.ts'
import { sendError } from '../../runtime/core/http/respond.ts'
import { sendRpcApiError } from '../../runtime/surfaces/mcp/http-io.ts'
import { errorResult } from '../../runtime/surfaces/mcp/tool-results.ts'
import { sendFailure } from '../../runtime/platform/oauth/http-util.ts'

/** A driver or server error as postgres.js rejects with it: a code, and a message that must never reach a client. */
const driverError = (code: string | undefined, message: string) => Object.assign(new Error(`${message} (SELECT secret FROM internals)`), code === undefined ? {} : { code })

interface Row {
  what: string
  error: Error
  status: number
  code: string
  /** The MCP tool result's `error`. */
  mcp: string
  /** The OAuth `error`. */
  oauth: string
}

const unavailable = (what: string, code: string, message: string): Row => ({ what, error: driverError(code, message), status: 503, code: 'service_unavailable', mcp: 'server_error', oauth: 'temporarily_unavailable' })

// prettier-ignore
const TABLE: Row[] = [
  unavailable('a connection reset (ECONNRESET)', 'ECONNRESET', 'read ECONNRESET'),
  unavailable('a connection closed under a query (CONNECTION_CLOSED)', 'CONNECTION_CLOSED', 'write CONNECTION_CLOSED 127.0.0.1:5432'),
  unavailable('a refused connection (ECONNREFUSED)', 'ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'),
  unavailable('admin_shutdown (57P01: the backend was terminated)', '57P01', 'terminating connection due to administrator command'),
  unavailable('connection_failure (08006)', '08006', 'connection failure'),
  unavailable('too_many_connections (53300)', '53300', 'sorry, too many clients already'),
  { what: 'query_canceled (57014: statement_timeout)', error: driverError('57014', 'canceling statement due to statement timeout'), status: 400, code: 'query_too_expensive', mcp: 'bad_filter', oauth: 'invalid_request' },
  { what: 'invalid_text_representation (22P02)', error: driverError('22P02', 'invalid input syntax for type bigint: "x"'), status: 400, code: 'invalid_parameter', mcp: 'bad_filter', oauth: 'invalid_request' },
  { what: 'an unknown SQLSTATE (42P01)', error: driverError('42P01', 'relation "internals" does not exist'), status: 500, code: 'internal_error', mcp: 'server_error', oauth: 'server_error' },
  { what: 'an error without a code', error: driverError(undefined, 'boom'), status: 500, code: 'internal_error', mcp: 'server_error', oauth: 'server_error' },
]

/** What no answer may show: the driver's message, SQL, or a stack. */
const LEAK = /SELECT|secret|internals|ECONN|CONNECTION_|57P01|administrator|too many clients|canceling|invalid input|relation|boom|at .*\.ts/

/** A loopback server answering the error of `?row=` as REST (/rest), JSON-RPC (/rpc) and OAuth (/oauth, /oauth-page) do. */
async function rendering(t: Test, errorOf: (row: number) => unknown): Promise<string> {
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost')
    const path = url.pathname
    const err = toApiError(errorOf(Number(url.searchParams.get('row'))))
    if (path === '/rest') sendError(res, err)
    else if (path === '/rpc') sendRpcApiError(res, err, { id: 7 })
    else sendFailure(res, err, path === '/oauth-page')
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  t.teardown(() => new Promise<void>((r) => server.close(() => r())))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

t.test('each kind of database error, as every surface answers it', async (t) => {
  const base = await rendering(t, (row) => TABLE[row].error)
  for (const [i, row] of TABLE.entries()) {
    const get = async (path: string) => {
      const r = await fetch(`${base}${path}?row=${i}`)
      return { status: r.status, retryAfter: r.headers.get('retry-after'), type: r.headers.get('content-type'), text: await r.text() }
    }
    await t.test(row.what, async (t) => {
      const retryAfter = row.status === 503 ? '1' : null
      const err = toApiError(row.error)
      t.same({ status: err.status, code: err.code }, { status: row.status, code: row.code }, 'the shared classification')
      t.equal(err.cause, row.error, 'the cause stays on the error, for the log')

      const rest = await get('/rest')
      t.same({ status: rest.status, retryAfter: rest.retryAfter }, { status: row.status, retryAfter }, 'REST: status and Retry-After')
      t.match(JSON.parse(rest.text), { error: { status: row.status, code: row.code, title: String, detail: String } }, 'REST: the error envelope')

      const rpc = await get('/rpc')
      t.same({ status: rpc.status, retryAfter: rpc.retryAfter }, { status: row.status, retryAfter }, 'MCP JSON-RPC: status and Retry-After')
      const body = JSON.parse(rpc.text)
      t.match(body, { jsonrpc: '2.0', id: 7, error: { code: row.status === 500 ? -32603 : -32000, message: String, data: { status: row.status, code: row.code } } }, 'MCP JSON-RPC: the error')

      const tool = errorResult(err)
      t.equal(tool.isError, true, 'MCP tool result: an error result')
      const sc = tool.structuredContent as Record<string, unknown>
      t.match(sc, { error: row.mcp, reason: row.code, message: String }, 'MCP tool result: its code')
      t.equal(sc.retryable, row.mcp === 'server_error' ? true : undefined, 'MCP tool result: a server error is retryable')

      const oauth = await get('/oauth')
      t.same({ status: oauth.status, retryAfter: oauth.retryAfter }, { status: row.status, retryAfter }, 'OAuth: status and Retry-After')
      t.match(JSON.parse(oauth.text), { error: row.oauth, error_description: String }, 'OAuth: the RFC 6749 error')
      const page = await get('/oauth-page')
      t.same({ status: page.status, retryAfter: page.retryAfter, type: page.type }, { status: row.status, retryAfter, type: 'text/html; charset=utf-8' }, 'OAuth page: status and Retry-After')

      for (const [surface, text] of [['REST', rest.text], ['JSON-RPC', rpc.text], ['tool result', JSON.stringify(tool)], ['OAuth', oauth.text], ['OAuth page', page.text]]) {
        t.notMatch(text, LEAK, `${surface}: nothing of the driver's text`)
      }
    })
  }
})

t.test('a 503 the service raises itself (a deadline passed, the quota unreachable) carries Retry-After on every surface', async (t) => {
  const base = await rendering(t, () => new ApiError('service_unavailable', 'The database did not answer in time; retry shortly.'))
  for (const path of ['/rest', '/rpc', '/oauth', '/oauth-page']) {
    const r = await fetch(base + path)
    t.same({ status: r.status, retryAfter: r.headers.get('retry-after') }, { status: 503, retryAfter: '1' }, path)
  }
  const own = new ApiError('service_unavailable', 'busy', { retryAfterSeconds: 2 })
  t.equal(own.extras.retryAfterSeconds, 2, 'a wait of its own is kept')
})
