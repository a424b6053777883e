/**
 * Example RQL filters of a resource, for tool descriptions and generated documentation: derived from the
 * filterable fields' kinds, so every resource has one and a new resource gets one with no declaration. Tests
 * run every example against the demo data, so an example can never be malformed.
 */
import type { FieldSpec } from './fields.ts'
import type { CompiledResource } from './registry.ts'

function condition(name: string, s: FieldSpec): string | undefined {
  switch (s.kind) {
    case 'bool': return `eq(${name},true)`
    case 'enum': return s.values?.length ? `eq(${name},${s.values[0]})` : undefined
    case 'int': case 'num': return `gt(${name},0)`
    case 'ts': case 'date': return `ge(${name},2025-01-01)`
    case 'text': return `ilike(${name},*a*)`
    default: return undefined
  }
}

/** An example filter over one or two of the resource's filterable fields (not its id); undefined without any. */
export function exampleFilter(c: CompiledResource): string | undefined {
  const idField = c.decl.id?.field ?? c.tiebreak
  const names = (c.decl.filterable ?? []).filter((n) => n !== idField && n !== c.decl.parent?.field)
  const rank = (s: FieldSpec) => (s.kind === 'bool' || s.kind === 'enum' ? 0 : s.kind === 'int' || s.kind === 'num' ? 1 : 2)
  const picked = [...names].sort((a, b) => rank(c.fields.get(a)!) - rank(c.fields.get(b)!)).slice(0, 2)
  const parts = picked.map((n) => condition(n, c.fields.get(n)!)).filter((x): x is string => x !== undefined)
  if (parts.length === 0) return undefined
  return parts.length === 1 ? parts[0] : `and(${parts.join(',')})`
}
