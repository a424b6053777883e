/**
 * The MCP server of one HTTP request, bound to its authenticated principal: a low-level SDK `Server` whose handlers
 * answer from catalogs built once at start-up (tools, prompts, lookups — all derived from the registry). Building
 * it per request is cheap: a few handler registrations, no schema conversion.
 *
 * - `tools/list`, `prompts/list`, `resources/list`, `resources/templates/list`, `resources/read` and completions are
 *   free; `tools/call` is charged one unit by the pipeline (except `get_account_quota` and `server_info`).
 * - A tool the caller's scopes do not cover answers `access_denied` naming the scope; scopes are read from the
 *   principal of every request, so a change applies to the next call, also inside an existing session.
 * - An unknown tool, prompt or resource is a protocol error (invalid params).
 * - `logging`: a tool call's log messages (runtime/surfaces/mcp/logging.ts) go to the caller at the level it asked for.
 * - A tool call may also report progress and ask the client (sampling, elicitation) when the caller can take them
 *   (call-io.ts, client-requests.ts).
 * - `resources/subscribe` is accepted for any resource that exists, and nothing more is kept: orgscan's resources are
 *   derived from the registry and do not change while the server runs, so no `notifications/resources/updated` is
 *   ever due (docs/adr/0190-mcp-client-requests.md).
 */
import { API_VERSION } from '../../core/api-version.ts'
import { CLIENT_CAPABILITIES_META_KEY, LOG_LEVEL_META_KEY, ProtocolError, ProtocolErrorCode, Server, type AuthInfo, type CallToolResult, type CreateMessageResult, type ElicitResult, type InputRequiredResult, type JSONRPCRequest, type LoggingLevel, type ReadResourceResult, type Result, type ServerContext } from '@modelcontextprotocol/server'
import type { Clock } from '../../core/config-types.ts'
import type { VersionSource } from '../../core/version-state.ts'
import type { PromptDeclaration } from '../../core/define.ts'
import { ApiError, toApiError } from '../../core/errors.ts'
import type { Logger } from '../../core/log.ts'
import type { Principal } from '../../core/principal.ts'
import type { Pipeline } from '../../core/pipeline.ts'
import type { CompiledResource } from '../../core/registry.ts'
import { catalogs, listedLookups, lookupText, readLookup, VALUES_TEMPLATE } from './lookups.ts'
import { argumentProblem, compilePrompts, enumValues, renderPrompt, type CompiledPrompt } from './prompts.ts'
import { resourceTools, type McpScope, type McpTool, type ToolContext } from './resource-tools.ts'
import { countTool } from './count-tool.ts'
import { quotaTool, serverInfoTool } from './service-tools.ts'
import { errorResult, type RawJson } from './tool-results.ts'
import { asInvalidParams } from './invalid-params.ts'
import { CallLog, callLine, isLoggingLevel, type CallNote } from './logging.ts'
import { progressReport, progressTokenOf, type CallIo } from './call-io.ts'
import { clientAbilities, InputNeeded, RoundAsker } from './client-requests.ts'
import { ExtraResources, type ExtraContext, type McpExtraPrompt, type McpExtraResource } from './extras.ts'
import { RQL_ESSENTIALS } from './rql-guide.ts'

const VALUES_TEMPLATE_ENTRY = {
  uriTemplate: VALUES_TEMPLATE,
  name: 'filter-values',
  title: 'Filter values of a field',
  description: 'Type, operators and (for enums) the valid values of any filterable field of any list, e.g. resource://filter-values/issues/category.',
  mimeType: 'application/json',
}

export const SERVER_INFO = { name: 'orgscan', title: 'Organization Scan Data Service', version: API_VERSION }

/**
 * What every tool shares, said once rather than in each tool's list entry (the tool list is paid for by the
 * character): ids, paging, filters, sorting, fields and error results.
 */
const INSTRUCTIONS = [
  'Read-only access to what scans of CRM-platform orgs found. Start with list_orgs to get an orgId; every other tool',
  'reads the latest completed scan of one org, and a record id comes from the list its tool names. List tools page:',
  'limit (at most 200, default 50) and offset; while meta.hasMore, call again with offset increased by limit.',
  `${RQL_ESSENTIALS} Sort takes comma-separated fields, -field for descending. A fields argument (an array of record`,
  "field names) returns only those and the record's id; meta.total is every record the filter matches, and",
  'count_org_records counts them by group, so neither needs paging. A failed call is isError with structuredContent',
  '{error, message, reason}: error is bad_filter (fix the call: parameter, offset, allowed and links say how), not_found, access_denied,',
  'rate_limited (wait retryAfterSeconds) or server_error (retry). Every tools/call counts against the account quota',
  '(get_account_quota shows it, for free); the prompts are ready-made audits.',
].join(' ')

export interface McpCatalog {
  tools: ReadonlyMap<string, McpTool>
  prompts: ReadonlyMap<string, CompiledPrompt>
  resources: readonly CompiledResource[]
  /** Prompts and resources added by tests (extras.ts). */
  extraPrompts: ReadonlyMap<string, McpExtraPrompt>
  extraResources: ExtraResources
}

export interface McpCatalogOptions {
  resources: readonly CompiledResource[]
  prompts: readonly PromptDeclaration[]
  /** The version table (MCP's rows are read at every server_info call). */
  versions: VersionSource
  clock: Clock
  /** Tools added by tests (e.g. one that needs `mcp:write`). */
  extraTools?: readonly McpTool[]
  /** Prompts and resources added by tests (the conformance suite's fixtures). */
  extraPrompts?: readonly McpExtraPrompt[]
  extraResources?: readonly McpExtraResource[]
}

/** Builds and validates the tools and prompts once; throws RegistryError for a prompt that would not work. */
export function buildCatalog(o: McpCatalogOptions): McpCatalog {
  const list = [...resourceTools(o.resources), ...countTool(o.resources), quotaTool(), serverInfoTool(o.versions, o.clock), ...(o.extraTools ?? [])]
  const tools = new Map<string, McpTool>()
  for (const t of list) {
    if (tools.has(t.definition.name)) throw new Error(`MCP tool ${t.definition.name} is declared twice`)
    tools.set(t.definition.name, t)
  }
  const prompts = new Map(compilePrompts(o.prompts, tools, o.resources).map((p) => [p.definition.name, p]))
  const extraPrompts = new Map<string, McpExtraPrompt>()
  for (const p of o.extraPrompts ?? []) {
    if (prompts.has(p.definition.name) || extraPrompts.has(p.definition.name)) throw new Error(`MCP prompt ${p.definition.name} is declared twice`)
    extraPrompts.set(p.definition.name, p)
  }
  return { tools, prompts, resources: o.resources, extraPrompts, extraResources: new ExtraResources(o.extraResources ?? []) }
}

/** The scopes a principal holds; an API key reads (`mcp:read`). */
export function scopesOf(p: Principal): readonly string[] {
  return p.scopes ?? (p.method === 'api_key' ? ['mcp:read'] : [])
}

function invalid(message: string): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, message)
}

/** What the MCP server reports of each tool call (runtime/platform/metrics.ts implements it). */
export interface ToolMetrics {
  toolCall(tool: string, error: string | undefined): void
}

export interface McpServerDeps {
  catalog: McpCatalog
  pipeline: Pipeline
  clock: Clock
  log: Logger
  /** Counts tool calls by tool and error code (runtime/platform/metrics.ts); optional. */
  metrics?: ToolMetrics
  /** Keeps a 2025-era session's log level (runtime/surfaces/mcp/sessions.ts); false when the session is gone. */
  setLogLevel?: (principal: Principal, sessionId: string, level: LoggingLevel) => Promise<boolean>
}

/**
 * What the endpoint passes a 2025-era request with, beside the caller (`authInfo.extra`): the answer's raw JSON, the
 * session and, for a tool call, what it may exchange with its caller besides the result (call-io.ts).
 */
export interface RequestExtra {
  principal?: Principal
  rawJson?: RawJson
  sessionId?: string
  io?: CallIo
}

const extraOf = (ctx: { http?: { authInfo?: AuthInfo } }) => ctx.http?.authInfo?.extra as RequestExtra | undefined

/** The caller of a request: the endpoint authenticated it and passed it as auth info (see endpoint.ts). */
function principalOf(ctx: { http?: { authInfo?: AuthInfo } }): Principal {
  const p = extraOf(ctx)?.principal
  if (!p) throw new ProtocolError(ProtocolErrorCode.InternalError, 'The request reached the MCP server unauthenticated.')
  return p
}

/** The auth info that carries the authenticated caller to the server's handlers. */
export function authInfoOf(p: Principal): AuthInfo {
  return { token: '', clientId: p.credentialId, scopes: [...scopesOf(p)], extra: { principal: p } }
}

/**
 * The SDK's `Server`, except that a request whose params fail the method's schema answers −32602 with a short message
 * naming the wrong fields, for every method (invalid-params.ts says why the SDK alone does not). `_wrapHandler` is the
 * SDK's documented hook for wrapping every registered request handler, its own schema check included.
 */
class McpProtocolServer extends Server {
  protected override _wrapHandler(method: string, handler: (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>) {
    const wrapped = super._wrapHandler(method, handler)
    return (request: JSONRPCRequest, ctx: ServerContext): Promise<Result> =>
      wrapped(request, ctx).catch((e: unknown) => {
        throw asInvalidParams(method, e)
      })
  }
}

/**
 * The log of a 2026-07-28 tool call: the level is the request's own (`_meta`), none without it. Its messages are
 * notifications related to the request, which the SDK's handler answers as an event stream.
 */
function requestLog(ctx: ServerContext): CallLog | undefined {
  // The SDK checked the envelope's level; its declared type names no keys.
  const level = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[LOG_LEVEL_META_KEY]
  if (!isLoggingLevel(level)) return undefined
  return new CallLog(level, (params) => void ctx.mcpReq.notify({ method: 'notifications/message', params }).catch(() => undefined))
}

/**
 * What a 2026-07-28 tool call may exchange with its caller: its log, its progress (both notifications related to the
 * request, which the SDK's handler answers as an event stream) and, for what the request's client capabilities
 * declare, asks answered across retries (client-requests.ts `RoundAsker`). Undefined when none applies.
 */
function modernIo(ctx: ServerContext, tool: string): CallIo | undefined {
  const log = requestLog(ctx)
  const token = progressTokenOf({ _meta: ctx.mcpReq._meta })
  const progress = token === undefined ? undefined : progressReport(token, (params) => void ctx.mcpReq.notify({ method: 'notifications/progress', params }).catch(() => undefined))
  const abilities = clientAbilities((ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY])
  const asker = abilities && new RoundAsker(abilities, tool, ctx.mcpReq.inputResponses, ctx.mcpReq.requestState())
  return log || progress || asker ? { log, progress, asker } : undefined
}

/**
 * An MCP server. Its handlers take the caller from each request (`ctx.http.authInfo`), so one server can serve
 * every caller: the endpoint keeps one for 2025-era requests, the SDK builds one per 2026-era request (`modern`: a
 * tool call's log level is then the request's own).
 */
export function createMcpServer(d: McpServerDeps, modern = false): Server {
  const { catalog } = d
  const server = new McpProtocolServer(SERVER_INFO, {
    capabilities: { tools: { listChanged: false }, prompts: { listChanged: false }, resources: { subscribe: true, listChanged: false }, completions: {}, logging: {} },
    instructions: INSTRUCTIONS,
  })
  const definitions = [...catalog.tools.values()].map((t) => t.definition)
  // Every list is one page (no nextCursor is ever given), so any cursor is one this server did not issue.
  const noCursor = (method: string, params: { cursor?: string } | undefined) => {
    if (params?.cursor !== undefined) throw invalid(`Invalid cursor for ${method}: this server lists everything in one page and gives no cursors.`)
  }
  server.setRequestHandler('tools/list', async (req) => {
    noCursor('tools/list', req.params)
    return { tools: definitions }
  })
  server.setRequestHandler('tools/call', (req, ctx) => {
    const extra = extraOf(ctx)
    return dispatchTool(d, req.params.name, req.params.arguments, principalOf(ctx), extra?.rawJson, modern ? modernIo(ctx, req.params.name) : extra?.io)
  })
  // Replaces the SDK's own handler, which keeps one level per process for all sessions of a shared server. The
  // 2026-07-28 revision has no such method (a request carries its level), so only 2025-era sessions reach this.
  server.setRequestHandler('logging/setLevel', async (req, ctx) => {
    const principal = principalOf(ctx)
    const sessionId = extraOf(ctx)?.sessionId
    // A session ended since the endpoint checked it keeps no level; its next request is told it is gone.
    if (sessionId !== undefined && d.setLogLevel) await d.setLogLevel(principal, sessionId, req.params.level)
    return {}
  })

  const extraContext = (principal: Principal): ExtraContext => ({ principal, readResource: (uri) => ownResource(catalog, uri) })
  server.setRequestHandler('prompts/list', async (req) => {
    noCursor('prompts/list', req.params)
    return { prompts: [...[...catalog.prompts.values()].map((p) => p.definition), ...[...catalog.extraPrompts.values()].map((p) => p.definition)] }
  })
  server.setRequestHandler('prompts/get', async (req, ctx) => {
    const p = catalog.prompts.get(req.params.name)
    const args = req.params.arguments ?? {}
    const extra = p ? undefined : catalog.extraPrompts.get(req.params.name)
    if (extra) {
      for (const a of extra.definition.arguments ?? []) if (a.required && !args[a.name]) throw invalid(`Prompt ${extra.definition.name} needs the argument ${a.name}.`)
      return extra.get(args, extraContext(principalOf(ctx)))
    }
    if (!p) throw invalid(`Unknown prompt: ${req.params.name}`)
    for (const a of p.decl.arguments) {
      const value = args[a.name]
      if (a.required && !value) throw invalid(`Prompt ${p.decl.name} needs the argument ${a.name}.`)
      const problem = value ? argumentProblem(a, value, catalog.resources) : undefined
      if (problem) throw invalid(`Prompt ${p.decl.name}: ${problem}`)
    }
    return renderPrompt(p, args, new Date(d.clock()).toISOString().slice(0, 10))
  })

  const extras = catalog.extraResources
  server.setRequestHandler('resources/list', async (req) => {
    noCursor('resources/list', req.params)
    const own = listedLookups(catalog.resources).map((l) => ({ uri: l.uri, name: l.name, title: l.title, description: l.description, mimeType: l.mimeType ?? 'application/json' }))
    return { resources: [...own, ...[...extras.fixed.values()].map((r) => r.definition)] }
  })
  server.setRequestHandler('resources/templates/list', async (req) => {
    noCursor('resources/templates/list', req.params)
    return { resourceTemplates: [VALUES_TEMPLATE_ENTRY, ...extras.templates.map((t) => t.entry.definition)] }
  })
  const notFound = (uri: string) => new ProtocolError(ProtocolErrorCode.ResourceNotFound, `Resource not found: ${uri}`)
  server.setRequestHandler('resources/read', async (req, ctx) => {
    const own = ownResource(catalog, req.params.uri)
    if (own) return own
    const extra = extras.read(req.params.uri, extraContext(principalOf(ctx)))
    if (!extra) throw notFound(req.params.uri)
    return extra
  })
  // Accepted for a resource that exists, and kept nowhere: nothing here changes while the server runs, so there is
  // never an update to announce (the capability is true: a subscriber is told of every change, which is none).
  const subscribable = (uri: string) => {
    if (!readLookup(catalog.resources, uri) && !extras.has(uri)) throw notFound(uri)
    return {}
  }
  server.setRequestHandler('resources/subscribe', async (req) => subscribable(req.params.uri))
  server.setRequestHandler('resources/unsubscribe', async (req) => subscribable(req.params.uri))

  const knownUris = new Set([...catalogs(catalog.resources).map((c) => c.uri), ...listedLookups(catalog.resources).map((l) => l.uri)])
  server.setRequestHandler('completion/complete', async (req, ctx) => {
    const principal = principalOf(ctx)
    const { ref, argument } = req.params
    const prefix = argument.value ?? ''
    let values: readonly string[] = []
    const extraPrompt = ref.type === 'ref/prompt' ? catalog.extraPrompts.get(ref.name) : undefined
    const extraTemplate = ref.type === 'ref/resource' ? extras.template(ref.uri) : undefined
    if (extraPrompt) {
      values = extraPrompt.complete?.(argument.name, prefix) ?? []
    } else if (extraTemplate) {
      values = extraTemplate.complete?.(argument.name, prefix) ?? []
    } else if (ref.type === 'ref/prompt') {
      const prompt = catalog.prompts.get(ref.name)
      if (!prompt) throw invalid(`Unknown prompt: ${ref.name}`)
      const a = prompt.decl.arguments.find((x) => x.name === argument.name)
      // The org ids are data that reading needs mcp:read for, like list_orgs.
      if (a?.complete === 'org') values = scopesOf(principal).includes('mcp:read') ? await orgIds(d, catalog, principal) : []
      else if (a?.complete) values = enumValues(catalog.resources, a.complete)
    } else if (ref.type === 'ref/resource' && ref.uri === VALUES_TEMPLATE) {
      if (argument.name === 'resource') values = catalog.resources.filter((c) => c.decl.filterable?.length).map((c) => c.name)
      else if (argument.name === 'field') values = catalog.resources.find((c) => c.name === req.params.context?.arguments?.resource)?.decl.filterable ?? []
    } else if (ref.type === 'ref/resource' && !knownUris.has(ref.uri) && !extras.fixed.has(ref.uri)) {
      // A resource of resources/list or a catalog has no arguments to complete (an empty answer); others are unknown.
      throw invalid(`Unknown resource: ${ref.uri}`)
    }
    const matching = values.filter((v) => v.toLowerCase().startsWith(prefix.toLowerCase()))
    return { completion: { values: matching.slice(0, 100), total: matching.length, hasMore: matching.length > 100 } }
  })
  return server
}

/**
 * The one way a tool of the catalog is called, for a caller: the lookup (an unknown tool is a −32602 protocol error),
 * the scope check, the run (a failure is logged and answered as the error result `toApiError` classifies it as, never
 * thrown) and the metrics. The SDK's `tools/call` handler above, the endpoint's direct way for plain 2025-era calls (endpoint.ts) and
 * a tool calling another (`ToolContext.callTool`, straight to `runTool`) all come here, so they answer alike. With an
 * `io` the tool may also log (the call then ends with its line, runtime/surfaces/mcp/logging.ts), report progress and ask
 * the client (call-io.ts); without, none of that runs. A 2026-era call whose asks have no answer yet answers
 * `input_required` instead of its result (client-requests.ts `RoundAsker`).
 */
export function dispatchTool(d: McpServerDeps, name: string, args: unknown, principal: Principal, rawJson: RawJson | undefined, io?: CallIo): Promise<CallToolResult | InputRequiredResult> {
  return io ? ioCall(d, name, args, principal, rawJson, io) : runTool(d, name, args, principal, rawJson)
}

async function ioCall(d: McpServerDeps, name: string, args: unknown, principal: Principal, rawJson: RawJson | undefined, io: CallIo): Promise<CallToolResult | InputRequiredResult> {
  try {
    const result = io.log ? await loggedCall(d, name, args, principal, rawJson, io, io.log) : await runTool(d, name, args, principal, rawJson, io)
    // A tool that caught the missing answer (and answered otherwise) still asked: the client answers first.
    return io.asker?.inputRequired?.() ?? result
  } catch (e) {
    const needed = e instanceof InputNeeded ? io.asker?.inputRequired?.() : undefined
    if (needed) return needed
    throw e
  }
}

async function loggedCall(d: McpServerDeps, name: string, args: unknown, principal: Principal, rawJson: RawJson | undefined, io: CallIo, log: CallLog): Promise<CallToolResult> {
  const started = performance.now()
  const note: CallNote = {}
  const result = await runTool(d, name, args, principal, rawJson, io, note)
  const line = callLine(name, result, note, performance.now() - started)
  log.log(line.level, line.data)
  return result
}

/** `io` and `note`: the call's, shared by the tools it calls (one log line for the call, with what they read). */
async function runTool(d: McpServerDeps, name: string, args: unknown, principal: Principal, rawJson: RawJson | undefined, io?: CallIo, note?: CallNote): Promise<CallToolResult> {
  const tool = d.catalog.tools.get(name)
  if (!tool) throw invalid(`Unknown tool: ${name}`)
  const need: McpScope = tool.scope
  if (!scopesOf(principal).includes(need)) {
    return errorResult(new ApiError('forbidden', `${name} needs the ${need} scope, which this credential was not granted.`, { scope: need }))
  }
  let result: CallToolResult
  try {
    result = await tool.run(args, toolContext(d, principal, rawJson, io, note))
  } catch (e) {
    // Not a failure: the call answers input_required (dispatchTool).
    if (e instanceof InputNeeded) throw e
    // An unreachable database is a retryable server_error like any fault, but says so; a fault says nothing more.
    const err = toApiError(e)
    if (err.code === 'client_request_failed') d.log.warn({ msg: 'mcp: tool got no answer from the client', tool: name, err: err.message })
    else d.log.error({ msg: 'mcp: tool failed', tool: name, code: err.code, err: e })
    result = errorResult(err.status === 500 ? new ApiError('internal_error', 'The server failed to run the tool.') : err)
  }
  d.metrics?.toolCall(name, result.isError ? String((result.structuredContent as { error?: unknown } | undefined)?.error ?? 'error') : undefined)
  return result
}

function toolContext(d: McpServerDeps, principal: Principal, rawJson: RawJson | undefined, io?: CallIo, note?: CallNote): ToolContext {
  if (!io) return { principal, rawJson, pipeline: d.pipeline, callTool: (name, args) => runTool(d, name, args, principal, rawJson) }
  const ctx: ToolContext = {
    principal,
    rawJson,
    pipeline: note ? noting(d.pipeline, note) : d.pipeline,
    callTool: (name, args) => runTool(d, name, args, principal, rawJson, io, note),
  }
  const { log, progress, asker } = io
  if (log) ctx.log = (level, data) => log.log(level, data)
  if (progress) ctx.progress = progress
  // The asker checked the answer's shape against the method's result (client-requests.ts `checked`).
  if (asker?.abilities.sampling) ctx.sample = (params) => asker.ask('sampling/createMessage', params) as Promise<CreateMessageResult>
  if (asker?.abilities.elicitation) ctx.elicit = (params) => asker.ask('elicitation/create', params) as Promise<ElicitResult>
  return ctx
}

/** orgscan's own resource at `uri` (a lookup), as resources/read answers it; undefined when there is none. */
function ownResource(catalog: McpCatalog, uri: string): ReadResourceResult | undefined {
  const doc = readLookup(catalog.resources, uri)
  return doc && { contents: [{ uri: doc.uri, mimeType: doc.mimeType ?? 'application/json', text: lookupText(doc) }] }
}

/** The pipeline, noting what its reads answered (records, the quota window charged) for the call's log line. */
function noting(p: Pipeline, note: CallNote): Pipeline {
  const noted: Pipeline = Object.create(p) as Pipeline
  noted.execute = async (principal, operation, surface) => {
    const out = await p.execute(principal, operation, surface)
    if (out.ok && out.kind === 'read') note.records = out.result.kind === 'list' ? out.result.count : 1
    if (out.rate?.window) note.rate = out.rate
    return out
  }
  return noted
}

/** The ids of the orgs the principal sees (a free read: completing an argument costs no quota). */
async function orgIds(d: McpServerDeps, catalog: McpCatalog, principal: Principal): Promise<string[]> {
  const orgs = catalog.resources.find((c) => c.decl.scope === 'account' && c.decl.operations.list)
  const idField = orgs?.decl.id?.field
  if (!orgs || !idField) return []
  const out = await d.pipeline.execute(principal, { kind: 'read', resource: orgs, op: 'list', params: {}, query: () => new Map([['limit', ['200']]]), free: true }, 'mcp')
  if (!out.ok || out.kind !== 'read') return []
  return (JSON.parse(out.result.data) as Array<Record<string, unknown>>).map((r) => String(r[idField]))
}
