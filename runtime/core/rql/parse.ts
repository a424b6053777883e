/**
 * Hand-written recursive-descent parser of RQL filters (docs/rql.md). Single pass over the input, no backtracking:
 * linear in the input length. Throws only `ApiError` (`filter_parse_error`, `filter_too_complex`), with
 * `{ parameter: 'filter', offset }`. Depth is checked before every recursion, so deep input cannot overflow the stack.
 */
import { ApiError } from '../errors.ts'
import {
  DEFAULT_RQL_LIMITS, RQL_HARD_MAX_DEPTH,
  type RqlCmpOp, type RqlLimits, type RqlLiteral, type RqlNode, type RqlNullOp, type RqlSetOp,
} from './ast.ts'
import { CONTROL, endsBare, isIdentPart, isIdentStart, isSpace, opKind, OPERATORS, parseError, show } from './lexical.ts'
import { convertValue, inferValue } from './values.ts'

class Parser {
  private pos = 0
  private nodes = 0
  private patterns = 0
  private readonly maxDepth: number

  constructor(private readonly src: string, private readonly lim: RqlLimits) {
    this.maxDepth = Math.min(lim.maxDepth, RQL_HARD_MAX_DEPTH)
  }

  parse(): RqlNode {
    if (typeof this.src !== 'string') parseError('Filter must be one string', 0)
    if (this.src.length > this.lim.maxLength) {
      this.tooComplex(`Filter is longer than ${this.lim.maxLength} characters`, this.lim.maxLength)
    }
    if (this.src.length === 0) this.fail('Empty filter')
    const node = this.expr(0)
    this.ws()
    if (this.pos < this.src.length) this.fail(`Unexpected ${this.found()}; expected "&", "|" or end of filter`)
    return node
  }

  private fail(reason: string, offset = this.pos): never {
    return parseError(reason, offset)
  }

  private tooComplex(reason: string, offset: number): never {
    throw new ApiError('filter_too_complex', reason, { parameter: 'filter', offset })
  }

  private found(): string {
    return this.pos < this.src.length ? show(this.src[this.pos]) : 'end of filter'
  }

  private ws(): void {
    while (this.pos < this.src.length && isSpace(this.src.charCodeAt(this.pos))) this.pos++
  }

  /** Skips whitespace, then consumes `ch` or fails with "Expected <what>, found <char>[; <hint>]". */
  private expect(ch: string, what: string, hint?: string): void {
    this.ws()
    if (this.src[this.pos] !== ch) this.fail(`Expected ${what}, found ${this.found()}` + (hint ? `; ${hint}` : ''))
    this.pos++
  }

  private count(offset: number): void {
    if (++this.nodes > this.lim.maxNodes) this.tooComplex(`Filter has more than ${this.lim.maxNodes} conditions`, offset)
  }

  private enter(depth: number, offset: number): number {
    if (depth + 1 > this.maxDepth) this.tooComplex(`Filter is nested more than ${this.maxDepth} levels deep`, offset)
    return depth + 1
  }

  private ident(): string {
    const start = this.pos
    if (start < this.src.length && isIdentStart(this.src.charCodeAt(start))) {
      this.pos++
      while (this.pos < this.src.length && isIdentPart(this.src.charCodeAt(this.pos))) this.pos++
    }
    return this.src.slice(start, this.pos)
  }

  /** term ( '&' term )* | term ( '|' term )* — mixing both needs parentheses. */
  private expr(depth: number): RqlNode {
    const first = this.term(depth)
    this.ws()
    const joiner = this.src[this.pos]
    if (joiner !== '&' && joiner !== '|') return first
    this.count(first.offset)
    const args = [first]
    for (;;) {
      this.ws()
      const c = this.src[this.pos]
      if (c !== '&' && c !== '|') break
      if (c !== joiner) this.fail('Cannot mix "&" and "|" without parentheses')
      this.pos++
      args.push(this.term(depth))
    }
    return { type: joiner === '&' ? 'and' : 'or', args, offset: first.offset }
  }

  /** '(' expr ')' | operator call */
  private term(depth: number): RqlNode {
    this.ws()
    const start = this.pos
    if (this.src[start] === '(') {
      const d = this.enter(depth, start)
      this.pos++
      const node = this.expr(d)
      this.expect(')', '")"')
      return node
    }
    const name = this.ident()
    if (name === '') this.fail(`Expected an operator, found ${this.found()}`)
    const kind = opKind(name)
    if (kind === undefined) {
      const lower = name.toLowerCase()
      const hint = OPERATORS.find((o) => o.toLowerCase() === lower)
      this.fail(`Unknown operator ${show(name)}` + (hint ? ` (did you mean "${hint}"?)` : ''), start)
    }
    this.expect('(', `"(" after ${show(name)}`)
    this.count(start)
    switch (kind) {
      case 'logic': {
        const d = this.enter(depth, start)
        const args = [this.expr(d)]
        for (;;) {
          this.ws()
          if (this.src[this.pos] !== ',') break
          this.pos++
          args.push(this.expr(d))
        }
        this.expect(')', '"," or ")"')
        return { type: name as 'and' | 'or', args, offset: start }
      }
      case 'not': {
        const arg = this.expr(this.enter(depth, start))
        this.expect(')', '")"', 'not() takes exactly one argument')
        return { type: 'not', arg, offset: start }
      }
      case 'cmp': {
        const fieldOffset = this.fieldStart()
        const field = this.field()
        const value = this.value()
        this.expect(')', '")" after value', `${name}() takes a field and one value`)
        if (name === 'like' || name === 'ilike') this.pattern(value)
        return { type: 'cmp', op: name as RqlCmpOp, field, fieldOffset, value, offset: start }
      }
      case 'set': {
        const fieldOffset = this.fieldStart()
        const field = this.field()
        this.ws()
        let values: RqlLiteral[]
        if (this.src[this.pos] === '(') {
          this.pos++
          values = this.values()
          this.expect(')', '"," or ")" after value')
          this.expect(')', '")" after the value list')
        } else {
          values = this.values()
          this.expect(')', '"," or ")" after value')
        }
        return { type: 'set', op: name as RqlSetOp, field, fieldOffset, values, offset: start }
      }
      case 'null': {
        const fieldOffset = this.fieldStart()
        const field = this.fieldName()
        this.expect(')', '")" after field name', `${name}() takes one field`)
        return { type: 'null', op: name as RqlNullOp, field, fieldOffset, offset: start }
      }
    }
  }

  /** Bounds what makes pattern matching expensive: how many patterns, their length and their wildcards. */
  private pattern(lit: RqlLiteral): void {
    const text = typeof lit.value === 'string' ? lit.value : (lit.bare ?? String(lit.value))
    if (++this.patterns > this.lim.maxPatterns) this.tooComplex(`Filter has more than ${this.lim.maxPatterns} like/ilike conditions`, lit.offset)
    if (text.length > this.lim.maxPatternLength) this.tooComplex(`A like/ilike pattern may be at most ${this.lim.maxPatternLength} characters`, lit.offset)
    let wildcards = 0
    for (let i = text.indexOf('*'); i >= 0; i = text.indexOf('*', i + 1)) wildcards++
    if (wildcards > this.lim.maxWildcards) this.tooComplex(`A like/ilike pattern may have at most ${this.lim.maxWildcards} * wildcards`, lit.offset)
  }

  /** A value's text may not hold control characters (reported at the value's offset). */
  private clean(text: string, offset: number): string {
    const m = CONTROL.exec(text)
    if (m) this.fail(`Control character U+${m[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')} in a value`, offset)
    return text
  }

  /** Skips whitespace and answers where the field name that follows starts. */
  private fieldStart(): number {
    this.ws()
    return this.pos
  }

  private fieldName(): string {
    this.ws()
    const name = this.ident()
    if (name === '') this.fail(`Expected a field name, found ${this.found()}`)
    return name
  }

  /** A field name followed by ','. */
  private field(): string {
    const name = this.fieldName()
    this.expect(',', '"," after field name')
    return name
  }

  /** value ( ',' value )* */
  private values(): RqlLiteral[] {
    const out: RqlLiteral[] = []
    for (;;) {
      this.ws()
      if (out.length >= this.lim.maxValues) {
        this.tooComplex(`More than ${this.lim.maxValues} values in one in()/out()`, this.pos)
      }
      out.push(this.value())
      this.ws()
      if (this.src[this.pos] !== ',') return out
      this.pos++
    }
  }

  private value(): RqlLiteral {
    this.ws()
    const offset = this.pos
    const c = this.src.charCodeAt(offset)
    if (c === 39 || c === 34) return { value: this.clean(this.quoted(), offset), offset }
    if (offset >= this.src.length || endsBare(c)) this.fail(`Expected a value, found ${this.found()}`)
    while (this.pos < this.src.length && !endsBare(this.src.charCodeAt(this.pos))) this.pos++
    const token = this.src.slice(offset, this.pos)
    const colon = token.indexOf(':')
    const prefix = colon > 0 ? token.slice(0, colon) : ''
    const typed = prefix === 'string' || prefix === 'number' || prefix === 'date' || prefix === 'boolean'
    const q = this.src.charCodeAt(this.pos)
    if (q === 39 || q === 34) {
      if (!typed || colon !== token.length - 1) this.fail('Unexpected quote inside an unquoted value')
      return { value: convertValue(prefix, this.clean(this.quoted(), offset), offset), offset }
    }
    if (typed) return { value: convertValue(prefix, this.clean(this.decode(token.slice(colon + 1), offset), offset), offset), offset }
    const decoded = this.clean(this.decode(token, offset), offset)
    return { value: inferValue(token, decoded, offset), bare: decoded, offset }
  }

  private decode(token: string, offset: number): string {
    if (!token.includes('%')) return token
    try {
      return decodeURIComponent(token)
    } catch {
      this.fail(`Invalid percent-encoding in ${show(token)}; write a literal % as %25 or quote the value`, offset)
    }
  }

  /** 'text' or "text"; backslash escapes only \\, \' and \". Built from slices: linear. */
  private quoted(): string {
    const start = this.pos
    const quote = this.src.charCodeAt(start)
    const parts: string[] = []
    let seg = ++this.pos
    while (this.pos < this.src.length) {
      const c = this.src.charCodeAt(this.pos)
      if (c === quote) {
        parts.push(this.src.slice(seg, this.pos))
        this.pos++
        return parts.join('')
      }
      if (c === 92) {
        const n = this.src[this.pos + 1]
        if (n !== '\\' && n !== "'" && n !== '"') {
          this.fail('Invalid escape in quoted string; only \\\\, \\\' and \\" are allowed')
        }
        parts.push(this.src.slice(seg, this.pos), n)
        this.pos += 2
        seg = this.pos
      } else {
        this.pos++
      }
    }
    this.fail('Unterminated quoted string', start)
  }
}

/**
 * Parses an RQL filter into an AST. Throws `ApiError` `filter_parse_error` (syntax, with the reason and offset)
 * or `filter_too_complex` (a limit of `limits`, defaults {@link DEFAULT_RQL_LIMITS}). Empty input is a parse error.
 */
export function parseRql(input: string, limits: Partial<RqlLimits> = {}): RqlNode {
  const d = DEFAULT_RQL_LIMITS
  return new Parser(input, {
    maxLength: limits.maxLength ?? d.maxLength,
    maxDepth: limits.maxDepth ?? d.maxDepth,
    maxNodes: limits.maxNodes ?? d.maxNodes,
    maxValues: limits.maxValues ?? d.maxValues,
    maxPatterns: limits.maxPatterns ?? d.maxPatterns,
    maxWildcards: limits.maxWildcards ?? d.maxWildcards,
    maxPatternLength: limits.maxPatternLength ?? d.maxPatternLength,
  }).parse()
}
