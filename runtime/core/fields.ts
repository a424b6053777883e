/**
 * Field kinds of resource records. A field declaration carries everything the runtime derives from it:
 * the SQL column type, the JSON rendering expression, filter coercion and the record schema.
 * Names are camelCase on the wire and snake_case in SQL.
 */
import * as v from 'valibot'

export type FieldKind = 'int' | 'num' | 'text' | 'bool' | 'ts' | 'date' | 'enum' | 'textArray' | 'json'

export interface FieldSpec {
  readonly kind: FieldKind
  /** Null allowed in the record. Default false. */
  readonly nullable: boolean
  /** Allowed values for `enum`. */
  readonly values?: readonly string[]
  /** Shape of a `json` field (documentation and import validation). */
  readonly schema?: v.GenericSchema
  /** Human description, used in generated docs and the OpenAPI schemas. */
  readonly description?: string
  /**
   * What the name does not say (a scale, a direction), in a few words: the one description an MCP tool's output
   * schema keeps of the field (runtime/surfaces/mcp/json-schema.ts `leanFieldJsonSchema`).
   */
  readonly note?: string
  /** SQL expression over the table alias `t` instead of the plain column (derived values). */
  readonly expr?: string
  /** `enum`: a title and a one-line description of each value (documentation, MCP value lookups). */
  readonly labels?: Readonly<Record<string, EnumLabel>>
  /** `enum`: the address of a document listing the values with their labels, e.g. `service://issue-categories`. */
  readonly catalog?: string
}

export interface EnumLabel {
  readonly title: string
  readonly description: string
}

type Opts = { nullable?: boolean; description?: string; note?: string; expr?: string }

function spec(kind: FieldKind, o: Opts = {}, extra: Partial<FieldSpec> = {}): FieldSpec {
  return { kind, nullable: o.nullable ?? false, description: o.description, ...(o.note ? { note: o.note } : {}), expr: o.expr, ...extra }
}

/** Field builders used by resource declarations. */
export const f = {
  int: (o?: Opts) => spec('int', o),
  num: (o?: Opts) => spec('num', o),
  text: (o?: Opts) => spec('text', o),
  bool: (o?: Opts) => spec('bool', o),
  /** Timestamp, ISO 8601 UTC on the wire (`2026-01-31T12:00:00Z`). */
  ts: (o?: Opts) => spec('ts', o),
  /** Calendar date, `YYYY-MM-DD` on the wire. */
  date: (o?: Opts) => spec('date', o),
  enum: <const T extends readonly string[]>(
    values: T,
    o?: Opts & { labels?: Readonly<Record<T[number], EnumLabel>>; catalog?: string },
  ) => spec('enum', o, { values, labels: o?.labels, catalog: o?.catalog }),
  textArray: (o?: Opts) => spec('textArray', o),
  json: (schema: v.GenericSchema, o?: Opts) => spec('json', o, { schema }),
}

export type FieldMap = Readonly<Record<string, FieldSpec>>

/** camelCase → snake_case column name. */
export function columnName(field: string): string {
  return field.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase()).replace(/([a-z])(\d)/g, '$1_$2')
}

/** A column name as a quoted SQL identifier (some field names, e.g. `references`, are reserved words). */
export function quotedColumn(field: string): string {
  return `"${columnName(field)}"`
}

/** SQL column type of a field kind (DDL and parameter casts). */
export function sqlType(s: FieldSpec): string {
  switch (s.kind) {
    case 'int': return 'bigint'
    case 'num': return 'double precision'
    case 'text': case 'enum': return 'text'
    case 'bool': return 'boolean'
    case 'ts': return 'timestamptz'
    case 'date': return 'date'
    case 'textArray': return 'text[]'
    case 'json': return 'jsonb'
  }
}

/** `YYYY-MM-DDTHH:MM:SSZ`, and with `exact` the microseconds too when the value has any (`…:SS.ffffffZ`). */
export function isoTimestampSql(col: string, exact = false): string {
  const whole = `to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`
  if (!exact) return whole
  return `CASE WHEN date_trunc('second', ${col}) = ${col} THEN ${whole} ELSE to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') END`
}

/**
 * The SQL expression rendering a field as JSON-ready value (table alias `t`). Timestamps are served to the second;
 * `exactTime` keeps their fractions (exports, so that a bundle re-imports the same instants).
 */
export function jsonExpr(name: string, s: FieldSpec, exactTime = false): string {
  const col = s.expr ? `(${s.expr})` : `t.${quotedColumn(name)}`
  switch (s.kind) {
    case 'ts': return isoTimestampSql(col, exactTime)
    case 'date': return `to_char(${col}, 'YYYY-MM-DD')`
    default: return col
  }
}

/**
 * The SQL expression of a field's JSON text (alias `t`), NULL for a NULL value. An integer's or a boolean's text (`42`,
 * `true`) is its JSON already: rendered by a cast, it skips `to_json`'s type lookup on every value, a fifth of the
 * cost of a page's JSON (docs/adr/0005-one-sql-statement-per-read.md). Everything else goes through `to_json` (strings
 * escaped, a float's NaN quoted).
 */
export function jsonText(name: string, s: FieldSpec, exactTime = false): string {
  const e = jsonExpr(name, s, exactTime)
  return s.kind === 'int' || s.kind === 'bool' ? `(${e})::text` : `to_json(${e})::text`
}

/** The SQL expression of a field for WHERE / ORDER BY (alias `t`). */
export function sqlExpr(name: string, s: FieldSpec): string {
  return s.expr ? `(${s.expr})` : `t.${quotedColumn(name)}`
}

/**
 * Whether an ISO 8601 date or timestamp names a real day of years 1–9999: the format checks let `2026-02-30` through,
 * and the database driver would move it into March (it converts through a JavaScript Date).
 */
export function isCalendarDate(iso: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})/.exec(iso)
  if (!m) return false
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])]
  const t = new Date(Date.UTC(2000, mo - 1, d))
  t.setUTCFullYear(y)
  return y >= 1 && t.getUTCFullYear() === y && t.getUTCMonth() === mo - 1 && t.getUTCDate() === d
}

/** The longest text value an import accepts (characters): larger ones could not be read back in one page. */
export const MAX_IMPORTED_TEXT = 1_000_000

const calendar = v.check(isCalendarDate, 'must be a real calendar date (years 1–9999)')

/** A timestamp on the wire: ISO 8601 with `Z` or an offset, on a real calendar day. */
export const timestampSchema = v.pipe(v.string(), v.isoTimestamp(), calendar)

/** The valibot schema of one field's wire value (imports). */
export function fieldSchema(s: FieldSpec): v.GenericSchema {
  let base: v.GenericSchema
  switch (s.kind) {
    case 'int': base = v.pipe(v.number(), v.integer()); break
    case 'num': base = v.number(); break
    case 'text': base = v.pipe(v.string(), v.maxLength(MAX_IMPORTED_TEXT)); break
    case 'bool': base = v.boolean(); break
    case 'ts': base = timestampSchema; break
    case 'date': base = v.pipe(v.string(), v.isoDate(), calendar); break
    case 'enum': base = v.picklist(s.values as string[]); break
    case 'textArray': base = v.array(v.pipe(v.string(), v.maxLength(MAX_IMPORTED_TEXT))); break
    case 'json': base = s.schema ?? v.unknown(); break
  }
  if (s.description) base = v.pipe(base, v.description(s.description))
  return s.nullable ? v.nullable(base) : base
}

/** Whether a field kind can be used in a filter / sort (scalars only). */
export function isScalar(s: FieldSpec): boolean {
  return s.kind !== 'json' && s.kind !== 'textArray'
}
