/**
 * The MCP tools of the registry: every list and get operation of every resource becomes a tool (named by the
 * declaration, runtime/core/define.ts) taking the same parameters as its REST route, run by the same pipeline and
 * answering the same envelope and records. Nothing here names a resource.
 */
import type { CallToolResult, CreateMessageRequestParams, CreateMessageResult, ElicitRequestFormParams, ElicitResult, LoggingLevel, Tool } from '@modelcontextprotocol/server'
import { isApiError } from '../../core/errors.ts'
import { planGet, planList } from '../../core/plan.ts'
import { allOperations, fillPath, orgListOperation, queryParam, recordParam, type CompiledOperation } from '../../core/operations.ts'
import { compileFilter } from '../../core/rql/index.ts'
import { renderRead, renderReadParts } from '../../core/envelope.ts'
import { formatQuery } from '../../core/query-string.ts'
import type { CompiledResource } from '../../core/registry.ts'
import type { Principal } from '../../core/principal.ts'
import type { Pipeline } from '../../core/pipeline.ts'
import { leanFieldJsonSchema, recordJsonSchema, type FieldSchemaOf, type JsonSchema } from './json-schema.ts'
import { valuesUri } from './lookups.ts'
import { RQL_URI } from './rql-guide.ts'
import { PAGE_INSTEAD } from '../../core/limits.ts'
import { argsSchema, parseArgs, type ArgSpec } from './tool-args.ts'
import { errorResult, jsonResult, withErrorResult, type RawJson } from './tool-results.ts'

/** What a tool call runs with. */
export interface ToolContext {
  principal: Principal
  pipeline: Pipeline
  /** Runs another tool of the catalog for the same caller (tools composed of others). */
  callTool(name: string, args: unknown): Promise<CallToolResult>
  /**
   * Present when the transport serialises the answer itself (tool-results.ts `RawJson`): a tool may then leave its
   * payload as the JSON it already has, text or the response cache's lent bytes, instead of parsing it into objects.
   */
  rawJson?: RawJson
  /**
   * Present when the caller asked for log messages (runtime/surfaces/mcp/logging.ts): sends one, if at or above the caller's
   * level, during the call. Only what the caller may see: never a cause, SQL or a secret.
   */
  log?(level: LoggingLevel, data: unknown): void
  /**
   * Present when the request carried a progress token (`_meta.progressToken`): reports how far the call is
   * (`notifications/progress` on the call's own answer). Each report's `progress` must exceed the last one's.
   */
  progress?(progress: number, total?: number, message?: string): void
  /**
   * Present when the client declared `sampling`: asks the client's model for a message (`sampling/createMessage`,
   * runtime/surfaces/mcp/client-requests.ts). Rejects with `client_request_failed` when no usable answer comes; a
   * tool that does not catch that answers with it as its error result.
   */
  sample?(params: CreateMessageRequestParams): Promise<CreateMessageResult>
  /** Present when the client declared `elicitation` (form mode): asks its user (`elicitation/create`); as `sample`. */
  elicit?(params: ElicitRequestFormParams): Promise<ElicitResult>
}

export type McpScope = 'mcp:read' | 'mcp:write'

export interface McpTool {
  definition: Tool
  /** The OAuth scope a caller needs for this tool. */
  scope: McpScope
  run(args: unknown, ctx: ToolContext): Promise<CallToolResult>
  /**
   * Throws the ApiError a call with these arguments would fail with before reading anything (arguments, filter,
   * sort, fields); used to validate prompts at start-up.
   */
  check?(args: unknown): void
  /** The resource a registry tool reads. */
  resource?: CompiledResource
}

/**
 * Read-only and closed-world: every tool of this service only reads its own stored data. destructiveHint and
 * idempotentHint are left out: MCP gives them meaning only when readOnlyHint is false (docs/adr/0195-read-only-hints.md).
 * The display title is the tool's own `title` (the specification prefers it to the annotation's), not repeated here.
 */
export function readOnlyAnnotations(): Tool['annotations'] {
  return { readOnlyHint: true, openWorldHint: false }
}

/** The tool that lists a resource's records (where a get tool's ids come from). */
function listingTool(c: CompiledResource, all: readonly CompiledResource[]): string | undefined {
  const idField = c.decl.id?.field
  const r = all.find((x) => x.decl.operations.list && !x.decl.parent && (x.decl.path === c.decl.path || x.decl.table === c.decl.table) && (!idField || x.fields.has(idField)))
  return r?.decl.mcp.list
}

/** The fields an argument takes, named the shorter way: listed, or as the record's fields but a few. */
function someFields(taken: readonly string[], record: readonly string[]): string {
  const listed = taken.join(', ')
  const others = record.filter((f) => !taken.includes(f))
  if (taken.some((f) => !record.includes(f))) return listed
  const but = others.length ? `any field but ${others.join(', ')}` : 'any field'
  return but.length < listed.length ? but : listed
}

/**
 * The tool's arguments: the operation's path and query parameters, under the same names (runtime/core/operations.ts), with
 * their limits. Descriptions are short and only where the schema does not say it all: where ids come from is said
 * once, in the tool's description (`describe`).
 */
function argSpecs(op: CompiledOperation): ArgSpec[] {
  const c = op.resource
  const args: ArgSpec[] = []
  for (const p of op.pathParams) {
    if (p.type === 'orgId') {
      args.push({ name: p.name, in: 'path', required: true, kind: { type: 'string', max: 18 } })
    } else {
      const as = p.encoding === 'base64url' ? 'Exactly as listed (not encoded).' : undefined
      args.push({ name: p.name, in: 'path', required: true, kind: { type: 'id', encoding: p.encoding }, description: as })
    }
  }
  for (const p of op.queryParams) {
    switch (p.type) {
      case 'limit':
        // Its bounds and default are said once, in the server's instructions (and a limit past them is refused saying so).
        args.push({ name: p.name, in: 'query', kind: { type: 'integer', min: p.min, max: p.max, overMax: PAGE_INSTEAD, listMin: false, listMax: false } })
        break
      case 'offset':
        args.push({ name: p.name, in: 'query', kind: { type: 'integer', min: p.min, listMin: false } })
        break
      case 'filter': {
        // The syntax is explained once (the server's instructions, service://rql); here only what is the tool's own.
        const dflt = p.defaultFilter ? ` Default ${p.defaultFilter}; "" for none.` : ''
        args.push({ name: p.name, in: 'query', kind: { type: 'string', max: p.maxLength }, description: `RQL (${RQL_URI}) on ${someFields(p.fields, op.recordFields)}.${dflt}` })
        break
      }
      case 'sort':
        // The syntax is said once (the server's instructions), the default order in the reference; the sortable fields
        // are not listed (an unknown one is refused naming the nearest and listing them all).
        args.push({ name: p.name, in: 'query', kind: { type: 'string', max: p.maxLength } })
        break
      case 'fields':
        // Said once, in the server's instructions: the same on every tool that has it.
        args.push({ name: p.name, in: 'query', kind: { type: 'names', max: p.fields.length } })
        break
      case 'strings':
        args.push({ name: p.name, in: 'query', kind: { type: 'strings', max: p.maxValues }, description: p.description })
        break
    }
  }
  return args
}

/**
 * Lean record fields (json-schema.ts `leanFieldJsonSchema`): a long enumeration points at the document listing its
 * values, the field's filter-value lookup or its catalog.
 */
function leanFields(c: CompiledResource): FieldSchemaOf {
  return (name, s) => leanFieldJsonSchema(s, (c.decl.filterable ?? []).includes(name) ? valuesUri(c.name, name) : s.catalog)
}

/**
 * The records of an answer, leanly: names and types, nothing required (a sparse fieldset leaves fields out), nothing
 * closed. Each name and type is written once in the tool list: a get whose resource has a list describes its record
 * as that list's record and names only the fields the list does not show.
 */
function leanRecord(op: CompiledOperation, all: readonly CompiledResource[]): JsonSchema {
  const c = op.resource
  const list = op.kind === 'get' ? c.ops.list : undefined
  const names = list ? op.recordFields.filter((f) => !list.recordFields.includes(f)) : op.recordFields
  const record = fieldsOf(op.resource, names)
  if (!list) {
    // A list whose records are another list's, field for field (an object's fields are fields), says so.
    const same = allOperations(all).find((o) => o.kind === 'list' && JSON.stringify(fieldsOf(o.resource, o.recordFields)) === JSON.stringify(record))
    return same && same !== op ? { description: `A ${same.tool} record.` } : record
  }
  if (!names.length) return { description: `A ${list.tool} record.` }
  return { ...record, description: `A ${list.tool} record, plus these fields.` }
}

/**
 * The lean schema of records with these fields of `c`: their properties only. Nothing required, other members
 * admitted, and no `type: object` (properties say it) — the tool list repeats this for every tool.
 */
function fieldsOf(c: CompiledResource, names: readonly string[]): JsonSchema {
  const { additionalProperties: _closed, type: _object, ...record } = recordJsonSchema(names, c.fields, false, leanFields(c))
  return record
}

/**
 * The envelope's `meta`, as far as a caller goes on with it: `total` (the records the filter matches) and `hasMore`.
 * Its `count` is the length of `data`, its `limit` and `offset` echo the arguments, and `requestedLimit` never appears
 * on MCP (a limit above the maximum is refused there): left unnamed, like the envelope's `links` (the REST paths).
 */
function listMeta(): JsonSchema {
  return { properties: { total: { type: 'integer' }, hasMore: { type: 'boolean' } } }
}

function listOutput(op: CompiledOperation, all: readonly CompiledResource[]): JsonSchema {
  return { properties: { data: { type: 'array', items: leanRecord(op, all) }, meta: listMeta() } }
}

function getOutput(op: CompiledOperation, all: readonly CompiledResource[]): JsonSchema {
  return { properties: { data: leanRecord(op, all) } }
}

/** The first sentence of a declaration's description: what the records are, so when to use the tool. */
function firstSentence(text: string): string {
  const end = text.search(/(?<!\b(?:e\.g|i\.e))\.(\s|$)/)
  return end < 0 ? text : text.slice(0, end + 1)
}

/**
 * One short description: when to use the tool (what it returns), how to page, and where each id argument comes from.
 * The filter and sort arguments describe themselves; RQL is explained once (the server's instructions, service://rql).
 */
function describe(op: CompiledOperation, all: readonly CompiledResource[], orgsTool: string): string {
  const c = op.resource
  const d = c.decl
  const from: string[] = []
  for (const p of op.pathParams) {
    // A get's org comes from where the list of its records says (and the server's instructions): said for lists only.
    if (p.type === 'orgId') {
      if (op.kind === 'list' || p.record) from.push(`${p.name} from ${orgsTool}`)
    } else if (p.role === 'parent') from.push(`${p.name} from ${all.find((x) => x.name === p.resource)?.decl.mcp.list}`)
    else {
      const list = listingTool(c, all)
      if (list) from.push(`${p.name} from ${list}`)
    }
  }
  const ids = from.length ? [`${from.join('; ')}.`] : []
  if (op.kind === 'list') {
    const paging = queryParam(op, 'limit') ? 'Paged: offset+limit while meta.hasMore.' : 'Every record in one call.'
    return [firstSentence(d.description), paging, ...ids].join(' ')
  }
  // A get of a list's records says which record and how much of it; a singleton, or a get with no list of its own,
  // what it is.
  if (d.kind !== 'singleton' && c.ops.list && recordParam(op)) {
    return `${[`One ${d.title.toLowerCase()} by id${op.recordFields.length > c.listFieldNames.length ? ', with more fields than the list' : ''}`, ...from].join('; ')}.`
  }
  return [firstSentence(d.description), ...ids].join(' ')
}

/**
 * The REST path and query string equivalent to a call, for the envelope's links: written as a REST caller writes them
 * (runtime/core/query-string.ts), so the links are those REST gives for the same request.
 */
function restTarget(op: CompiledOperation, params: Record<string, string | undefined>, query: Map<string, string[]>): { path: string; qs: string } {
  return { path: fillPath(op, params), qs: formatQuery(query) }
}

function tool(operation: CompiledOperation, all: readonly CompiledResource[], orgsTool: string): McpTool {
  const c = operation.resource
  const d = c.decl
  const { tool: name, title, kind: op } = operation
  const specs = argSpecs(operation)
  const definition: Tool = {
    name,
    title,
    description: describe(operation, all, orgsTool),
    inputSchema: argsSchema(specs) as Tool['inputSchema'],
    outputSchema: withErrorResult(op === 'list' ? listOutput(operation, all) : getOutput(operation, all)) as Tool['outputSchema'],
    annotations: readOnlyAnnotations(),
  }
  return {
    definition,
    scope: 'mcp:read',
    resource: c,
    check(args) {
      const { params, query } = parseArgs(specs, args)
      if (op === 'get') return void planGet(c, query, d.id && d.kind !== 'singleton' ? params[d.id.param] : undefined)
      const plan = planList(c, query, 'mcp', d.parent ? params[d.parent.param] : undefined)
      if (plan.filter) compileFilter(plan.filter, d.fields, d.filterable ?? [], () => '$1')
    },
    async run(args, ctx) {
      // Arguments are parsed before the pipeline (it needs the path parameters), but a mistake in them is
      // reported by the pipeline, after the charge: a client mistake costs a unit on MCP as on REST.
      let parsed: ReturnType<typeof parseArgs> | undefined
      let mistake: unknown
      try {
        parsed = parseArgs(specs, args)
      } catch (e) {
        if (!isApiError(e)) throw e
        mistake = e
      }
      const params = parsed?.params ?? {}
      const query = () => {
        if (!parsed) throw mistake
        return parsed.query
      }
      // A transport that writes the answer itself takes a cached answer's records as the cache's bytes, as REST does.
      const out = await ctx.pipeline.execute(ctx.principal, { kind: 'read', resource: c, op, params, query, lend: ctx.rawJson !== undefined }, 'mcp')
      if (!out.ok) return errorResult(out.error, out.rate, c)
      if (out.kind !== 'read') throw new Error('a read operation answered with another kind of outcome')
      const r = out.result
      const target = restTarget(operation, params, parsed!.query)
      // Bytes (the cache's, or as the database sent them) to a transport that writes them; text to any other.
      const body = r.dataBytes && ctx.rawJson ? renderReadParts(r as typeof r & { dataBytes: Buffer }, target.path, target.qs) : renderRead(r, target.path, target.qs)
      if (r.kind === 'one') return jsonResult(`One ${d.title.toLowerCase()} in structuredContent.data.`, body, ctx.rawJson, r.release)
      if (r.kind !== 'list') throw new Error('a list answered with another kind of outcome')
      const { count, hasMore, plan } = r
      const next = hasMore ? ` More are available: call ${name} again with offset ${plan.offset + plan.limit}.` : ' There are no more.'
      const noun = count === 1 ? d.title : (d.plural ?? `${d.title}s`)
      return jsonResult(`${count} ${noun.toLowerCase()} in structuredContent.data${d.unpaged ? '' : ` (offset ${plan.offset}, ${r.total} in all)`}.${next}`, body, ctx.rawJson, r.release)
    },
  }
}

/** The tool that lists the caller's orgs (where every orgId comes from). */
export function orgsToolOf(resources: readonly CompiledResource[]): string {
  return orgListOperation(resources)?.tool ?? 'the org list'
}

/** Every list and get tool of the registry, in registry order (grouped counts have one tool of their own: count-tool.ts). */
export function resourceTools(resources: readonly CompiledResource[]): McpTool[] {
  const orgsTool = orgsToolOf(resources)
  return allOperations(resources).filter((op) => op.kind !== 'count').map((op) => tool(op, resources, orgsTool))
}
