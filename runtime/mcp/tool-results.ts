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

/**
 * The key of a placeholder `structuredContent`, `{"orgscan:raw-json": "<slot>"}`, standing for JSON text kept in
 * the request's slot map: the transport that serialises the answer puts the text in its place (`spliceRawJson`), so
 * records PostgreSQL already rendered as JSON are not parsed into objects only to be serialised again.
 */
export const RAW_SLOT = 'orgscan:raw-json'

/** A success whose payload is JSON text: by reference when the transport splices (`slots`), else parsed. */
export function jsonResult(text: string, json: string, slots: Map<string, string> | undefined): CallToolResult {
  if (!slots) return successResult(text, JSON.parse(json) as Record<string, unknown>)
  const slot = String(slots.size)
  slots.set(slot, json)
  return successResult(text, { [RAW_SLOT]: slot })
}

/** Serialises a JSON-RPC answer, putting each placeholder's JSON text in its place. */
export function spliceRawJson(answer: unknown, slots: Map<string, string>): string {
  const sc = (answer as { result?: { structuredContent?: Record<string, unknown> } }).result?.structuredContent
  const slot = sc?.[RAW_SLOT]
  if (typeof slot !== 'string' || !slots.has(slot) || Object.keys(sc!).length !== 1) return JSON.stringify(answer)
  const marker = `\u0000${RAW_SLOT}:${slot}`
  const result = (answer as { result: Record<string, unknown> }).result
  const text = JSON.stringify({ ...(answer as object), result: { ...result, structuredContent: marker } })
  const at = text.indexOf(JSON.stringify(marker))
  return text.slice(0, at) + slots.get(slot)! + text.slice(at + JSON.stringify(marker).length)
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
