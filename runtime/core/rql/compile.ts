/**
 * Compiles an RQL AST to a parameterised SQL boolean expression over the table alias `t` (docs/rql.md).
 * Field names are checked against the whitelist and mapped through `sqlExpr`; every value goes through `bind`
 * with an explicit `::type` cast — no user text is ever part of the SQL string.
 *
 * Errors (docs/contract.md §7): a field outside the whitelist → `unknown_filter_field`; an operator the field kind does not
 * support → `unsupported_filter_operator`; a value that does not fit the field → `invalid_filter_value`. All carry
 * `{ parameter: 'filter', field, offset }`. A malformed AST (not produced by `parseRql`) is a server fault: plain Error.
 */
import { ApiError } from '../errors.ts'
import { didYouMean } from '../nearest.ts'
import { sqlExpr, sqlType, type FieldKind, type FieldSpec } from '../fields.ts'
import { parseIsoDate, parseNumberText, type RqlCmp, type RqlCmpOp, type RqlLiteral, type RqlNode } from './ast.ts'

type Bind = (value: unknown) => string
type Op = RqlCmpOp | 'in' | 'out' | 'isNull' | 'isNotNull'

const EQUALITY: readonly Op[] = ['eq', 'ne', 'in', 'out', 'isNull', 'isNotNull']
const ORDERED: readonly Op[] = [...EQUALITY, 'lt', 'le', 'gt', 'ge']
const TEXTUAL: readonly Op[] = [...ORDERED, 'like', 'ilike']

/**
 * From this many values an `in`/`out` list is matched through a hash (a sub-select), below it with `= ANY`: the
 * same length from which PostgreSQL hashes a list written in the statement, which a bound list never is. From this
 * many equalities of one field, an `or` makes them one such list (`Compiler.logical`).
 */
export const HASHED_LIST_FROM = 9

/**
 * Comparisons of one field that `or` (`and`) turns into one: equalities into an `in` list (inequalities, under `and`,
 * into an `out` list), and bounds into one comparison with the loosest (under `or`) or the tightest (under `and`) of
 * them. Exact also with NULLs: a NULL value compares NULL with every bound, and with their extreme.
 */
const MERGED: Readonly<Record<'and' | 'or', Partial<Record<RqlCmpOp, 'in' | 'out' | 'max' | 'min'>>>> = {
  or: { eq: 'in', lt: 'max', le: 'max', gt: 'min', ge: 'min' },
  and: { ne: 'out', lt: 'min', le: 'min', gt: 'max', ge: 'max' },
}

/** Operators a field kind supports. */
export function filterOperators(kind: FieldKind): readonly Op[] {
  switch (kind) {
    case 'text': case 'enum': return TEXTUAL
    case 'int': case 'num': case 'ts': case 'date': return ORDERED
    case 'bool': return EQUALITY
    case 'json': case 'textArray': return []
  }
}

function sqlOperator(op: RqlCmpOp): string {
  switch (op) {
    case 'eq': return '='
    case 'ne': return 'IS DISTINCT FROM'
    case 'lt': return '<'
    case 'le': return '<='
    case 'gt': return '>'
    case 'ge': return '>='
    case 'like': return 'LIKE'
    case 'ilike': return 'ILIKE'
  }
}

/** `*` → `%`; `%`, `_` and `\` are escaped (backslash is PostgreSQL's default LIKE escape). */
export function likePattern(s: string): string {
  return s.replace(/[\\%_]/g, '\\$&').replace(/\*/g, '%')
}

function describe(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? v.slice(0, 40) + '…' : v)
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? 'an invalid date' : `date ${v.toISOString()}`
  return String(v)
}

/** How many `ilike` conditions on each field a filter (sub)tree has. */
function ilikeCounts(n: RqlNode, out = new Map<string, number>()): Map<string, number> {
  if (n.type === 'and' || n.type === 'or') for (const a of n.args) ilikeCounts(a, out)
  else if (n.type === 'not') ilikeCounts(n.arg, out)
  else if (n.type === 'cmp' && n.op === 'ilike' && n.value.value !== null) out.set(n.field, (out.get(n.field) ?? 0) + 1)
  return out
}

/** An argument of `and`/`or` as compiled: its SQL, or the place of a merged list (`Compiler.logical`). */
type Part = { sql: string; lowers: boolean } | { group: string }

class Compiler {
  /** Fields whose lowered value an enclosing sub-select computes once per row: the field → that value's column. */
  private readonly lowered = new Map<string, string>()
  private subselects = 0

  constructor(
    private readonly fields: Readonly<Record<string, FieldSpec>>,
    private readonly filterable: readonly string[],
    private readonly bind: Bind,
  ) {}

  node(n: RqlNode): string {
    switch (n.type) {
      case 'and': case 'or':
        if (n.args.length === 0) throw new Error(`RQL ${n.type} node without arguments`)
        return this.logical(n)
      case 'not':
        // Two-valued: not(P) matches exactly the rows P does not match, including rows where P is NULL.
        return `((${this.node(n.arg)}) IS NOT TRUE)`
      case 'null': {
        const spec = this.spec(n.field, n.fieldOffset, n.op, n.offset)
        return `${sqlExpr(n.field, spec)} ${n.op === 'isNull' ? 'IS NULL' : 'IS NOT NULL'}`
      }
      case 'cmp': {
        const spec = this.spec(n.field, n.fieldOffset, n.op, n.offset)
        const expr = sqlExpr(n.field, spec)
        if (n.value.value === null) {
          if (n.op === 'eq') return `${expr} IS NULL`
          if (n.op === 'ne') return `${expr} IS NOT NULL`
          throw this.invalid(n.field, n.value, `${n.op}() cannot compare with null; use eq, ne, isNull or isNotNull`)
        }
        if (n.op === 'like') return `${expr} LIKE ${this.bind(likePattern(this.text(n.field, n.value)))}::text`
        if (n.op === 'ilike') {
          // What ILIKE does in a UTF-8 database (lower both sides, then LIKE), with the pattern lowered once instead
          // of again for every row, and the value lowered once per row for all the field's patterns when an
          // enclosing sub-select does it (`logical`).
          const pattern = this.bind(likePattern(this.text(n.field, n.value)))
          return `${this.lowered.get(n.field) ?? `lower(${expr})`} LIKE (SELECT lower(${pattern}::text))`
        }
        return `${expr} ${sqlOperator(n.op)} ${this.bind(this.coerce(n.field, spec, n.value))}::${sqlType(spec)}`
      }
      case 'set': {
        const spec = this.spec(n.field, n.fieldOffset, n.op, n.offset)
        const hasNull = n.values.some((l) => l.value === null)
        const list = n.values.filter((l) => l.value !== null).map((l) => this.coerce(n.field, spec, l))
        if (list.length === 0 && !hasNull) throw new Error('RQL set node without values')
        return this.membership(n.op, n.field, spec, list, hasNull)
      }
      default:
        throw new Error(`Unknown RQL node type ${JSON.stringify((n as { type?: unknown }).type)}`)
    }
  }

  /**
   * `and`/`or`. Two rewrites that change no answer (both operators are associative and commutative, also with NULLs):
   * - many comparisons of one field with one operator are one (`MERGED`): many `eq` under `or` cost a comparison
   *   each for every row, their list one probe of a hash;
   * - when two or more arguments hold `ilike` conditions on one field (and no single argument holds them all), those
   *   arguments are evaluated in a sub-select that lowers the field once per row for all of them.
   */
  private logical(n: RqlNode & { type: 'and' | 'or' }): string {
    const joiner = n.type === 'and' ? ' AND ' : ' OR '
    const merged = MERGED[n.type]
    const groups = new Map<string, RqlCmp[]>()
    for (const a of n.args) {
      if (a.type !== 'cmp' || merged[a.op] === undefined || a.value.value === null) continue
      const key = `${a.op} ${a.field}`
      groups.set(key, [...(groups.get(key) ?? []), a])
    }
    // A list pays from where hashing does; a bound from two comparisons (a text one costs a collation's comparison).
    const worth = (op: RqlCmpOp) => (merged[op] === 'in' || merged[op] === 'out' ? HASHED_LIST_FROM : 2)
    for (const [key, g] of groups) if (g.length < worth(g[0].op)) groups.delete(key)

    const counts = n.args.map((a) => ilikeCounts(a))
    const total = ilikeCounts(n)
    const shared = [...total].filter(([f, k]) => k >= 2 && !this.lowered.has(f) && !counts.some((c) => c.get(f) === k)).map(([f]) => f)
    const alias = shared.length > 0 ? `lw${++this.subselects}` : ''
    shared.forEach((f, i) => this.lowered.set(f, `${alias}.l${i + 1}`))

    // Arguments are checked in order, so that the first mistake is the one reported, as without the rewrites.
    const parts: Part[] = []
    const lists = new Map<string, { op: RqlCmpOp; field: string; spec: FieldSpec; values: unknown[] }>()
    try {
      n.args.forEach((a, i) => {
        const key = a.type === 'cmp' ? `${a.op} ${a.field}` : ''
        if (a.type === 'cmp' && groups.get(key)?.includes(a)) {
          const spec = this.spec(a.field, a.fieldOffset, a.op, a.offset)
          const list = lists.get(key) ?? { op: a.op, field: a.field, spec, values: [] }
          list.values.push(this.coerce(a.field, spec, a.value))
          if (!lists.has(key)) parts.push({ group: key })
          lists.set(key, list)
        } else {
          parts.push({ sql: this.node(a), lowers: shared.some((f) => counts[i].has(f)) })
        }
      })
    } finally {
      for (const f of shared) this.lowered.delete(f)
    }

    const sql: string[] = []
    const lowering: string[] = []
    for (const p of parts) {
      if ('group' in p) sql.push(this.mergedComparison(lists.get(p.group)!, merged))
      else if (p.lowers) {
        if (lowering.length === 0) sql.push('') // the sub-select's place: where its first argument was
        lowering.push(p.sql)
      } else sql.push(p.sql)
    }
    if (lowering.length > 0) {
      const columns = shared.map((f, i) => `lower(${sqlExpr(f, this.fields[f])}) AS l${i + 1}`).join(', ')
      // OFFSET 0 keeps the sub-select whole: merged into the outer query, each use would lower the value again.
      sql[sql.indexOf('')] = `(SELECT ${lowering.length > 1 ? `(${lowering.join(joiner)})` : lowering[0]} FROM (SELECT ${columns} OFFSET 0) ${alias})`
    }
    return sql.length === 1 ? sql[0] : `(${sql.join(joiner)})`
  }

  /** One condition for many comparisons of a field with one operator (`MERGED`); values coerced, never null. */
  private mergedComparison(g: { op: RqlCmpOp; field: string; spec: FieldSpec; values: unknown[] }, merged: (typeof MERGED)['or']): string {
    const how = merged[g.op]!
    if (how === 'in' || how === 'out') return this.membership(how, g.field, g.spec, g.values, false)
    const type = sqlType(g.spec)
    const texts = g.values.map((v) => (typeof v === 'string' ? v : String(v)))
    // The bound is found once (an uncorrelated sub-select), with the column's own comparison (its type, and for text
    // the database's collation, as `<` uses).
    const bound = `(SELECT ${how}(v${type === 'text' ? '' : `::${type}`}) FROM unnest(${this.bind(texts)}::text[]) v)`
    return `${sqlExpr(g.field, g.spec)} ${sqlOperator(g.op)} ${bound}`
  }

  /** `in`/`out` of a list of non-null values (coerced to the field's kind), with or without null listed. */
  private membership(op: 'in' | 'out', field: string, spec: FieldSpec, list: readonly unknown[], hasNull: boolean): string {
    const expr = sqlExpr(field, spec)
    // Bound as text[] and cast in SQL: postgres.js sends a JS array of booleans as one boolean, so a typed
    // array parameter fails for booleans; text works for every kind.
    const type = sqlType(spec)
    const texts = list.map((v) => (typeof v === 'string' ? v : String(v)))
    const param = () => `${this.bind(texts)}::text[]`
    const hashed = list.length >= HASHED_LIST_FROM
    let member = ''
    if (hashed) {
      // A sub-select's values are hashed once and each row probes the hash; `= ANY($n)` compares every row with
      // every value, because a prepared statement's plan, made without the list, cannot hash it. The values are
      // cast once, as they enter the hash.
      member = `${expr} IN (SELECT unnest(${param()})${type === 'text' ? '' : `::${type}`})`
    } else if (list.length > 0) {
      // Cast once, in a sub-select PostgreSQL evaluates before the scan: a plain `$n::text[]::timestamptz[]` is
      // cast again for every row under the generic plan.
      member = `${expr} = ANY(${type === 'text' ? param() : `ARRAY(SELECT unnest(${param()})::${type})`})`
    }
    if (op === 'in') {
      // `IS TRUE` keeps the sub-select where it is: standing alone in the WHERE clause it would be turned into a
      // join, which a plan made without the list may run as a loop over the list for every row. A NULL value is
      // not in the list either way (a filter's NULL and false select the same rows, `not` included).
      if (!hasNull) return hashed ? `((${member}) IS TRUE)` : member
      return member ? `(${expr} IS NULL OR ${member})` : `${expr} IS NULL`
    }
    // out: rows whose value is NULL are "not in" the list unless null is listed.
    if (!hasNull) return `(${expr} IS NULL OR NOT (${member}))`
    return member ? `(${expr} IS NOT NULL AND NOT (${member}))` : `${expr} IS NOT NULL`
  }

  /**
   * Resolves a whitelisted field and checks that its kind supports `op`. An unknown field is reported where its name
   * starts (`fieldOffset`), with the nearest filterable name; an unsupported operator where the operator starts.
   */
  private spec(field: string, fieldOffset: number, op: Op, offset: number): FieldSpec {
    if (!this.filterable.includes(field) || !Object.hasOwn(this.fields, field)) {
      throw new ApiError('unknown_filter_field', `Unknown filter field ${describe(field)}${didYouMean(field, this.filterable)}`, {
        parameter: 'filter', field, allowed: [...this.filterable], offset: fieldOffset,
      })
    }
    const spec = this.fields[field]
    const ops = filterOperators(spec.kind)
    if (!ops.includes(op)) {
      const reason = ops.length === 0
        ? `Field "${field}" (${spec.kind}) cannot be used in a filter`
        : `Operator "${op}" is not supported on field "${field}" (${spec.kind})`
      throw new ApiError('unsupported_filter_operator', reason, {
        parameter: 'filter', field, offset, ...(ops.length > 0 ? { allowed: [...ops] } : {}),
      })
    }
    return spec
  }

  private invalid(field: string, lit: RqlLiteral, reason: string, allowed?: readonly string[]): ApiError {
    return new ApiError('invalid_filter_value', reason, {
      parameter: 'filter', field, offset: lit.offset, ...(allowed ? { allowed: [...allowed] } : {}),
    })
  }

  /** Text value: strings as is; a bare number/boolean/date as written (`eq(name,007)` means "007"). */
  private text(field: string, lit: RqlLiteral): string {
    const v = lit.value
    if (typeof v === 'string') return v
    if (lit.bare !== undefined && v !== null) return lit.bare
    throw this.invalid(field, lit, `Field "${field}" expects a string, got ${describe(v)}`)
  }

  private date(field: string, lit: RqlLiteral, what: string): Date {
    const v = lit.value
    const d = v instanceof Date ? v : typeof v === 'string' ? parseIsoDate(v) : undefined
    if (d instanceof Date && d.getUTCFullYear() >= 1 && d.getUTCFullYear() <= 9999) return d
    throw this.invalid(field, lit, `Field "${field}" expects ${what}, got ${describe(v)}`)
  }

  /** The value bound for a non-null literal, coerced to the field kind. */
  private coerce(field: string, spec: FieldSpec, lit: RqlLiteral): unknown {
    const v = lit.value
    switch (spec.kind) {
      case 'int': {
        const n = typeof v === 'number' ? v : typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : undefined
        if (n !== undefined && Number.isSafeInteger(n)) return n
        if (n !== undefined && (Number.isInteger(n) || !Number.isFinite(n))) {
          throw this.invalid(field, lit, `Integer ${describe(v)} is out of range for field "${field}"`)
        }
        throw this.invalid(field, lit, `Field "${field}" expects an integer, got ${describe(v)}`)
      }
      case 'num': {
        const n = typeof v === 'number' ? v : typeof v === 'string' ? parseNumberText(v) : undefined
        if (n !== undefined && Number.isFinite(n)) return n
        throw this.invalid(field, lit, `Field "${field}" expects a number, got ${describe(v)}`)
      }
      case 'bool':
        if (v === true || v === 'true') return true
        if (v === false || v === 'false') return false
        throw this.invalid(field, lit, `Field "${field}" expects true or false, got ${describe(v)}`)
      case 'ts':
        return this.date(field, lit, 'an ISO 8601 timestamp such as 2024-01-31T10:00:00Z').toISOString()
      case 'date': {
        const d = this.date(field, lit, 'a date such as 2024-01-31')
        if (d.getUTCHours() || d.getUTCMinutes() || d.getUTCSeconds() || d.getUTCMilliseconds()) {
          throw this.invalid(field, lit, `Field "${field}" expects a date without a time, got ${describe(v)}`)
        }
        return d.toISOString().slice(0, 10)
      }
      case 'text':
        return this.text(field, lit)
      case 'enum': {
        const s = this.text(field, lit)
        const values = spec.values ?? []
        if (values.includes(s)) return s
        throw this.invalid(field, lit, `Field "${field}" must be one of ${values.join(', ')}; got ${describe(s)}`, values)
      }
      case 'json': case 'textArray':
        throw new Error(`Field kind ${spec.kind} reached value coercion`)
    }
  }
}

/**
 * Compiles a filter AST to a SQL boolean expression (no `WHERE`), safe to AND with other conditions.
 * `fields` maps wire names to specs; only names in `filterable` may be used; `bind` returns a placeholder for a value.
 */
export function compileFilter(
  node: RqlNode,
  fields: Readonly<Record<string, FieldSpec>>,
  filterable: readonly string[],
  bind: Bind,
): string {
  return new Compiler(fields, filterable, bind).node(node)
}
