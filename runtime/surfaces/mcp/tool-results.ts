/**
 * Tool results. A success carries the whole payload in `structuredContent` — the same envelope and records as
 * REST — and `content[0].text` only says what was returned and how to go on. A failure is `isError: true` with
 * `structuredContent.error` one of the closed MCP codes (runtime/core/errors.ts `McpErrorCode`); clients match on the
 * code, the message is for people:
 * - `bad_filter`: the REST `code` as `reason`, the `parameter` at fault, and for filter problems the `links` to
 *   the `resource://` lookup of the field's valid values and an `elicitation` a client can show to ask for a
 *   corrected filter; the text says the offset and names the links and the filter grammar too;
 * - `rate_limited`: `retryAfterSeconds` and `limit` (the text gives the wait in seconds);
 * - `not_found`, `access_denied` (with the missing `scope` when that is the cause);
 * - `server_error`: `retryable: true`.
 */
import type { CallToolResult } from '@modelcontextprotocol/server'
import { ERROR_CODES, type ApiError } from '../../core/errors.ts'
import type { RateInfo } from '../../core/pipeline.ts'
import type { CompiledResource } from '../../core/registry.ts'
import { valuesUri } from './lookups.ts'
import { RQL_URI } from './rql-guide.ts'
import type { JsonSchema } from './json-schema.ts'

/**
 * The `structuredContent` of an error result (`errorResult` below), as JSON Schema: what the MCP reference documents.
 * Every tool's output schema admits it beside the success shape (`withErrorResult`), in a lean form.
 */
export const ERROR_RESULT_SCHEMA: JsonSchema = {
  type: 'object',
  description: 'An error result (isError: true). Match on `error`; `message` is for people.',
  properties: {
    error: { enum: [...new Set(Object.values(ERROR_CODES).map((e) => e.mcp))] },
    message: { type: 'string' },
    reason: { type: 'string', description: 'The REST error code (docs/reference/errors.md).' },
    parameter: { type: 'string', description: 'The argument at fault.' },
    offset: { type: 'integer', description: 'Where in the filter the problem is.' },
    field: { type: 'string' },
    allowed: { type: 'array', description: 'The values or fields that are accepted.' },
    links: { type: 'array', items: { type: 'string' }, description: 'bad_filter: the resource:// lookups of the valid values.' },
    elicitation: { type: 'object', description: 'bad_filter: a form to ask for a corrected filter.' },
    retryAfterSeconds: { type: 'integer', description: 'rate_limited: seconds to wait.' },
    limit: { type: 'integer', description: 'rate_limited: the limit of the blocking window; with reason concurrency_limited, the requests of the account that may run at once.' },
    window: { type: 'string', description: 'rate_limited with reason rate_limited: the blocking window (daily, monthly); absent for concurrency_limited.' },
    scope: { type: 'string', description: 'access_denied: the scope the credential lacks.' },
    retryable: { type: 'boolean', description: 'server_error: always true.' },
  },
  required: ['error', 'message', 'reason'],
}

/**
 * A tool's output schema: the success shape, written so that the error result conforms to it too. The MCP
 * specification asks structured results to conform to the tool's output schema, and clients check error results too
 * (the v1 TypeScript SDK throws away an error result that does not conform, and with it its code). Rather than an
 * `anyOf` of both shapes, which every tool's list entry would repeat, the success shape requires nothing, admits other
 * members and names no member an error result has: an error result is an object of other members
 * (`ERROR_RESULT_SCHEMA`, documented once in the MCP reference and the server's instructions). No `$schema`: MCP reads
 * a schema without one as JSON Schema 2020-12, and the keywords used mean the same in draft-07.
 */
export function withErrorResult(success: JsonSchema): JsonSchema {
  const { $schema: _dialect, required: _required, additionalProperties: _closed, ...rest } = success
  const errorMembers = Object.keys(ERROR_RESULT_SCHEMA.properties as object)
  const clash = Object.keys((rest.properties as object | undefined) ?? {}).find((k) => errorMembers.includes(k))
  if (clash) throw new Error(`an output schema may not name ${clash}, a member of the error result`)
  return { type: 'object', ...rest }
}

export function successResult(text: string, structured: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: structured }
}

/**
 * The key of a placeholder `structuredContent`, `{"orgscan:raw-json": "<slot>"}`, standing for JSON kept in the
 * request's `RawJson`: the transport that serialises the answer puts the JSON in its place (`spliceRawJson`), so
 * records PostgreSQL already rendered as JSON are not parsed into objects only to be serialised again.
 */
export const RAW_SLOT = 'orgscan:raw-json'

/**
 * JSON a transport writes itself in place of placeholders, for one request: text, or byte parts written one after
 * the other — records lent by the response cache, valid until `releaseAll()`, which the transport calls once the
 * answer has been written (or will not be).
 */
export class RawJson {
  private readonly slots = new Map<string, string | readonly Buffer[]>()
  private releases: Array<() => void> = []

  /** Keeps `json` and returns its slot; `release` (bytes lent) is called by `releaseAll()`. */
  add(json: string | readonly Buffer[], release?: () => void): string {
    const slot = String(this.slots.size)
    this.slots.set(slot, json)
    if (release) this.releases.push(release)
    return slot
  }

  get(slot: string): string | readonly Buffer[] | undefined {
    return this.slots.get(slot)
  }

  /** Whether it holds bytes lent by the response cache (to give back with `releaseAll()`). */
  get lends(): boolean {
    return this.releases.length > 0
  }

  /** Gives back every lent part; they must not be read after this. Idempotent. */
  releaseAll(): void {
    const rs = this.releases
    this.releases = []
    for (const r of rs) r()
  }
}

/**
 * A success whose payload is JSON: by reference when the transport splices (`raw`: text, or bytes lent by the response
 * cache with their `release`), else parsed from text (a read lends bytes only to a transport that splices).
 */
export function jsonResult(text: string, json: string | readonly Buffer[], raw: RawJson | undefined, release?: () => void): CallToolResult {
  if (raw) return successResult(text, { [RAW_SLOT]: raw.add(json, release) })
  if (typeof json !== 'string') throw new Error('records lent as bytes to a transport that does not write them')
  return successResult(text, JSON.parse(json) as Record<string, unknown>)
}

/**
 * Serialises a JSON-RPC answer, putting a placeholder's JSON in its place: text, or (JSON kept as bytes) the parts
 * to write one after the other.
 */
export function spliceRawJson(answer: unknown, raw: RawJson): string | Buffer[] {
  const sc = (answer as { result?: { structuredContent?: Record<string, unknown> } }).result?.structuredContent
  const slot = sc?.[RAW_SLOT]
  const json = typeof slot === 'string' ? raw.get(slot) : undefined
  if (json === undefined || Object.keys(sc!).length !== 1) return JSON.stringify(answer)
  const marker = `\u0000${RAW_SLOT}:${slot}`
  const quoted = JSON.stringify(marker)
  const result = (answer as { result: Record<string, unknown> }).result
  const text = JSON.stringify({ ...(answer as object), result: { ...result, structuredContent: marker } })
  const at = text.indexOf(quoted)
  const [before, after] = [text.slice(0, at), text.slice(at + quoted.length)]
  if (typeof json === 'string') return before + json + after
  return [Buffer.from(before), ...json, Buffer.from(after)]
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

/**
 * The text of a `bad_filter` result: the message, where in the argument the problem is, and the documents that help
 * (the field's valid values, the filter grammar), for a client that shows the text only.
 */
function badFilterText(err: ApiError, links: readonly string[]): string {
  const parts = [/[.?!]$/.test(err.message) ? err.message : `${err.message}.`]
  const { offset, parameter } = err.extras
  if (offset !== undefined && parameter) parts.push(`At offset ${offset} of ${parameter}.`)
  if (links.length) parts.push(`Valid values: ${links.join(', ')}.`)
  if (parameter === 'filter') parts.push(`Filter grammar: ${RQL_URI}.`)
  return parts.join(' ')
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
      text = badFilterText(err, (sc.links as string[] | undefined) ?? [])
      break
    case 'rate_limited': {
      const seconds = err.extras.retryAfterSeconds ?? rate?.window?.retryAfterSeconds ?? 1
      sc.retryAfterSeconds = seconds
      // The quota: the limit of the blocking window, named. Fair share (concurrency_limited): the account's requests
      // in progress at once, and no window, since none is spent.
      sc.limit = err.code === 'rate_limited' ? (rate?.window?.limit ?? 0) : (err.extras.limit ?? 0)
      if (err.code === 'rate_limited' && rate?.window) sc.window = rate.window.name
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
