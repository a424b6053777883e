/**
 * PostgreSQL COPY text format for imported records: one line per row, columns separated by a tab, `\N` for NULL, and
 * backslash, newline, carriage return and tab escaped with a backslash in every value. Arrays are array literals
 * with every element double-quoted (so `NULL`, braces, commas and blanks stay text), themselves escaped as a value.
 */
import type { FieldSpec } from '../../core/fields.ts'

const SPECIAL = /[\\\n\r\t]/
const SPECIAL_ALL = /[\\\n\r\t]/g
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' }

/** A text value escaped for COPY's text format. */
export function copyEscape(s: string): string {
  return SPECIAL.test(s) ? s.replace(SPECIAL_ALL, (c) => ESCAPES[c]) : s
}

/** A text[] value as an array literal: `{"a","b \"c\""}` (before COPY escaping). */
export function arrayLiteral(items: readonly string[]): string {
  let out = '{'
  for (let i = 0; i < items.length; i++) out += (i ? ',"' : '"') + items[i].replace(/["\\]/g, '\\$&') + '"'
  return out + '}'
}

export type CopyEncoder = (value: unknown) => string

/** The encoder of one column: the wire value (already validated for its kind) → COPY text. */
export function copyEncoder(spec: FieldSpec): CopyEncoder {
  const nullable = (enc: CopyEncoder): CopyEncoder => (x) => (x === null || x === undefined ? '\\N' : enc(x))
  switch (spec.kind) {
    case 'int':
    case 'num':
      // Integers are within ±2^53 and numbers finite (validated), so String() is exact and what float8/bigint parse.
      return nullable((x) => String(x))
    case 'bool':
      return nullable((x) => (x ? 't' : 'f'))
    case 'textArray':
      return nullable((x) => copyEscape(arrayLiteral(x as string[])))
    case 'json':
      return nullable((x) => copyEscape(JSON.stringify(x)))
    default:
      return nullable((x) => copyEscape(String(x)))
  }
}
