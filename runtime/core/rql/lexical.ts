/**
 * The vocabulary of RQL filters (docs/rql.md): the operators and their kinds, the character classes of identifiers,
 * whitespace and unquoted values, and how a syntax error is reported (user input quoted, the offset at fault). The
 * parser (parse.ts) and the typing of values (values.ts) follow it.
 */
import { ApiError } from '../errors.ts'

export type OpKind = 'logic' | 'not' | 'cmp' | 'set' | 'null'

export function opKind(name: string): OpKind | undefined {
  switch (name) {
    case 'and': case 'or': return 'logic'
    case 'not': return 'not'
    case 'eq': case 'ne': case 'lt': case 'le': case 'gt': case 'ge': case 'like': case 'ilike': return 'cmp'
    case 'in': case 'out': return 'set'
    case 'isNull': case 'isNotNull': return 'null'
    default: return undefined
  }
}

export const OPERATORS = ['and', 'or', 'not', 'eq', 'ne', 'lt', 'le', 'gt', 'ge', 'like', 'ilike', 'in', 'out', 'isNull', 'isNotNull']

/** A syntax error of the filter at `offset`. */
export function parseError(reason: string, offset: number): never {
  throw new ApiError('filter_parse_error', reason, { parameter: 'filter', offset })
}

/** Quotes a piece of user input for an error message, truncated so messages stay short. */
export function show(s: string): string {
  return JSON.stringify(s.length > 40 ? s.slice(0, 40) + '…' : s)
}

export function isIdentStart(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95
}
export function isIdentPart(c: number): boolean {
  return isIdentStart(c) || (c >= 48 && c <= 57)
}
export function isSpace(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13
}
/** Characters ending an unquoted value: `(` `)` `,` `&` `|`, whitespace and quotes. */
export function endsBare(c: number): boolean {
  return c === 40 || c === 41 || c === 44 || c === 38 || c === 124 || c === 39 || c === 34 || isSpace(c)
}

/** C0 control characters and DEL: never part of a value (PostgreSQL rejects NUL in text; the rest is a mistake). */
export const CONTROL = /[\u0000-\u001f\u007f]/
