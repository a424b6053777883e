/**
 * Tool results. A success carries the whole payload in `structuredContent` — the same envelope and records as
 * REST — and `content[0].text` only says what was returned and how to go on. A failure is `isError: true` with
 * `structuredContent.error` one of the closed MCP codes (runtime/errors.ts `McpErrorCode`); clients match on the
 * code, the message is for people:
 * - `bad_filter`: the REST `code` as `reason`, the `parameter` at fault, and for filter problems the `links` to
 *   the `resource://` lookup of the field's valid values and an `elicitation` a client can show to ask for a
 *   corrected filter;
 * - `rate_limited`: `retryAfterSeconds` and `limit` (the text gives the wait in seconds);
 * - `not_found`, `access_denied` (with the missing `scope` when that is the cause);
 * - `server_error`: `retryable: true`.
 */
import type { CallToolResult } from '@modelcontextprotocol/server'
import { ERROR_CODES, type ApiError } from '../errors.ts'
import type { RateInfo } from '../pipeline/pipeline.ts'
import type { CompiledResource } from '../registry.ts'
import { valuesUri } from './lookups.ts'

export function successResult(text: string, structured: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: structured }
}

function filterHelp(err: ApiError, resource: CompiledResource | undefined): Record<string, unknown> {
  const field = err.extras.field
  if (err.extras.parameter !== 'filter' || !resource) return {}
  const spec = field ? resource.fields.get(field) : undefined
  const links = spec && resource.decl.filterable?.includes(field!) ? [valuesUri(resource.name, field!)] : []
  if (spec?.catalog) links.push(spec.catalog)
  const property: Record<string, unknown> = {
    type: 'string',
    title: 'Filter',
    description: `An RQL filter on ${(resource.decl.filterable ?? []).join(', ')}.`,
  }
  return {
    ...(links.length ? { links } : {}),
    elicitation: {
      message: `The filter was rejected: ${err.message} Enter a corrected filter.`,
      requestedSchema: { type: 'object', properties: { filter: property }, required: ['filter'] },
    },
  }
}

/** The tool error for a failed operation. */
export function errorResult(err: ApiError, rate?: RateInfo, resource?: CompiledResource): CallToolResult {
  const error = ERROR_CODES[err.code].mcp
  const sc: Record<string, unknown> = { error, message: err.message, reason: err.code }
  for (const k of ['parameter', 'offset', 'field', 'allowed'] as const) if (err.extras[k] !== undefined) sc[k] = err.extras[k]
  let text = err.message
  switch (error) {
    case 'bad_filter':
      Object.assign(sc, filterHelp(err, resource))
      break
    case 'rate_limited': {
      const seconds = err.extras.retryAfterSeconds ?? rate?.window?.retryAfterSeconds ?? 1
      sc.retryAfterSeconds = seconds
      sc.limit = err.code === 'rate_limited' ? (rate?.window?.limit ?? 0) : (err.extras.limit ?? 0)
      if (rate?.window) sc.window = rate.window.name
      text = `${err.message} Wait ${seconds} seconds before calling again.`
      break
    }
    case 'access_denied':
      if (err.extras.scope) sc.scope = err.extras.scope
      break
    case 'server_error':
      sc.retryable = true
      break
  }
  return { content: [{ type: 'text', text }], structuredContent: sc, isError: true }
}
