/**
 * The MCP tools of the registry: every list and get operation of every resource becomes a tool (named by the
 * declaration, runtime/define.ts) taking the same parameters as its REST route, run by the same pipeline and
 * answering the same envelope and records. Nothing here names a resource.
 */
import type { CallToolResult, LoggingLevel, Tool } from '@modelcontextprotocol/server'
import { isApiError } from '../errors.ts'
import { planGet, planList } from '../plan.ts'
import { allOperations, fillPath, queryParam, type CompiledOperation } from '../operations.ts'
import { compileFilter } from '../rql/index.ts'
import { renderRead, renderReadParts } from '../envelope.ts'
import { exampleFilter } from '../examples.ts'
import type { CompiledResource } from '../registry.ts'
import type { Principal } from '../auth/principal.ts'
import type { Pipeline } from '../pipeline/pipeline.ts'
import { recordJsonSchema, JSON_SCHEMA_DIALECT, type JsonSchema } from './json-schema.ts'
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
   * Present when the caller asked for log messages (runtime/mcp/logging.ts): sends one, if at or above the caller's
   * level, during the call. Only what the caller may see: never a cause, SQL or a secret.
   */
  log?(level: LoggingLevel, data: unknown): void
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

/** Read-only, idempotent, closed-world: every tool of this service only reads its own stored data. */
export function readOnlyAnnotations(title: string): Tool['annotations'] {
  return { title, readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false }
}

const ORG_ID = 'orgId'

/** The tool that lists a resource's records (where a get tool's ids come from). */
function listingTool(c: CompiledResource, all: readonly CompiledResource[]): string | undefined {
  const idField = c.decl.id?.field
  const r = all.find((x) => x.decl.operations.list && !x.decl.parent && (x.decl.path === c.decl.path || x.decl.table === c.decl.table) && (!idField || x.fields.has(idField)))
  return r?.decl.mcp.list
}

/**
 * The tool's arguments: the operation's path and query parameters, under the same names (runtime/operations.ts), each
 * with what an assistant needs to fill it: its limits and where its values come from.
 */
function argSpecs(op: CompiledOperation, all: readonly CompiledResource[], orgsTool: string): ArgSpec[] {
  const c = op.resource
  const args: ArgSpec[] = []
  for (const p of op.pathParams) {
    if (p.type === 'orgId') {
      args.push({ name: p.name, in: 'path', required: true, kind: { type: 'string', max: 18 }, description: `The org's 15- or 18-character id; ${orgsTool} lists them.` })
    } else if (p.role === 'parent') {
      const parent = all.find((x) => x.name === p.resource)
      args.push({ name: p.name, in: 'path', required: true, kind: { type: 'id', encoding: p.encoding }, description: `Id of the parent record; ${parent?.decl.mcp.list ?? 'its list tool'} lists them.` })
    } else {
      const from = listingTool(c, all)
      const as = p.encoding === 'base64url' ? ', exactly as listed (no encoding)' : ''
      args.push({ name: p.name, in: 'path', required: true, kind: { type: 'id', encoding: p.encoding }, description: `The record's ${p.field}${as}${from ? `; ${from} lists them` : ''}.` })
    }
  }
  for (const p of op.queryParams) {
    switch (p.type) {
      case 'limit':
        args.push({ name: p.name, in: 'query', kind: { type: 'integer', min: p.min, max: p.max }, default: p.default, description: `Records per call, ${p.min} to ${p.max} (default ${p.default}); more than ${p.max} is rejected.` })
        break
      case 'offset':
        args.push({ name: p.name, in: 'query', kind: { type: 'integer', min: p.min }, default: p.default, description: 'Records to skip: the previous offset plus limit gives the next page.' })
        break
      case 'filter': {
        const ex = exampleFilter(c)
        const dflt = p.defaultFilter ? ` Without it, ${p.defaultFilter} applies; an empty filter means none.` : ''
        args.push({ name: p.name, in: 'query', kind: { type: 'string', max: p.maxLength }, description: `RQL filter on ${p.fields.join(', ')}${ex ? `, e.g. ${ex}` : ''}.${dflt}` })
        break
      }
      case 'sort':
        args.push({ name: p.name, in: 'query', kind: { type: 'string', max: p.maxLength }, description: `Comma-separated fields, a leading - for descending, among ${p.fields.join(', ')}${p.defaultSort ? `; default ${p.defaultSort}` : ''}.` })
        break
      case 'fields':
        args.push({ name: p.name, in: 'query', kind: { type: 'names', max: p.fields.length }, description: `Only these properties of each record${p.key ? ` (and ${p.key})` : ''}, e.g. ["${p.fields.filter((f) => f !== p.key).slice(0, 2).join('", "')}"]; default all.` })
        break
      case 'strings':
        args.push({ name: p.name, in: 'query', kind: { type: 'strings', max: p.maxValues }, description: p.description })
        break
    }
  }
  return args
}

function listOutput(c: CompiledResource): JsonSchema {
  const record = recordJsonSchema(c.listFieldNames, c.fields, !queryParam(c.ops.list!, 'fields'))
  const meta: Record<string, unknown> = { count: { type: 'integer' }, total: { type: 'integer' }, hasMore: { type: 'boolean' } }
  if (!c.decl.unpaged) Object.assign(meta, { limit: { type: 'integer' }, offset: { type: 'integer' }, requestedLimit: { type: 'integer' } })
  return {
    $schema: JSON_SCHEMA_DIALECT,
    type: 'object',
    properties: {
      data: { type: 'array', items: record },
      meta: { type: 'object', properties: meta, required: ['count', 'total', 'hasMore'] },
      links: { type: 'object', additionalProperties: { type: 'string' }, description: 'The equivalent REST paths (self, next, prev).' },
    },
    required: ['data', 'meta', 'links'],
  }
}

function getOutput(c: CompiledResource): JsonSchema {
  const names = [...c.fields.keys()]
  // With `fields`, a record holds only the properties asked for (and its id).
  return { $schema: JSON_SCHEMA_DIALECT, type: 'object', properties: { data: recordJsonSchema(names, c.fields, !queryParam(c.ops.get!, 'fields')) }, required: ['data'] }
}

function describe(op: CompiledOperation, all: readonly CompiledResource[], orgsTool: string): string {
  const c = op.resource
  const d = c.decl
  const parts = [d.description]
  const org = d.scope === 'org' ? ` orgId comes from ${orgsTool}.` : ''
  if (op.kind === 'list') {
    const limit = queryParam(op, 'limit')
    const paging = !limit ? 'every record in one call' : `up to limit records per call (default ${limit.default}, at most ${limit.max}); when meta.hasMore is true, call again with offset increased by limit`
    parts.push(`Returns {data, meta, links}: ${paging}.${org}`)
    for (const p of op.pathParams) if (p.type === 'id' && p.role === 'parent') parts.push(`${p.name} comes from ${all.find((x) => x.name === p.resource)?.decl.mcp.list}.`)
    const filter = queryParam(op, 'filter')
    if (filter) {
      const ex = exampleFilter(c)
      parts.push(`filter (RQL) on ${filter.fields.join(', ')}${ex ? `, e.g. ${ex}` : ''}${filter.defaultFilter ? `; without a filter, ${filter.defaultFilter} applies` : ''}.`)
    }
    const sort = queryParam(op, 'sort')
    if (sort) parts.push(`sort on ${sort.fields.join(', ')} (- for descending)${sort.defaultSort ? `; default ${sort.defaultSort}` : ''}.`)
    return parts.join(' ')
  }
  if (d.kind === 'singleton') {
    parts.push(`Returns {data}: the ${d.title.toLowerCase()} of the org's latest scan.${org}`)
  } else {
    const from = listingTool(c, all)
    const of = d.scope === 'org' ? " of the org's latest scan" : ''
    const needs = d.id!.param === ORG_ID ? '' : ` by ${d.id!.param}${from ? ` (${from} lists them)` : ''}`
    parts.push(`Returns {data}: one ${d.title.toLowerCase()}${of}${needs}.${org || (d.id!.param === ORG_ID ? ` orgId comes from ${orgsTool}.` : '')}`)
  }
  return parts.join(' ')
}

/** The REST path and query string equivalent to a call, for the envelope's links. */
function restTarget(op: CompiledOperation, params: Record<string, string | undefined>, query: Map<string, string[]>): { path: string; qs: string } {
  const path = fillPath(op, params)
  const qs = new URLSearchParams()
  for (const [k, vs] of query) for (const v of vs) qs.append(k, v)
  return { path, qs: qs.toString() }
}

function tool(operation: CompiledOperation, all: readonly CompiledResource[], orgsTool: string): McpTool {
  const c = operation.resource
  const d = c.decl
  const { tool: name, title, kind: op } = operation
  const specs = argSpecs(operation, all, orgsTool)
  const definition: Tool = {
    name,
    title,
    description: describe(operation, all, orgsTool),
    inputSchema: argsSchema(specs) as Tool['inputSchema'],
    outputSchema: withErrorResult(op === 'list' ? listOutput(c) : getOutput(c)) as Tool['outputSchema'],
    annotations: readOnlyAnnotations(title),
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
  return resources.find((c) => c.decl.scope === 'account' && c.decl.operations.list)?.decl.mcp.list ?? 'the org list'
}

/** Every list and get tool of the registry, in registry order (grouped counts have one tool of their own: count-tool.ts). */
export function resourceTools(resources: readonly CompiledResource[]): McpTool[] {
  const orgsTool = orgsToolOf(resources)
  return allOperations(resources).filter((op) => op.kind !== 'count').map((op) => tool(op, resources, orgsTool))
}
