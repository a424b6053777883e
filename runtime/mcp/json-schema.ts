/**
 * JSON Schema (draft 2020-12) of records and tool arguments, derived from field declarations: the schemas MCP
 * clients see in `tools/list` and validate structured results against. `json` fields use their valibot shape.
 */
import { toJsonSchema } from '@valibot/to-json-schema'
import type { FieldSpec } from '../fields.ts'

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

/** An object schema of records with these fields; `allRequired` false for sparse fieldsets. */
export function recordJsonSchema(names: readonly string[], fields: ReadonlyMap<string, FieldSpec>, allRequired: boolean): JsonSchema {
  const properties: Record<string, JsonSchema> = {}
  for (const n of names) properties[n] = fieldJsonSchema(fields.get(n)!)
  return { type: 'object', properties, ...(allRequired ? { required: [...names] } : {}), additionalProperties: false }
}
