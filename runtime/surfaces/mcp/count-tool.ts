/**
 * `count_org_records`: the grouped counts of every resource that declares fields to group by, as one tool (an
 * assistant carries one tool, not one per resource). It takes the REST endpoint's parameters
 * (`GET /v1/orgs/{orgId}/counts/{resource}`) plus the resource, runs the same pipeline and answers the same body in
 * structuredContent: `{data: [{<by fields>…, count}], meta: {total, groups, limit, hasMore}}`.
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/server'
import { ApiError, isApiError } from '../../core/errors.ts'
import { planCount } from '../../core/plan.ts'
import { compileFilter } from '../../core/rql/index.ts'
import type { CompiledResource } from '../../core/registry.ts'
import { COUNT_TOOL, fillPath, queryParam, type CompiledOperation } from '../../core/operations.ts'
import { renderRead, renderReadParts } from '../../core/envelope.ts'
import type { JsonSchema } from './json-schema.ts'
import { argsSchema, parseArgs, type ArgSpec } from './tool-args.ts'
import { errorResult, jsonResult, withErrorResult } from './tool-results.ts'
import { orgsToolOf, readOnlyAnnotations, type McpTool } from './resource-tools.ts'

/** Lean, as every tool's (resource-tools.ts): names and types, nothing required, nothing closed. */
const OUTPUT: JsonSchema = {
  properties: {
    data: { type: 'array', items: { properties: { count: { type: 'integer' } } } },
    meta: { properties: { total: { type: 'integer' }, groups: { type: 'integer' }, hasMore: { type: 'boolean' } } },
  },
}

/** The tool over the count operations of the registry; none when no resource declares fields to group by. */
export function countTool(resources: readonly CompiledResource[]): McpTool[] {
  const orgsTool = orgsToolOf(resources)
  const ops = resources.map((c) => c.ops.count).filter((o): o is CompiledOperation => o !== undefined)
  if (ops.length === 0) return []
  const byName = new Map(ops.map((o) => [o.resource.name, o]))
  const first = ops[0]
  const limit = queryParam(first, 'limit')!
  const maxBy = queryParam(first, 'groupBy')!.maxItems
  const specs: ArgSpec[] = [
    { name: 'orgId', in: 'path', required: true, kind: { type: 'string', max: 18 } },
    { name: 'resource', in: 'path', required: true, kind: { type: 'string', max: 64 }, description: `The records to count, e.g. ${[...byName.keys()].filter((n) => n === 'fields' || n === 'issues').join(' or ') || first.resource.name}; a wrong one is refused with the allowed ones.` },
    { name: 'by', in: 'query', required: true, kind: { type: 'names', max: maxBy }, description: `1 to ${maxBy} fields to group by; a wrong one is refused with the allowed ones.` },
    { name: 'filter', in: 'query', kind: { type: 'string', max: queryParam(first, 'filter')?.maxLength ?? 4096 }, description: "RQL (service://rql) on the resource's filterable fields." },
    { name: 'limit', in: 'query', kind: { type: 'integer', min: limit.min, max: limit.max }, default: limit.default },
  ]
  const input = argsSchema(specs)
  const definition: Tool = {
    name: COUNT_TOOL,
    title: 'Count records by group',
    description: `Records counted per combination of the by fields' values, most first. meta.total: records matched; meta.groups: groups. orgId from ${orgsTool}.`,
    inputSchema: input as Tool['inputSchema'],
    outputSchema: withErrorResult(OUTPUT) as Tool['outputSchema'],
    annotations: readOnlyAnnotations(),
  }
  return [
    {
      definition,
      scope: 'mcp:read',
      check(args) {
        const { params, query } = parseArgs(specs, args)
        const op = byName.get(params.resource ?? '')
        if (!op) throw unknownResource(params.resource, byName)
        // As the read would plan it: the by fields, the filter and the limit (prompt steps are checked with this).
        const plan = planCount(op.resource, query, 'mcp')
        if (plan.filter) compileFilter(plan.filter, op.resource.decl.fields, op.resource.decl.filterable ?? [], () => '$1')
      },
      async run(args, ctx): Promise<CallToolResult> {
        let parsed: ReturnType<typeof parseArgs> | undefined
        let mistake: unknown
        try {
          parsed = parseArgs(specs, args)
          if (!byName.has(parsed.params.resource ?? '')) throw unknownResource(parsed.params.resource, byName)
        } catch (e) {
          if (!isApiError(e)) throw e
          mistake = e
        }
        // A mistake is reported by the pipeline, after the charge, as every tool's is (on the first count operation).
        const op = (parsed && byName.get(parsed.params.resource!)) ?? first
        const params = { orgId: parsed?.params.orgId }
        const query = () => {
          if (!parsed || mistake) throw mistake
          return parsed.query
        }
        const out = await ctx.pipeline.execute(ctx.principal, { kind: 'read', resource: op.resource, op: 'count', params, query, lend: ctx.rawJson !== undefined }, 'mcp')
        if (!out.ok) return errorResult(out.error, out.rate, op.resource)
        if (out.kind !== 'read' || out.result.kind !== 'counts') throw new Error('a count answered with another kind of outcome')
        const r = out.result
        const path = fillPath(op, params)
        const body = r.dataBytes && ctx.rawJson ? renderReadParts(r as typeof r & { dataBytes: Buffer }, path, '') : renderRead(r, path, '')
        const more = r.hasMore ? ` ${r.groups - r.count} more groups: call again with a larger limit or a narrower filter.` : ''
        return jsonResult(`${r.total} ${op.resource.name} in ${r.groups} groups; the ${r.count} largest in structuredContent.data.${more}`, body, ctx.rawJson, r.release)
      },
    },
  ]
}

function unknownResource(name: string | undefined, byName: ReadonlyMap<string, CompiledOperation>): ApiError {
  return new ApiError('invalid_parameter', `resource must be one of ${[...byName.keys()].join(', ')}; got "${String(name ?? '').slice(0, 64)}".`, { parameter: 'resource', allowed: [...byName.keys()] })
}
