/**
 * Checking one object of a bundle — the org, the scan, a record — against its field declarations, and saying what is
 * wrong in plain words made from those declarations (their kind, allowed values and description), so a new resource's
 * records are explained without a line written for them. The validator's own messages never reach the user.
 * A valid object costs one schema run; the explanation is built only for an object that fails it.
 */
import * as v from 'valibot'
import type { FieldSpec } from '../../core/fields.ts'
import { isJsonObject } from '../../core/json-object.ts'
import { nearestName } from '../../core/nearest.ts'
import { nameOf, pointerToken, shown } from './problems.ts'

/** One field an object of a bundle holds: its declaration and the schema its value must pass. */
export interface FieldRule {
  spec: FieldSpec
  schema: v.GenericSchema
}

/** What one kind of object in a bundle must hold. */
export interface Shape {
  /** In a sentence: `the org`, `a fields record`. */
  one: string
  /** Whose fields, in a sentence: `the org`, `fields records`. */
  of: string
  fields: ReadonlyMap<string, FieldRule>
  /** Fields the service computes (its answers show them): accepted in a bundle and ignored (docs/adr/0170-import-errors-for-people.md). */
  computed: ReadonlySet<string>
  /** The whole object's schema: fields exactly, no computed ones. */
  schema: v.GenericSchema
  ints: string[]
  names: string[]
}

export function shapeOf(one: string, of: string, fields: ReadonlyMap<string, FieldRule>, computed: Iterable<string>): Shape {
  const entries: Record<string, v.GenericSchema> = {}
  for (const [n, r] of fields) entries[n] = r.schema
  return {
    one, of, fields,
    computed: new Set(computed),
    schema: v.strictObject(entries),
    ints: [...fields].filter(([, r]) => r.spec.kind === 'int').map(([n]) => n),
    names: [...fields.keys()],
  }
}

/**
 * Reports one problem: the pointer below the object's, and the sentence — or a function making it, for a sentence that
 * costs a search (`did you mean …`), made only while problems are still listed.
 */
export type Report = (pointer: string, message: string | (() => string)) => void

export interface Checked {
  /** The object as imported (absent when it has a problem). */
  value?: Record<string, unknown>
  /** Computed fields it held, ignored. */
  ignored: string[]
}

/** Checks one object, reporting every problem it has; its value when it has none. */
export function checkObject(shape: Shape, x: unknown, report: Report): Checked {
  const fast = v.safeParse(shape.schema, x)
  if (fast.success) {
    const value = fast.output as Record<string, unknown>
    if (shape.ints.every((n) => typeof value[n] !== 'number' || Number.isSafeInteger(value[n])) && storable(value)) return { value, ignored: [] }
  }
  return explain(shape, x, report)
}

function explain(shape: Shape, x: unknown, report: Report): Checked {
  if (!isJsonObject(x)) {
    report('', `${shape.one} must be an object (got ${shown(x)})`)
    return { ignored: [] }
  }
  let bad = 0
  const say: Report = (p, m) => {
    bad++
    report(p, m)
  }
  const value: Record<string, unknown> = {}
  for (const [name, rule] of shape.fields) {
    if (!Object.hasOwn(x, name)) {
      say(`/${name}`, missing(name, rule.spec))
      continue
    }
    const r = v.safeParse(rule.schema, x[name])
    if (!r.success) {
      const seen = new Set<string>()
      for (const issue of r.issues) {
        const { pointer, subject } = placeOf(name, issue)
        if (seen.has(pointer)) continue
        seen.add(pointer)
        say(`/${pointer}`, issueMessage(subject, issue, pointer === pointerToken(name) ? rule.spec : undefined))
      }
      continue
    }
    const out = r.output
    if (rule.spec.kind === 'int' && typeof out === 'number' && !Number.isSafeInteger(out)) {
      say(`/${name}`, `${name} must be a whole number between -9007199254740991 and 9007199254740991 (got ${shown(out)})`)
      continue
    }
    const unstorable = locate(out, [name], name)
    if (unstorable) say(`/${unstorable.pointer}`, unstorable.message)
    value[name] = out
  }
  const ignored: string[] = []
  for (const key of Object.keys(x)) {
    if (shape.fields.has(key)) continue
    if (shape.computed.has(key)) ignored.push(key)
    else {
      say(`/${pointerToken(key)}`, () => `${nameOf(key)} is not a field of ${shape.of}${fieldsHint(shape, key)}`)
    }
  }
  return bad > 0 ? { ignored } : { value, ignored }
}

/** After "x is not a field of …": the field meant, or the fields there are (a short list), or where they are listed. */
function fieldsHint(shape: Shape, key: string): string {
  const near = nearestName(key, [...shape.names, ...shape.computed])
  if (near) return shape.computed.has(near) ? `; did you mean ${near}? (the service computes it: leave it out)` : `; did you mean ${near}?`
  if (shape.names.length <= 12) return ` (its fields: ${shape.names.join(', ')})`
  return ' (its fields are listed in docs/reference/rest.md)'
}

/** A description as the end of a sentence: its first letter lower-cased (unless it starts an acronym), no final period. */
function clause(description: string): string {
  const d = description.trim().replace(/\.$/, '')
  return /^[A-Z][a-z]/.test(d) ? d[0].toLowerCase() + d.slice(1) : d
}

function missing(name: string, spec: FieldSpec): string {
  const may = spec.nullable && !/\bnull\b/.test(spec.description ?? '') ? ' (null when there is none)' : ''
  return spec.description ? `${name} is required${may}: ${clause(spec.description)}` : `${name} is required${may}: ${kindPhrase(spec)}`
}

const MAX_VALUES_LISTED = 20

/** What a value of a field must be, from its declaration: `a whole number`, `one of a, b, c`, `…, or null`. */
export function kindPhrase(spec: FieldSpec): string {
  let p: string
  switch (spec.kind) {
    case 'int': p = 'a whole number'; break
    case 'num': p = 'a number'; break
    case 'text': p = 'text'; break
    case 'bool': p = 'true or false'; break
    case 'ts': p = TIMESTAMP; break
    case 'date': p = DATE; break
    case 'textArray': p = 'a list of texts'; break
    case 'json': p = 'an object or a list as docs/reference/rest.md describes it'; break
    case 'enum': {
      const values = spec.values ?? []
      const listed = values.slice(0, MAX_VALUES_LISTED).join(', ')
      p = values.length > MAX_VALUES_LISTED ? `one of ${values.length} values (${listed}, …${spec.catalog ? `; all in ${spec.catalog}` : ''})` : `one of ${listed}`
    }
  }
  return spec.nullable ? `${p}, or null` : p
}

const TIMESTAMP = 'a date and time such as 2026-01-31T12:00:00Z (ISO 8601, with Z or an offset)'
const DATE = 'a date such as 2026-01-31'

/** The pointer (below the object) and the subject of a sentence (`clouds[0].cloud`) of a validator's issue in field `name`. */
function placeOf(name: string, issue: v.BaseIssue<unknown>): { pointer: string; subject: string } {
  let pointer = pointerToken(name)
  let subject = name
  for (const item of issue.path ?? []) {
    const key = (item as { key?: unknown }).key
    if (typeof key === 'number') {
      pointer += `/${key}`
      subject += `[${key}]`
    } else if (typeof key === 'string') {
      pointer += `/${pointerToken(key)}`
      subject += /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `.${key}` : `[${nameOf(key)}]`
    }
  }
  return { pointer, subject }
}

const OBJECT_TYPES = new Set(['object', 'strict_object', 'loose_object', 'object_with_rest'])

/** The options of a picklist issue's `expected` (`"a" | "b"`). */
function options(expected: string | null): string {
  return (expected ?? '')
    .replace(/^\((.*)\)$/, '$1')
    .split(' | ')
    .map((o) => {
      try {
        return String(JSON.parse(o))
      } catch {
        return o
      }
    })
    .join(', ')
}

/** What a value must be, from the validator's schema type (values inside a JSON field, which have no declaration of their own). */
function schemaPhrase(issue: v.BaseIssue<unknown>): string {
  switch (issue.type) {
    case 'string': return 'text'
    case 'number': return 'a number'
    case 'boolean': return 'true or false'
    case 'array': case 'tuple': return 'a list'
    case 'record': return 'an object'
    case 'picklist': case 'enum': return `one of ${options(issue.expected)}`
    case 'null': return 'null'
    default: return OBJECT_TYPES.has(issue.type) ? 'an object' : 'a value of another kind'
  }
}

/** One issue of the validator as a sentence about `subject`; `spec` when the issue is about the declared field itself. */
function issueMessage(subject: string, issue: v.BaseIssue<unknown>, spec: FieldSpec | undefined): string {
  const got = ` (got ${shown(issue.input)})`
  // JSON's 1e999 parses as Infinity, which passes as a number: said once, whatever the field's kind.
  if (typeof issue.input === 'number' && !Number.isFinite(issue.input)) return `${subject} must be a finite number${got}`
  if (issue.kind === 'schema') {
    if (OBJECT_TYPES.has(issue.type) && issue.input === undefined && issue.expected?.startsWith('"')) return `${subject} is required`
    if (issue.expected === 'never') return `${subject} is not expected here`
    return `${subject} must be ${spec ? kindPhrase(spec) : schemaPhrase(issue)}${got}`
  }
  const req = (issue as { requirement?: unknown }).requirement
  const size = typeof issue.input === 'string' || Array.isArray(issue.input) ? issue.input.length : undefined
  const unit = typeof issue.input === 'string' ? 'characters' : 'items'
  switch (issue.type) {
    case 'integer': return `${subject} must be a whole number${got}`
    case 'min_value': return `${subject} must be at least ${String(req)}${got}`
    case 'max_value': return `${subject} must be at most ${String(req)}${got}`
    case 'min_length': return req === 1 ? `${subject} must not be empty` : `${subject} must have at least ${String(req)} ${unit} (got ${size})`
    case 'max_length': return `${subject} must have at most ${Number(req).toLocaleString('en-US')} ${unit} (got ${size?.toLocaleString('en-US')})`
    case 'url': return `${subject} must be a URL such as https://example.my.salesforce.com${got}`
    case 'iso_timestamp': return `${subject} must be ${TIMESTAMP}${got}`
    case 'iso_date': return `${subject} must be ${DATE}${got}`
  }
  // A check or a pattern of ours carries its sentence (`must be a real calendar date …`); the validator's defaults
  // ("Invalid …") are not shown.
  return issue.message && !issue.message.startsWith('Invalid ') ? `${subject} ${issue.message}${got}` : `${subject} is not valid here${got}`
}

const UNSTORABLE_CHAR = /[\u0000\p{Cs}]/u

/** The problem of one scalar PostgreSQL could not store, or undefined. */
function scalarProblem(x: unknown): string | undefined {
  if (typeof x === 'string') {
    // With the u flag, \p{Cs} matches only a surrogate that is not part of a pair.
    const bad = UNSTORABLE_CHAR.exec(x)?.[0]
    if (bad === undefined) return undefined
    return bad === '\u0000' ? 'must not contain the NUL character' : 'must be well-formed Unicode (it holds half of a surrogate pair)'
  }
  return typeof x === 'number' && !Number.isFinite(x) ? `must be a finite number (got ${shown(x)})` : undefined
}

/** Whether a value holds nothing `scalarProblem` refuses (a walk without allocations: most records are fine). */
export function storable(x: unknown): boolean {
  if (typeof x === 'string' || typeof x === 'number') return scalarProblem(x) === undefined
  if (typeof x !== 'object' || x === null) return true
  if (Array.isArray(x)) {
    for (let i = 0; i < x.length; i++) if (!storable(x[i])) return false
    return true
  }
  for (const k in x) if (!storable(k) || !storable((x as Record<string, unknown>)[k])) return false
  return true
}

/**
 * The first value in `x` the database cannot store — text with the NUL character or half a surrogate pair (text and
 * jsonb refuse both), a number that is not finite — with its pointer and sentence; undefined when there is none.
 */
function locate(x: unknown, path: Array<string | number>, subject: string): { pointer: string; message: string } | undefined {
  if (storable(x)) return undefined
  const own = scalarProblem(x)
  if (own) return { pointer: path.map(pointerToken).join('/'), message: `${subject} ${own}` }
  if (Array.isArray(x)) {
    for (let i = 0; i < x.length; i++) {
      const p = locate(x[i], [...path, i], `${subject}[${i}]`)
      if (p) return p
    }
    return undefined
  }
  for (const [k, y] of Object.entries(x as Record<string, unknown>)) {
    const at = `${subject}.${nameOf(k)}`
    const key = scalarProblem(k)
    if (key) return { pointer: [...path, k].map(pointerToken).join('/'), message: `the name of ${at} ${key}` }
    const p = locate(y, [...path, k], at)
    if (p) return p
  }
  return undefined
}
