/**
 * The RQL filter AST and the literal grammar shared by parser and compiler (docs/rql.md). Small and closed: logical nodes, comparisons, set membership and null tests.
 * Every node and literal carries the character offset (UTF-16 code units) where it starts in the filter text, so
 * that later stages can point errors at it.
 */

/** A literal's value after parsing. Dates are `Date` objects (UTC). */
export type RqlValue = string | number | boolean | null | Date

/** One literal as written. */
export interface RqlLiteral {
  readonly value: RqlValue
  /**
   * Present when the literal was written bare (unquoted, no `type:` prefix) and its type was inferred: the
   * percent-decoded source text. A text field compares against this exact text, so `eq(name,007)` means "007"
   * and `eq(name,1e3)` means "1e3". Absent for quoted and prefixed literals.
   */
  readonly bare?: string
  readonly offset: number
}

export type RqlCmpOp = 'eq' | 'ne' | 'lt' | 'le' | 'gt' | 'ge' | 'like' | 'ilike'
export type RqlSetOp = 'in' | 'out'
export type RqlNullOp = 'isNull' | 'isNotNull'

export interface RqlLogical {
  readonly type: 'and' | 'or'
  readonly args: readonly RqlNode[]
  readonly offset: number
}

export interface RqlNot {
  readonly type: 'not'
  readonly arg: RqlNode
  readonly offset: number
}

export interface RqlCmp {
  readonly type: 'cmp'
  readonly op: RqlCmpOp
  readonly field: string
  /** Where the field name starts (errors about the field point here; `offset` is the operator's). */
  readonly fieldOffset: number
  readonly value: RqlLiteral
  readonly offset: number
}

export interface RqlSet {
  readonly type: 'set'
  readonly op: RqlSetOp
  readonly field: string
  /** Where the field name starts (errors about the field point here; `offset` is the operator's). */
  readonly fieldOffset: number
  /** Never empty. */
  readonly values: readonly RqlLiteral[]
  readonly offset: number
}

export interface RqlNull {
  readonly type: 'null'
  readonly op: RqlNullOp
  readonly field: string
  /** Where the field name starts (errors about the field point here; `offset` is the operator's). */
  readonly fieldOffset: number
  readonly offset: number
}

export type RqlNode = RqlLogical | RqlNot | RqlCmp | RqlSet | RqlNull

/** Parser limits; exceeding one raises `filter_too_complex`. */
export interface RqlLimits {
  /** Maximum filter length in characters (UTF-16 code units). */
  readonly maxLength: number
  /** Maximum nesting of and/or/not calls and parenthesised groups. Capped at {@link RQL_HARD_MAX_DEPTH}. */
  readonly maxDepth: number
  /** Maximum number of AST nodes (conditions plus logical nodes). */
  readonly maxNodes: number
  /** Maximum number of values in one in()/out(). */
  readonly maxValues: number
  /** Maximum number of like()/ilike() conditions in one filter (pattern matching is the costly part of a filter). */
  readonly maxPatterns: number
  /** Maximum number of `*` wildcards in one like()/ilike() pattern. */
  readonly maxWildcards: number
  /** Maximum length of one like()/ilike() pattern, in characters. */
  readonly maxPatternLength: number
}

/**
 * The limits of a filter. The pattern limits bound the cost of the most expensive legal filter: measured on the
 * large demo org (20,966 fields), see docs/rql.md "Limits".
 */
export const DEFAULT_RQL_LIMITS: RqlLimits = Object.freeze({
  maxLength: 4096,
  maxDepth: 32,
  maxNodes: 512,
  maxValues: 1000,
  maxPatterns: 8,
  maxWildcards: 6,
  maxPatternLength: 200,
})

/** Absolute nesting cap, whatever the configured limits: keeps the recursive-descent parser far from stack overflow. */
export const RQL_HARD_MAX_DEPTH = 256

// Literal grammar (used by the parser for bare and prefixed values and by the compiler for string coercion).

/** JSON-style number. Alternatives start with distinct characters, so matching is linear. */
const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/
/** `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM[:SS[.fff]]` followed by `Z` or `±HH:MM` (a time requires a zone). */
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?(?:(Z)|([+-])(\d{2}):(\d{2})))?$/

/** Parses a JSON-style number; undefined when the text is not one or is not finite. */
export function parseNumberText(text: string): number | undefined {
  if (!NUMBER.test(text)) return undefined
  const n = Number(text)
  return Number.isFinite(n) ? n : undefined
}

/**
 * Parses an ISO date or timestamp (see ISO_DATE). Returns undefined when the text does not have that shape and
 * `'invalid'` when it has the shape but is not a real instant (the 30th of February, 25:00, a year outside 1–9999).
 */
export function parseIsoDate(text: string): Date | 'invalid' | undefined {
  const m = ISO_DATE.exec(text)
  if (!m) return undefined
  const y = +m[1], mo = +m[2], d = +m[3]
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0
  const days = mo === 2 ? (leap ? 29 : 28) : mo === 4 || mo === 6 || mo === 9 || mo === 11 ? 30 : 31
  if (mo < 1 || mo > 12 || d < 1 || d > days) return 'invalid'
  let h = 0, mi = 0, s = 0, ms = 0, off = 0
  if (m[4] !== undefined) {
    h = +m[4]; mi = +m[5]; s = m[6] === undefined ? 0 : +m[6]; ms = m[7] === undefined ? 0 : +m[7].padEnd(3, '0')
    if (h > 23 || mi > 59 || s > 59) return 'invalid'
    if (m[9] !== undefined) {
      const oh = +m[10], om = +m[11]
      if (oh > 23 || om > 59) return 'invalid'
      off = (oh * 60 + om) * (m[9] === '-' ? -1 : 1)
    }
  }
  const dt = new Date(Date.UTC(2000, 0, 1, h, mi, s, ms))
  dt.setUTCFullYear(y, mo - 1, d)
  const r = new Date(dt.getTime() - off * 60_000)
  const ry = r.getUTCFullYear()
  return ry >= 1 && ry <= 9999 ? r : 'invalid'
}
