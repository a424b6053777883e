/**
 * JSON Schema (draft 2020-12) of records and tool arguments, derived from field declarations: the schemas MCP
 * clients see in `tools/list` and validate structured results against. `json` fields use their valibot shape.
 */
import { toJsonSchema } from '@valibot/to-json-schema'
import type { FieldSpec } from '../../core/fields.ts'

export type JsonSchema = { [key: string]: unknown }

export const JSON_SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema'

/** The schema of one field's wire value. */
export function fieldJsonSchema(s: FieldSpec): JsonSchema {
  let base: JsonSchema
  switch (s.kind) {
    case 'int': base = { type: 'integer' }; break
    case 'num': base = { type: 'number' }; break
    case 'text': base = { type: 'string' }; break
    case 'bool': base = { type: 'boolean' }; break
    case 'ts': base = { type: 'string', format: 'date-time' }; break
    case 'date': base = { type: 'string', format: 'date' }; break
    case 'enum': base = { type: 'string', enum: [...(s.values ?? [])] }; break
    case 'textArray': base = { type: 'array', items: { type: 'string' } }; break
    case 'json': {
      const { $schema: _dialect, ...shape } = s.schema ? (toJsonSchema(s.schema, { target: 'draft-2020-12', errorMode: 'ignore' }) as JsonSchema) : {}
      base = shape
      break
    }
  }
  if (s.description) base = { ...base, description: s.description }
  if (!s.nullable) return base
  if (s.kind === 'enum') return { ...base, type: ['string', 'null'], enum: [...(s.values ?? []), null] }
  if (typeof base.type === 'string') return { ...base, type: [base.type, 'null'] }
  return { anyOf: [base, { type: 'null' }] }
}

/** How a record schema describes one field: `fieldJsonSchema` (complete) or a lean form (`leanFieldJsonSchema`). */
export type FieldSchemaOf = (name: string, spec: FieldSpec) => JsonSchema

/**
 * An object schema of records with these fields; `allRequired` false for sparse fieldsets; `schemaOf` how each field
 * is described (default: completely, with its description).
 */
export function recordJsonSchema(names: readonly string[], fields: ReadonlyMap<string, FieldSpec>, allRequired: boolean, schemaOf: FieldSchemaOf = (_n, s) => fieldJsonSchema(s)): JsonSchema {
  const properties: Record<string, JsonSchema> = {}
  for (const n of names) properties[n] = schemaOf(n, fields.get(n)!)
  return { type: 'object', properties, ...(allRequired ? { required: [...names] } : {}), additionalProperties: false }
}

/** Values longer than this (as JSON) are not listed in a lean schema: a lookup document lists them. */
const INLINE_VALUES_CHARS = 60

const LEAN_TYPE: Record<Exclude<FieldSpec['kind'], 'enum' | 'json'>, string> = { int: 'integer', num: 'number', text: 'string', bool: 'boolean', ts: 'string', date: 'string', textArray: 'array' }

/**
 * The lean form of a JSON shape: names, types, items and short enumerations; no descriptions, requirements, formats
 * or closed objects. `{anyOf: [{type: t}, {type: 'null'}]}` becomes `{type: [t, 'null']}`.
 */
export function leanShape(x: JsonSchema): JsonSchema {
  const out: JsonSchema = {}
  const any = x.anyOf as JsonSchema[] | undefined
  if (any) {
    const lean = any.map(leanShape)
    const types = lean.map((b) => (Object.keys(b).length === 1 && typeof b.type === 'string' ? b.type : undefined))
    return types.every((t) => t !== undefined) ? { type: types } : { anyOf: lean }
  }
  if (Array.isArray(x.enum) && JSON.stringify(x.enum).length <= INLINE_VALUES_CHARS) out.enum = x.enum
  else if (x.type !== undefined) out.type = x.type
  if (x.properties) out.properties = Object.fromEntries(Object.entries(x.properties as Record<string, JsonSchema>).map(([k, v]) => [k, leanShape(v)]))
  if (x.items) out.items = leanShape(x.items as JsonSchema)
  if (x.additionalProperties && typeof x.additionalProperties === 'object') out.additionalProperties = leanShape(x.additionalProperties as JsonSchema)
  return out
}

/**
 * One field's wire value for a schema an assistant pays for by the character (MCP `tools/list`): its type, and a
 * description only where the name does not say enough (the field's `note`). An enumeration too long to list inline is
 * a string whose description names `valuesAt`, the document that lists its values (a filter-value lookup or a
 * catalog); without one, its values stay inline. Real records validate against it exactly as against `fieldJsonSchema`.
 */
export function leanFieldJsonSchema(s: FieldSpec, valuesAt?: string): JsonSchema {
  const nullable = (type: string | string[]) => (!s.nullable ? type : typeof type === 'string' ? [type, 'null'] : [...type, 'null'])
  const notes = [s.note]
  let base: JsonSchema
  switch (s.kind) {
    case 'enum': {
      const values = [...(s.values ?? [])]
      if (!valuesAt || JSON.stringify(values).length <= INLINE_VALUES_CHARS) {
        base = { enum: s.nullable ? [...values, null] : values }
      } else {
        base = { type: nullable('string') }
        notes.push(`values: ${valuesAt}`)
      }
      break
    }
    case 'json': {
      const { $schema: _dialect, ...shape } = s.schema ? (toJsonSchema(s.schema, { target: 'draft-2020-12', errorMode: 'ignore' }) as JsonSchema) : {}
      base = leanShape(shape)
      if (s.nullable) base = typeof base.type === 'string' ? { ...base, type: [base.type, 'null'] } : { anyOf: [base, { type: 'null' }] }
      break
    }
    case 'textArray':
      base = { type: nullable('array'), items: { type: 'string' } }
      break
    default:
      base = { type: nullable(LEAN_TYPE[s.kind]) }
  }
  const description = notes.filter(Boolean).join('; ')
  return description ? { ...base, description } : base
}
