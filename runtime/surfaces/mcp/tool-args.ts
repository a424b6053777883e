/**
 * Arguments of MCP tools: each tool declares its arguments once, as a small table; from it come the argument
 * JSON Schema in `tools/list` and the parsing of `tools/call` arguments into the pipeline's path parameters and
 * query (the same parameters REST takes in its path and query string). An argument of the wrong type, an unknown
 * argument or a missing required one is a 400 `invalid_parameter` / `unknown_parameter` naming the argument.
 */
import { ApiError } from '../../core/errors.ts'
import { didYouMean } from '../../core/nearest.ts'
import type { JsonSchema } from './json-schema.ts'

export type ArgKind =
  /** A string of at most `max` characters. */
  | { type: 'string'; max: number }
  /**
   * An integer in [min, max]; `overMax` says what to do instead of asking for more than `max`; `listMin` false leaves
   * an obvious minimum (a count from 1, an offset from 0) out of the schema (it is checked all the same).
   */
  | { type: 'integer'; min: number; max?: number; overMax?: string; listMin?: boolean; listMax?: boolean }
  /** Repeatable string values (a REST parameter given several times). */
  | { type: 'strings'; max: number }
  /** A record id as records show it: an integer, or text (`encoding` says how REST paths carry it). */
  | { type: 'id'; encoding: 'int' | 'text' | 'base64url' }
  /** Names (of record fields): an array of them, passed on as the comma-separated list REST takes. */
  | { type: 'names'; max: number }

export interface ArgSpec {
  name: string
  kind: ArgKind
  /** Only where the schema does not say it all: the tool list is read, and paid for, by the character. */
  description?: string
  required?: boolean
  /** Where it goes: a path parameter, or a query parameter (named `name` in both). */
  in: 'path' | 'query'
  default?: unknown
}

export interface ParsedArgs {
  params: Record<string, string | undefined>
  query: Map<string, string[]>
}

/**
 * An argument's schema: its type and the bounds an assistant needs to fill it (an integer's range). The length limits
 * of strings and ids are checked when parsing (`stringValue`) but not listed: no sensible value comes near them, and
 * the tool list is paid for by the character.
 */
function schemaOf(a: ArgSpec): JsonSchema {
  const k = a.kind
  let s: JsonSchema
  switch (k.type) {
    case 'string': s = { type: 'string' }; break
    case 'integer': s = { type: 'integer', ...(k.listMin !== false ? { minimum: k.min } : {}), ...(k.max !== undefined && k.listMax !== false ? { maximum: k.max } : {}) }; break
    case 'strings': s = { type: 'array', items: { type: 'string' }, maxItems: k.max }; break
    // An integer id may come as a string of digits: JSON numbers lose digits past 2^53.
    case 'id': s = k.encoding === 'int' ? { type: ['integer', 'string'] } : { type: 'string' }; break
    // Names of record fields (their strings, and how many, are checked when parsing and said in the instructions).
    case 'names': s = { type: 'array' }; break
  }
  return { ...s, ...(a.description ? { description: a.description } : {}), ...(a.default !== undefined ? { default: a.default } : {}) }
}

/**
 * The `inputSchema` of a tool taking these arguments. No `$schema`: MCP reads a schema without one as JSON Schema
 * 2020-12, and every keyword used here means the same in draft-07, so older clients validate it alike. Not closed
 * (`additionalProperties: false`) on the wire, to save its characters in every tool: an unknown argument is refused
 * all the same when the call is parsed (`parseArgs`), naming the nearest known one.
 */
export function argsSchema(args: readonly ArgSpec[]): JsonSchema {
  const properties: Record<string, JsonSchema> = {}
  for (const a of args) properties[a.name] = schemaOf(a)
  const required = args.filter((a) => a.required).map((a) => a.name)
  return { type: 'object', properties, ...(required.length ? { required } : {}) }
}

const bad = (parameter: string, detail: string) => new ApiError('invalid_parameter', detail, { parameter })
/** A malformed record id: the code REST answers for the same id in its path. */
const badId = (parameter: string, detail: string) => new ApiError('invalid_id', detail, { parameter })

function stringValue(a: ArgSpec, v: unknown): string {
  const k = a.kind
  switch (k.type) {
    case 'string':
      if (typeof v !== 'string') throw bad(a.name, `${a.name} must be a string.`)
      if (v.length > k.max) throw bad(a.name, `${a.name} must be at most ${k.max} characters.`)
      return v
    case 'integer':
      if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw bad(a.name, `${a.name} must be an integer.`)
      if (v < k.min) throw bad(a.name, `${a.name} must be at least ${k.min}.`)
      if (k.max !== undefined && v > k.max) throw bad(a.name, `${a.name} must be at most ${k.max}${k.overMax ? `; ${k.overMax}` : ''}.`)
      return String(v)
    case 'id':
      if (k.encoding === 'int') {
        if (typeof v === 'number' && Number.isSafeInteger(v) && v > 0) return String(v)
        if (typeof v === 'string' && /^[1-9][0-9]{0,17}$/.test(v)) return v
        // A JSON number past 2^53 has already lost digits when it is read: it cannot name a record reliably.
        if (typeof v === 'number' && Number.isInteger(v) && v > Number.MAX_SAFE_INTEGER) throw badId(a.name, `${a.name} is beyond 2^53 as a JSON number, where digits are lost; send it as a string of digits.`)
        throw badId(a.name, `${a.name} must be a positive integer of at most 18 digits (a number, or a string of digits).`)
      }
      if (typeof v !== 'string' || v.length === 0 || v.length > 512) throw badId(a.name, `${a.name} must be a string of 1 to 512 characters.`)
      // REST carries this id Base64URL-encoded in its path; MCP takes it as the records show it.
      return k.encoding === 'base64url' ? Buffer.from(v, 'utf8').toString('base64url') : v
    case 'names':
      // An array of names; a comma-separated string too, as REST takes it.
      if (typeof v === 'string') return v
      if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw bad(a.name, `${a.name} must be an array of field names.`)
      if (v.length === 0) throw bad(a.name, `${a.name} must name at least one field.`)
      if (v.length > k.max) throw bad(a.name, `${a.name} may name at most ${k.max} fields.`)
      return v.join(',')
    case 'strings':
      throw new Error('unreachable')
  }
}

/** Parses `tools/call` arguments against the specs. */
export function parseArgs(specs: readonly ArgSpec[], raw: unknown): ParsedArgs {
  const args = raw === undefined || raw === null ? {} : raw
  if (typeof args !== 'object' || Array.isArray(args)) throw bad('arguments', 'arguments must be an object.')
  const out: ParsedArgs = { params: {}, query: new Map() }
  const known = new Set(specs.map((s) => s.name))
  for (const name of Object.keys(args)) {
    if (!known.has(name)) {
      throw new ApiError('unknown_parameter', `Unknown argument "${name.slice(0, 64)}"${didYouMean(name, [...known]) || '.'}`, { parameter: name.slice(0, 64), allowed: [...known] })
    }
  }
  for (const a of specs) {
    const v = (args as Record<string, unknown>)[a.name]
    if (v === undefined || v === null) {
      if (a.required) throw bad(a.name, `${a.name} is required.`)
      continue
    }
    if (a.kind.type === 'strings') {
      const k = a.kind
      if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw bad(a.name, `${a.name} must be an array of strings.`)
      if (v.length > k.max) throw bad(a.name, `${a.name} may have at most ${k.max} values.`)
      if (v.length > 0) out.query.set(a.name, v as string[])
      continue
    }
    const s = stringValue(a, v)
    if (a.in === 'path') out.params[a.name] = s
    else out.query.set(a.name, [s])
  }
  return out
}
