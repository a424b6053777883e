/**
 * The MCP endpoint, Streamable HTTP at `/v1/mcp` (and the unversioned `/mcp` while its lifecycle allows):
 *
 * - POST carries JSON-RPC messages. Order: the version's lifecycle (410 once sunset), Host/Origin (403), the body
 *   (413 over the limit, 400 with −32700 for malformed JSON), authentication of this very request (401 or the
 *   bare 429 of the pipeline), then the SDK. 2025-era clients (`initialize` handshake) get a session: the answer
 *   to `initialize` carries `Mcp-Session-Id`, later requests must send it (400 without it, 404 when unknown,
 *   expired, ended or another account's). 2026-07-28 clients have no sessions.
 * - DELETE ends the caller's session (200; 404 when there is none).
 * - GET answers 405 with `Allow: POST, DELETE`: no server-sent-event stream is offered. A POST's answer is one JSON
 *   body, or an event stream when a tool call sends messages before its result: log messages (logging.ts), progress
 *   notifications, requests to the client (call-io.ts, client-requests.ts). The client's answer to such a request is
 *   a POST of a JSON-RPC response in the same session, answered 202.
 * - A browser on an origin the Host/Origin policy accepts gets CORS answers, its preflight included
 *   (runtime/core/http/cors.ts); any other origin is 403.
 * No API-version header is sent on MCP responses: MCP reports deprecation in `server_info`, except on the
 * unversioned `/mcp`, which carries `Deprecation` and `Sunset` until it is removed.
 */
import { notePrincipal } from '../../core/http/request-facts.ts'
import type { IncomingMessage, ServerResponse } from 'node:http'
import FindMyWay, { type HTTPMethod, type HTTPVersion } from 'find-my-way'
import { classifyInboundRequest, createMcpHandler, isInitializeRequest, isJsonContentType, SUPPORTED_PROTOCOL_VERSIONS, type JSONRPCMessage } from '@modelcontextprotocol/server'
import { toApiError } from '../../core/errors.ts'
import { authorizationOf } from '../../core/http/authorization.ts'
import type { Principal } from '../../core/principal.ts'
import type { ServiceContext } from '../../core/service-context.ts'
import { versionState } from '../../core/version-state.ts'
import { RPC, sendRpcApiError, sendRpcError, sendWebResponse, toWebRequest } from './http-io.ts'
import { readBody } from '../../core/http/request-body.ts'
import { refuseHostOrOrigin } from './origin.ts'
import { authInfoOf, dispatchTool, createMcpServer, type McpCatalog, type McpServerDeps, type RequestExtra } from './server.ts'
import type { McpTool } from './resource-tools.ts'
import { LegacyMux } from './legacy-mux.ts'
import { RawJson, spliceRawJson } from './tool-results.ts'
import { releaseWhenWritten } from '../../core/http/response-done.ts'
import { bodyLength, endWithBody, type Body } from '../../core/http/respond.ts'
import { withRequestId } from '../../core/http/response.ts'
import { applyCors, exposeTo, MCP_CORS } from '../../core/http/cors.ts'
import { CREDENTIAL_BUSY, sessionKey, type LiveSession, type McpSessions } from './sessions.ts'
import { isJsonObject } from '../../core/json-object.ts'
import { CallLog } from './logging.ts'
import { StreamedAnswer } from './event-stream.ts'
import { progressReport, progressTokenOf, type CallIo } from './call-io.ts'
import { clientAbilities, ClientRequests, isClientAnswer } from './client-requests.ts'

/** The unversioned `/mcp` was deprecated when `/v1/mcp` launched and removed on this date (00:00 UTC). */
export const UNVERSIONED_SUNSET = '2026-06-25'

export const MCP_METHODS = 'POST, DELETE'
const ALL_METHODS: HTTPMethod[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']

export interface McpEndpointDeps {
  ctx: ServiceContext
  catalog: McpCatalog
  sessions: McpSessions
  /** Counts tool calls (runtime/platform/metrics.ts); optional. */
  metrics?: McpServerDeps['metrics']
}

/** `version`: the major a served request called (recorded against its caller); none for the unversioned `/mcp`. */
type Lifecycle = { gone: false; headers: Record<string, string>; version?: string } | { gone: true; unreleased?: boolean }

/**
 * The message, when the SDK's `classifyInboundRequest` would certainly call it 2025-era ("legacy", no envelope
 * claim), decided without it: it checks the body against several schemas (about a tenth of a cached tool call's CPU).
 * Only what it cannot classify otherwise: a request (the exact keys of a JSON-RPC request, a string or integer id, a
 * method other than `initialize`, params an object without `_meta`, where the 2026 envelope would be) sent with an
 * MCP-Protocol-Version header naming a 2025-era version exactly. Anything else (undefined) goes to the SDK.
 */
export function plainLegacyCall(body: unknown, version: string | string[] | undefined): PlainRequest | undefined {
  if (typeof version !== 'string' || !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return undefined
  const m = plainRequest(body)
  if (!m || m.method === 'initialize') return undefined
  const p = m.params
  return p === undefined || (isJsonObject(p) && !Object.hasOwn(p, '_meta')) ? m : undefined
}

export type PlainRequest = { jsonrpc: '2.0'; id: string | number; method: string; params?: unknown }

/** A JSON-RPC 2.0 request of exactly jsonrpc, id (a string or an integer), method and params (optional); else undefined. */
function plainRequest(body: unknown): PlainRequest | undefined {
  if (!isJsonObject(body)) return undefined
  for (const k in body) if (k !== 'jsonrpc' && k !== 'id' && k !== 'method' && k !== 'params') return undefined
  const m = body as Partial<Record<keyof PlainRequest, unknown>>
  if (m.jsonrpc !== '2.0' || typeof m.method !== 'string' || (typeof m.id !== 'string' && !Number.isSafeInteger(m.id))) return undefined
  return m as PlainRequest
}

/**
 * The tool and arguments of a plain 2025-era `tools/call` (`plainLegacyCall`) the endpoint may answer itself, without
 * the SDK's `Server` (about 40 % of a cached call's CPU: its request and result schemas, an abort controller, a
 * context and promise hops per request): params of exactly `name`, naming a tool of the catalog, and, if present,
 * `arguments`, a JSON object — what the SDK's request schema accepts. Anything else (an unknown tool, a task,
 * arguments of another type) is the SDK's to answer or refuse. The answer is the one the SDK would give, byte for
 * byte (`dispatchTool` is shared; test/mcp/mcp-direct-calls.test.ts compares the two for every tool), except that the SDK
 * would check a result against its schema, which the catalog's results are built to pass.
 */
export function directToolCall(m: PlainRequest, tools: ReadonlyMap<string, McpTool>): { tool: McpTool; args: Record<string, unknown> | undefined } | undefined {
  if (m.method !== 'tools/call' || !isJsonObject(m.params)) return undefined
  const p = m.params
  for (const k in p) if (k !== 'name' && k !== 'arguments') return undefined
  const tool = typeof p.name === 'string' ? tools.get(p.name) : undefined
  if (!tool || (Object.hasOwn(p, 'arguments') && !isJsonObject(p.arguments))) return undefined
  return { tool, args: p.arguments as Record<string, unknown> | undefined }
}

/**
 * The Streamable HTTP transport's media checks of a POST, as the SDK's own transport makes them: the body declared JSON
 * (else 415) and both JSON and event streams accepted (else 406). True when the request was refused (answered).
 */
function refusedMediaTypes(req: IncomingMessage, res: ServerResponse, id: unknown, headers: Record<string, string>): boolean {
  if (!isJsonContentType(req.headers['content-type'])) {
    sendRpcError(res, 415, RPC.invalidRequest, 'Unsupported Media Type: Content-Type must be application/json.', { id, headers })
    return true
  }
  const accept = req.headers.accept ?? ''
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
    sendRpcError(res, 406, RPC.invalidRequest, 'Not Acceptable: the client must accept both application/json and text/event-stream.', { id, headers })
    return true
  }
  return false
}

/** A JSON-RPC request id: what an error answer repeats once the message is read. */
type RpcId = string | number

/** The id of a single JSON-RPC message (a string or a number); anything else is no id an answer may repeat. */
function rpcIdOf(body: unknown): RpcId | undefined {
  const id = isJsonObject(body) ? body.id : undefined
  return typeof id === 'string' || typeof id === 'number' ? id : undefined
}

/** A 200 JSON-RPC answer: text, or byte parts written one after the other in one corked write. */
function writeAnswer(res: ServerResponse, body: Body, headers: Record<string, string>): void {
  res.writeHead(200, withRequestId(res, { 'Content-Type': 'application/json', 'Content-Length': bodyLength(body), 'Cache-Control': 'no-store', ...headers }))
  endWithBody(res, body)
}

export function buildMcpRouter(d: McpEndpointDeps) {
  const { ctx } = d
  const { config, clock, pipeline, log } = ctx
  const serverDeps: McpServerDeps = { catalog: d.catalog, pipeline, clock, log, metrics: d.metrics, setLogLevel: (p, sid, level) => d.sessions.setLogLevel(p, sid, level) }
  const policy = { bindHost: config.host, allowedHosts: config.mcp.allowedHosts, allowedOrigins: config.mcp.allowedOrigins }
  const modern = createMcpHandler(
    () => createMcpServer(serverDeps, true),
    { legacy: 'reject', maxRequestBodySize: config.mcp.maxBodyBytes, onerror: (err) => log.warn({ msg: 'mcp: request rejected', err: err.message }) },
  )

  // One server for every 2025-era request of this process (legacy-mux.ts); sessions are ours (McpSessions).
  const mux = new LegacyMux()
  // The requests 2025-era tool calls of this process sent their clients, waiting for the answers.
  const clientRequests = new ClientRequests(config.mcp.clientAnswerMs)
  const legacyServer = createMcpServer(serverDeps)
  const connected = legacyServer.connect(mux)

  const lifecycle = (unversioned: boolean): Lifecycle => {
    if (unversioned) {
      const sunset = Date.parse(`${UNVERSIONED_SUNSET}T00:00:00Z`)
      if (clock() >= sunset) return { gone: true }
      return { gone: false, headers: { Deprecation: 'true', Sunset: new Date(sunset).toUTCString() } }
    }
    // The table in memory (runtime/platform/versions/live.ts); a major not in it was never released.
    const st = versionState(ctx.versions.rows('mcp'), 'v1', clock).state
    if (st === 'removed' || st === 'unknown') return { gone: true, unreleased: st === 'unknown' }
    return { gone: false, headers: {}, version: 'v1' }
  }

  async function authenticate(req: IncomingMessage, res: ServerResponse, headers: Record<string, string>, version: string | undefined, id?: RpcId): Promise<Principal | undefined> {
    const authorization = authorizationOf(req)
    try {
      const p = await pipeline.authenticate(authorization, req.socket, 'mcp', version)
      notePrincipal(req, p)
      return p
    } catch (e) {
      const err = toApiError(e)
      if (err.extras.bare) {
        res.writeHead(err.status, { 'Content-Length': '0', ...(err.extras.retryAfterSeconds ? { 'Retry-After': String(err.extras.retryAfterSeconds) } : {}) })
        res.end()
        return undefined
      }
      const challenge: Record<string, string> = err.status === 401 ? { 'WWW-Authenticate': ctx.challenge('mcp', authorization, 'invalid_token', err.message) } : {}
      sendRpcApiError(res, err, { id, headers: { ...headers, ...challenge } })
      return undefined
    }
  }

  /**
   * Enhanced MCP Security (an account setting): only OAuth tokens of clients the administrator issued for the
   * account are accepted at the MCP endpoint; an API key or another client's token is 403.
   */
  function refusedByAccount(p: Principal): string | undefined {
    if (!p.enhancedMcpSecurity) return undefined
    if (p.method === 'api_key') return 'This account requires Enhanced MCP Security: sign in with OAuth through a client your administrator issued; API keys are not accepted here.'
    if (p.client?.issuedFor !== p.accountId) return 'This account requires Enhanced MCP Security: this OAuth client was not issued by its administrator.'
    return undefined
  }

  async function authorized(req: IncomingMessage, res: ServerResponse, headers: Record<string, string>, version: string | undefined, id?: RpcId): Promise<Principal | undefined> {
    const p = await authenticate(req, res, headers, version, id)
    if (!p) return undefined
    const refused = refusedByAccount(p)
    if (refused) {
      sendRpcError(res, 403, RPC.serverError, refused, { id, headers, data: { status: 403, code: 'forbidden' } })
      return undefined
    }
    return p
  }

  /** `seen.id`: the message's id once its body is parsed, for the answers of the endpoint's last catch. */
  async function post(req: IncomingMessage, res: ServerResponse, headers: Record<string, string>, version: string | undefined, seen: { id?: RpcId }): Promise<void> {
    const read = await readBody(req, config.mcp.maxBodyBytes)
    if (!read.ok) {
      if ('cut' in read) return sendRpcError(res, 400, RPC.parseError, `Parse error: ${read.cut}`, { headers })
      return sendRpcError(res, 413, RPC.invalidRequest, `The request body exceeds ${config.mcp.maxBodyBytes} bytes.`, { headers: { ...headers, Connection: 'close' } })
    }
    let body: unknown
    try {
      body = JSON.parse(read.text)
    } catch {
      return sendRpcError(res, 400, RPC.parseError, 'Parse error: the body is not valid JSON.', { headers })
    }
    seen.id = rpcIdOf(body)
    const principal = await authorized(req, res, headers, version, seen.id)
    if (!principal) return
    const plain = plainLegacyCall(body, req.headers['mcp-protocol-version'])
    if (plain) return legacy(req, res, headers, body, principal, plain)
    const header = (name: string) => (typeof req.headers[name] === 'string' ? (req.headers[name] as string) : undefined)
    const route = classifyInboundRequest({
      httpMethod: 'POST',
      protocolVersionHeader: header('mcp-protocol-version'),
      mcpMethodHeader: header('mcp-method'),
      mcpNameHeader: header('mcp-name'),
      body,
    })
    if (route.kind !== 'legacy') {
      // The transport's checks of the 2025 era hold in the 2026 era too (the SDK's handler does not make them).
      if (refusedMediaTypes(req, res, seen.id, headers)) return
      return sendWebResponse(res, await modern.fetch(toWebRequest(req), { parsedBody: body, authInfo: authInfoOf(principal) }), { 'Cache-Control': 'no-store', ...headers })
    }
    return legacy(req, res, headers, body, principal)
  }

  /**
   * What a 2025-era tool call of `session` may send besides its result, on its answer `res`: log messages at the
   * session's level, progress when the request carries a token, requests for what the client declared it answers.
   * Undefined when none applies (the call then builds no stream).
   */
  function callIo(res: ServerResponse, headers: Record<string, string>, session: LiveSession, sessionId: string, params: unknown): { call: CallIo; stream: StreamedAnswer } | undefined {
    const level = session.logLevel
    const token = progressTokenOf(params)
    const abilities = session.abilities
    if (level === undefined && token === undefined && abilities === undefined) return undefined
    const stream = new StreamedAnswer(res, headers)
    const call: CallIo = {}
    if (level !== undefined) call.log = new CallLog(level, (p) => stream.notify({ jsonrpc: '2.0', method: 'notifications/message', params: p }))
    if (token !== undefined) call.progress = progressReport(token, (p) => stream.notify({ jsonrpc: '2.0', method: 'notifications/progress', params: p }))
    if (abilities) call.asker = clientRequests.asker(stream, sessionKey(sessionId), abilities)
    return { call, stream }
  }

  /**
   * A 2025-era message, checked as the SDK's Streamable HTTP transport checks it, then served by the shared server —
   * or, for a plain tool call (`plain`: what `plainLegacyCall` found), by the endpoint itself (`directToolCall`).
   */
  async function legacy(req: IncomingMessage, res: ServerResponse, headers: Record<string, string>, body: unknown, principal: Principal, plain?: PlainRequest): Promise<void> {
    const id = rpcIdOf(body)
    if (!isJsonObject(body)) {
      return sendRpcError(res, 400, RPC.invalidRequest, 'Invalid Request: one JSON-RPC message per request (no batches).', { headers })
    }
    if (refusedMediaTypes(req, res, id, headers)) return
    // A request naming `initialize` needs no session; the server answers malformed params with −32602 (and no session).
    const initializing = (body as { method?: unknown }).method === 'initialize' && Object.hasOwn(body, 'id')
    // The SDK's check parses the whole message with its schema (about 15 µs); only a message naming the method can pass it.
    const initialize = initializing && isInitializeRequest(body)
    let session: LiveSession | undefined
    let sessionId: string | undefined
    if (!initializing) {
      const version = req.headers['mcp-protocol-version']
      if (typeof version === 'string' && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
        return sendRpcError(res, 400, RPC.invalidRequest, `Bad Request: unsupported protocol version ${version.slice(0, 32)} (supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}).`, { id, headers })
      }
      const header = req.headers['mcp-session-id']
      if (typeof header !== 'string') return sendRpcError(res, 400, RPC.invalidRequest, 'Bad Request: Mcp-Session-Id header is required; send initialize first.', { id, headers })
      sessionId = header
      session = await d.sessions.check(principal, sessionId)
      if (!session) return sendRpcError(res, 404, RPC.sessionNotFound, 'Session not found: it ended or expired; initialize a new one.', { id, headers })
    }
    // The client's answer to a request one of the session's tool calls sent it: routed to that call, if it still waits.
    if (session && isClientAnswer(body)) {
      clientRequests.answer(sessionKey(sessionId!), body)
      res.writeHead(202, { 'Content-Length': '0', ...headers })
      return void res.end()
    }
    // A tool call that may send messages before its result (log messages, progress, requests to the client) answers as
    // an event stream from the first one on.
    const io = session && (body as { method?: unknown }).method === 'tools/call' ? callIo(res, headers, session, sessionId!, (body as { params?: unknown }).params) : undefined
    const stream = io?.stream
    const rawJson = new RawJson()
    try {
      const direct = plain && directToolCall(plain, d.catalog.tools)
      let answer: JSONRPCMessage | undefined
      if (direct) {
        // The SDK's answer: {result, jsonrpc, id}, in that order.
        answer = { result: await dispatchTool(serverDeps, direct.tool.definition.name, direct.args, principal, rawJson, io?.call), jsonrpc: '2.0', id: id as string | number } as JSONRPCMessage
      } else {
        await connected
        const auth = authInfoOf(principal)
        const extra: RequestExtra = { ...auth.extra, rawJson, sessionId }
        if (io) extra.io = io.call
        auth.extra = extra as Record<string, unknown>
        answer = await mux.dispatch(body as JSONRPCMessage, auth)
      }
      if (stream?.started) return stream.end(answer ? spliceRawJson(answer, rawJson) : '')
      if (!answer) {
        res.writeHead(202, { 'Content-Length': '0', ...headers })
        return void res.end()
      }
      const extra: Record<string, string> = { ...headers }
      if (initialize && !('error' in answer)) {
        const params = (body as { params: { protocolVersion: string; capabilities?: unknown; clientInfo?: { name?: string; version?: string } } }).params
        const sid = await d.sessions.create(principal, { protocolVersion: params.protocolVersion, clientName: params.clientInfo?.name, clientVersion: params.clientInfo?.version, abilities: clientAbilities(params.capabilities) })
        if (sid === CREDENTIAL_BUSY) {
          const n = Math.min(config.mcp.sessionsPerCredential, config.mcp.sessionsPerAccount)
          return sendRpcError(res, 429, RPC.serverError, `This credential already has ${n} open MCP sessions, the most it may hold, and each was opened or used in the last ${Math.ceil(d.sessions.busyWithinMs / 1000)} seconds. End one (HTTP DELETE with its Mcp-Session-Id) or retry later: an idle one then makes room.`, { id, headers: { ...headers, 'Retry-After': String(Math.ceil(d.sessions.busyWithinMs / 1000)) } })
        }
        if (!sid) {
          const n = config.mcp.sessionsPerAccount
          return sendRpcError(res, 429, RPC.serverError, `This account already has ${n} open MCP sessions, the most it may hold. End unused ones (HTTP DELETE with their Mcp-Session-Id) or let them expire after ${config.mcp.sessionIdleMs >= 60_000 ? `${Math.round(config.mcp.sessionIdleMs / 60_000)} idle minutes` : `${Math.ceil(config.mcp.sessionIdleMs / 1000)} idle seconds`}.`, { id, headers })
        }
        extra['Mcp-Session-Id'] = sid
      }
      writeAnswer(res, spliceRawJson(answer, rawJson), extra)
    } catch (e) {
      // Once streaming, no status can be sent: the stream ends with the error the endpoint's last catch would answer.
      if (!stream?.started) throw e
      const err = toApiError(e)
      log.error({ msg: 'mcp: request failed', err: err.cause ?? e })
      stream.end(JSON.stringify({ jsonrpc: '2.0', id: id ?? null, error: { code: RPC.internalError, message: 'Internal error.', data: { status: err.status, code: err.code } } }))
    } finally {
      // Records lent by the response cache are given back once the socket has taken them (at once if unwritten).
      if (rawJson.lends) releaseWhenWritten(res, () => rawJson.releaseAll())
    }
  }

  async function del(req: IncomingMessage, res: ServerResponse, headers: Record<string, string>, version: string | undefined): Promise<void> {
    const principal = await authorized(req, res, headers, version)
    if (!principal) return
    const sid = req.headers['mcp-session-id']
    if (typeof sid !== 'string') return sendRpcError(res, 400, RPC.invalidRequest, 'Bad Request: Mcp-Session-Id header is required.', { headers })
    if (!(await d.sessions.end(principal, sid))) return sendRpcError(res, 404, RPC.sessionNotFound, 'Session not found.', { headers })
    res.writeHead(200, { 'Content-Length': '0', ...headers })
    res.end()
  }

  const handle = (unversioned: boolean) => (req: IncomingMessage, res: ServerResponse) => {
    const refused = refuseHostOrOrigin(req, policy)
    // An origin the policy accepts may read every answer, a lifecycle's included; its preflight is answered here.
    const origin = req.headers.origin
    if (!refused && origin !== undefined && applyCors(req, res, origin, MCP_CORS)) return
    const life = lifecycle(unversioned)
    if (life.gone && life.unreleased) return sendRpcError(res, 404, RPC.serverError, 'MCP version v1 is not released; GET / lists the versions.')
    if (life.gone) {
      const why = unversioned ? 'This MCP endpoint has reached its sunset date and is no longer served; use /v1/mcp.' : 'MCP version v1 has reached its sunset date and is no longer served; GET / lists the versions.'
      return sendRpcError(res, 410, RPC.serverError, why)
    }
    const headers = life.headers
    if (refused) return sendRpcError(res, 403, RPC.serverError, `Forbidden: ${refused}`, { headers })
    if (req.method !== 'POST' && req.method !== 'DELETE') {
      const why = req.method === 'GET' || req.method === 'HEAD' ? 'this server offers no event stream; ' : ''
      return sendRpcError(res, 405, RPC.serverError, `Method not allowed: ${why}POST carries messages, DELETE ends a session.`, { headers: { ...headers, Allow: MCP_METHODS } })
    }
    const seen: { id?: RpcId } = {}
    const work = req.method === 'DELETE' ? del(req, res, headers, life.version) : post(req, res, headers, life.version, seen)
    work.catch((e: unknown) => {
      // A refusal with a status of its own (the database down or busy: 503 with Retry-After) keeps it; a fault is a 500.
      const err = toApiError(e)
      if (err.status === 500) log.error({ msg: 'mcp: request failed', err: err.cause ?? e })
      else log.warn({ msg: `mcp: request answered ${err.status}`, code: err.code, err: err.cause ?? err.message })
      sendRpcApiError(res, err, { id: seen.id, headers })
    })
  }

  // Every method reaches the handler, which answers all but POST and DELETE with its own 405.
  const router = FindMyWay<HTTPVersion.V1>({ ignoreTrailingSlash: true, caseSensitive: true })
  router.on(ALL_METHODS, '/v1/mcp', handle(false))
  router.on(ALL_METHODS, '/mcp', handle(true))
  return {
    routes: { router, allow: ALL_METHODS },
    /**
     * The CORS headers of any answer to a request of the endpoint from an accepted origin, set before anything
     * answers: the refusals made before the router (a GET with a body, edge shedding) are then readable too.
     */
    corsOf(req: IncomingMessage, res: ServerResponse): void {
      const origin = req.headers.origin
      if (origin === undefined) return
      const path = (req.url ?? '').split('?')[0].replace(/\/$/, '')
      if ((path === '/v1/mcp' || path === '/mcp') && !refuseHostOrOrigin(req, policy)) exposeTo(res, origin, MCP_CORS)
    },
    /** Requests to clients waiting for their answer in this process (tests check that none is left behind). */
    clientRequestsWaiting: () => clientRequests.waiting,
    close: async () => {
      await modern.close()
      await legacyServer.close()
    },
  }
}
