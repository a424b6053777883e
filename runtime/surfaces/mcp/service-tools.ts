/**
 * The tools that are not resources: `get_account_quota` (the quota record, the same data as REST's
 * `/v1/account/quota`, consuming nothing) and `server_info` (the MCP version table, as `GET /` gives it: each
 * version's status, and its sunset date once deprecated). Both are free.
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/server'
import type { Clock } from '../../core/config-types.ts'
import { discoveryPayload, type VersionSource } from '../../core/version-state.ts'
import { argsSchema, parseArgs } from './tool-args.ts'
import { leanShape } from './json-schema.ts'
import { toApiError } from '../../core/errors.ts'
import { errorResult, successResult, withErrorResult } from './tool-results.ts'
import { readOnlyAnnotations, type McpTool } from './resource-tools.ts'

const windowSchema = {
  type: 'object',
  properties: {
    limit: { type: 'integer' },
    remaining: { type: 'integer' },
    resetAt: { type: 'string', format: 'date-time' },
  },
  required: ['limit', 'remaining', 'resetAt'],
  additionalProperties: false,
}

/** The quota answer, the same on both surfaces: `structuredContent` here, the body of REST's `/v1/account/quota` (its OpenAPI schema). */
export const QUOTA_SCHEMA = {
  type: 'object',
  properties: {
    data: {
      type: 'object',
      properties: { rateLimit: { type: 'object', properties: { daily: windowSchema, monthly: windowSchema }, required: ['daily', 'monthly'], additionalProperties: false } },
      required: ['rateLimit'],
      additionalProperties: false,
    },
  },
  required: ['data'],
  additionalProperties: false,
}

/** These tools take no arguments: any argument is `bad_filter` naming it, as on every other tool (free here, as the tools are). */
function refuseArguments(args: unknown): CallToolResult | undefined {
  try {
    parseArgs([], args)
    return undefined
  } catch (e) {
    return errorResult(toApiError(e))
  }
}

function definition(name: string, title: string, description: string, output: Record<string, unknown>): Tool {
  return {
    name,
    title,
    description,
    inputSchema: argsSchema([]) as Tool['inputSchema'],
    outputSchema: withErrorResult(leanShape({ type: 'object', ...output })) as Tool['outputSchema'],
    annotations: readOnlyAnnotations(),
  }
}

export function quotaTool(): McpTool {
  return {
    definition: definition(
      'get_account_quota',
      'Get account quota',
      "The account's request quota: limit, remaining and resetAt of the daily and monthly windows (UTC days and months), shared with REST. Free.",
      QUOTA_SCHEMA,
    ),
    scope: 'mcp:read',
    async run(args, ctx) {
      const refused = refuseArguments(args)
      if (refused) return refused
      const out = await ctx.pipeline.execute(ctx.principal, { kind: 'quota' }, 'mcp')
      if (!out.ok) return errorResult(out.error, out.rate)
      if (out.kind !== 'quota') throw new Error('a quota operation answered with another kind of outcome')
      // The text only points at the payload, as on every tool.
      return successResult('The daily and monthly windows (limit, remaining, resetAt) in structuredContent.data.rateLimit.', { data: { rateLimit: out.state } })
    },
  }
}

export function serverInfoTool(versions: VersionSource, clock: Clock): McpTool {
  return {
    definition: definition(
      'server_info',
      'Server info',
      'The versions of this MCP server, each current or deprecated; a deprecated one stops answering on its sunsetDate. Free.',
      {
        properties: {
          versions: {
            type: 'array',
            items: {
              type: 'object',
              properties: { name: { type: 'string' }, status: { type: 'string', enum: ['current', 'deprecated'] }, sunsetDate: { type: 'string', format: 'date' } },
              required: ['name', 'status'],
            },
          },
        },
        required: ['versions'],
      },
    ),
    scope: 'mcp:read',
    async run(args) {
      const refused = refuseArguments(args)
      if (refused) return refused
      const payload = discoveryPayload(versions.rows('mcp'), clock)
      return successResult(`${payload.versions.length === 1 ? 'One version' : `${payload.versions.length} versions`} (name, status, sunsetDate once deprecated) in structuredContent.versions.`, payload)
    },
  }
}
