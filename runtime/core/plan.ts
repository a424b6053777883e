/**
 * Parse + plan stages: turn path and query parameters into a validated plan.
 * Shared by REST and MCP; the surface only changes how an over-large limit is treated (docs/contract.md §4.1/§4.3:
 * REST clamps to 200, MCP rejects).
 */
import { ApiError } from './errors.ts'
import type { CompiledResource } from './registry.ts'
import { parseSort, type SortKey } from './sort.ts'
import { parseRql, type RqlNode } from './rql/index.ts'
import { queryParam, valuesOf, type CompiledOperation } from './operations.ts'
import { PAGE_INSTEAD } from './limits.ts'

export type Surface = 'rest' | 'mcp'

/** Query input, surface-neutral: every value is a string or a list of strings (repeatable params). */
export type QueryInput = ReadonlyMap<string, readonly string[]>

export interface ListPlan {
  op: 'list'
  limit: number
  /** The limit the caller asked for, when it was clamped (REST). */
  requestedLimit?: number
  offset: number
  filter: RqlNode | undefined
  /** True when the caller supplied `filter` (it replaces the default filter). */
  filterGiven: boolean
  sort: readonly SortKey[]
  /** Sparse fieldset; undefined means all list fields. */
  fields: readonly string[] | undefined
  extra: Record<string, string[]>
  parentId?: string
}

export interface GetPlan {
  op: 'get'
  /** The decoded id value (undefined for singletons). */
  id?: string
  /** Sparse fieldset; undefined means every field. */
  fields: readonly string[] | undefined
  extra: Record<string, string[]>
}

export interface CountPlan {
  op: 'count'
  /** The fields to group by, as given (1 to MAX_GROUP_BY of the resource's groupable fields). */
  by: readonly string[]
  filter: RqlNode | undefined
  filterGiven: boolean
  /** Groups in the answer at most; `requestedLimit` when a larger one was clamped (REST). */
  limit: number
  requestedLimit?: number
}

export type Plan = ListPlan | GetPlan | CountPlan

const INT = /^(0|[1-9][0-9]*)$/
const POSITIVE_INT = /^[1-9][0-9]*$/
/** C0 control characters (NUL, tab, newline…): never part of a path id written as text. */
const CONTROL = /[\u0000-\u001f]/

/**
 * A parameter's value: a list parameter (runtime/core/operations.ts `valuesOf`) given several times is its
 * occurrences joined, so `sort=a&sort=b` is `sort=a,b` (the form most generated clients send an array in); any other
 * parameter given twice is refused.
 */
function single(op: CompiledOperation, q: QueryInput, name: string): string | undefined {
  const v = q.get(name)
  if (v === undefined) return undefined
  if (v.length === 1) return v[0]
  const p = op.queryParams.find((x) => x.name === name)
  if (p !== undefined && valuesOf(p) === 'list') return v.join(',')
  throw new ApiError('invalid_parameter', `${name} may be given only once.`, { parameter: name })
}

function nonNegativeInt(raw: string, name: string, max: number): number {
  if (!INT.test(raw)) throw new ApiError('invalid_parameter', `${name} must be a non-negative integer.`, { parameter: name })
  const n = Number(raw)
  if (n > max) throw new ApiError('invalid_parameter', `${name} must be at most ${max}.`, { parameter: name })
  return n
}

function rejectUnknown(op: CompiledOperation, q: QueryInput): void {
  for (const name of q.keys()) {
    if (!op.queryParams.some((p) => p.name === name)) {
      throw new ApiError('unknown_parameter', `Unknown query parameter "${name.slice(0, 64)}".`, {
        parameter: name.slice(0, 64),
        allowed: op.queryParams.map((p) => p.name),
      })
    }
  }
}

function extraOf(op: CompiledOperation, q: QueryInput): Record<string, string[]> {
  const extra: Record<string, string[]> = Object.create(null)
  for (const p of op.queryParams) {
    if (p.type !== 'strings') continue
    const v = q.get(p.name)
    if (!v) continue
    if (v.length > p.maxValues) throw new ApiError('invalid_parameter', `${p.name} may be given at most ${p.maxValues} times.`, { parameter: p.name })
    for (const s of v) {
      if (s.length === 0 || s.length > p.maxValueLength) throw new ApiError('invalid_parameter', `${p.name} values must be 1 to ${p.maxValueLength} characters.`, { parameter: p.name })
      // PostgreSQL text cannot hold NUL, so no stored value has one (other control characters can be imported).
      if (s.includes('\u0000')) throw new ApiError('invalid_parameter', `${p.name} values must not contain NUL.`, { parameter: p.name })
    }
    extra[p.name] = [...v]
  }
  return extra
}

/**
 * The sparse fieldset asked for (`fields=a,b`), in declaration order and with the record's id; undefined for every
 * field. An unknown name is a 400 listing the names the operation has.
 */
function fieldsOf(op: CompiledOperation, q: QueryInput): string[] | undefined {
  const raw = single(op, q, 'fields')
  const fieldset = queryParam(op, 'fields')
  if (raw === undefined || !fieldset) return undefined
  if (raw.length > fieldset.maxLength) throw new ApiError('invalid_parameter', `fields must be at most ${fieldset.maxLength} characters.`, { parameter: 'fields' })
  const asked: string[] = []
  for (const f of raw.split(',').map((s) => s.trim())) {
    if (!fieldset.fields.includes(f)) {
      throw new ApiError('unknown_field', `Unknown field "${f.slice(0, 64)}" in fields; the fields are ${fieldset.fields.join(', ')}.`, { parameter: 'fields', field: f.slice(0, 64), allowed: fieldset.fields })
    }
    if (asked.includes(f)) throw new ApiError('invalid_parameter', `Field "${f}" is given twice in fields.`, { parameter: 'fields', field: f })
    asked.push(f)
  }
  return fieldset.fields.filter((n) => asked.includes(n) || n === fieldset.key)
}

/** The page size asked for: the operation's default, the value given, or (REST) its maximum when more was asked for. */
function limitOf(op: CompiledOperation, q: QueryInput, surface: Surface): { limit: number; requestedLimit?: number } {
  const limits = queryParam(op, 'limit')
  if (!limits) return { limit: Number.MAX_SAFE_INTEGER }
  const rawLimit = single(op, q, 'limit')
  if (rawLimit === undefined) return { limit: limits.default }
  // One wording for every limit that is not a whole number of at least 1 (0, -1, 1.5, abc). Any whole number
  // above the maximum, however many digits it has, is clamped on REST (reported as `requestedLimit`, at most
  // 2^53 - 1 so that it stays an exact JSON number) and refused on MCP.
  if (!POSITIVE_INT.test(rawLimit)) throw new ApiError('invalid_parameter', 'limit must be a whole number of at least 1.', { parameter: 'limit' })
  const n = Number(rawLimit)
  if (n <= limits.max) return { limit: n }
  if (surface === 'mcp') throw new ApiError('invalid_parameter', `limit must be at most ${limits.max}; ${PAGE_INSTEAD}.`, { parameter: 'limit' })
  return { limit: limits.max, requestedLimit: Math.min(n, Number.MAX_SAFE_INTEGER) }
}

/** The filter: the one given (an empty one means none), else the resource's default filter. */
function filterOf(c: CompiledResource, op: CompiledOperation, q: QueryInput): { filter: RqlNode | undefined; filterGiven: boolean } {
  const raw = single(op, q, 'filter')
  if (raw === undefined) return { filter: c.defaultFilter, filterGiven: false }
  return { filter: raw.trim() === '' ? undefined : parseRql(raw), filterGiven: true }
}

/** A grouped count: the fields to group by (required), the filter, and how many groups. */
export function planCount(c: CompiledResource, q: QueryInput, surface: Surface): CountPlan {
  const op = c.ops.count!
  rejectUnknown(op, q)
  const groupBy = queryParam(op, 'groupBy')!
  const raw = single(op, q, 'by')
  if (raw === undefined || raw.trim() === '') {
    throw new ApiError('invalid_parameter', `by is required: the fields to count by, among ${groupBy.fields.join(', ')}.`, { parameter: 'by', allowed: groupBy.fields })
  }
  const by: string[] = []
  for (const f of raw.split(',').map((x) => x.trim())) {
    if (!groupBy.fields.includes(f)) {
      throw new ApiError('unknown_field', `Cannot count by "${f.slice(0, 64)}"; the fields to count by are ${groupBy.fields.join(', ')}.`, { parameter: 'by', field: f.slice(0, 64), allowed: groupBy.fields })
    }
    if (by.includes(f)) throw new ApiError('invalid_parameter', `Field "${f}" is given twice in by.`, { parameter: 'by', field: f })
    by.push(f)
  }
  if (by.length > groupBy.maxItems) throw new ApiError('invalid_parameter', `by takes at most ${groupBy.maxItems} fields.`, { parameter: 'by' })
  return { op: 'count', by, ...filterOf(c, op, q), ...limitOf(op, q, surface) }
}

export function planList(c: CompiledResource, q: QueryInput, surface: Surface, parentId?: string): ListPlan {
  const op = c.ops.list!
  rejectUnknown(op, q)
  const { limit, requestedLimit } = limitOf(op, q, surface)
  let offset = 0
  const offsets = queryParam(op, 'offset')
  if (offsets) {
    const rawOffset = single(op, q, 'offset')
    if (rawOffset !== undefined) offset = nonNegativeInt(rawOffset, 'offset', offsets.max)
  }
  const { filter, filterGiven } = filterOf(c, op, q)
  const rawSort = single(op, q, 'sort')
  const sorts = queryParam(op, 'sort')
  const sort = rawSort === undefined || !sorts ? c.defaultSort : parseSort(rawSort, sorts.fields, 'sort', sorts.maxLength)
  const fields = fieldsOf(op, q)
  return { op: 'list', limit, requestedLimit, offset, filter, filterGiven, sort, fields, extra: extraOf(op, q), parentId }
}

const B64URL = /^[A-Za-z0-9_-]+$/

/** Decodes and validates a path id according to the declaration (docs/contract.md §2 identifier rules). */
export function decodeId(c: CompiledResource, raw: string): string {
  const spec = c.decl.id!
  const parameter = spec.param
  if (raw.length === 0 || raw.length > 512) throw new ApiError('invalid_id', `${parameter} must be 1 to 512 characters.`, { parameter })
  switch (spec.encoding) {
    case 'int':
      if (!POSITIVE_INT.test(raw) || raw.length > 18) throw new ApiError('invalid_id', `${parameter} must be a positive integer of at most 18 digits.`, { parameter })
      return raw
    case 'base64url': {
      const s = raw.replace(/=+$/, '')
      if (!B64URL.test(s) || s.length % 4 === 1) throw new ApiError('invalid_id', `${parameter} must be Base64URL encoded.`, { parameter })
      const text = Buffer.from(s, 'base64url').toString('utf8')
      if (text.length === 0 || text.includes('\uFFFD') || Buffer.from(text, 'utf8').toString('base64url') !== s) {
        throw new ApiError('invalid_id', `${parameter} is not valid Base64URL-encoded UTF-8.`, { parameter })
      }
      // PostgreSQL text cannot hold NUL, so no key has one; other control characters can be imported in a key.
      if (text.includes('\u0000')) throw new ApiError('invalid_id', `${parameter} decodes to text with a NUL character.`, { parameter })
      return text
    }
    case 'text':
      if (CONTROL.test(raw)) throw new ApiError('invalid_id', `${parameter} contains control characters.`, { parameter })
      return raw
  }
}

export function planGet(c: CompiledResource, q: QueryInput, rawId?: string): GetPlan {
  const op = c.ops.get!
  rejectUnknown(op, q)
  return { op: 'get', id: rawId === undefined ? undefined : decodeId(c, rawId), fields: fieldsOf(op, q), extra: extraOf(op, q) }
}
