/**
 * Demo records of a resource that has no generator of its own (a resource just added with `orgscan scaffold`): a few
 * rows made from its field declarations alone, so that the seed, the example bundle and the generated conformance
 * tests have something to read the day the resource is declared. Deterministic: the same resource, org and scan
 * always give the same rows. A resource with a real generator (demo/bundle.ts) never gets these.
 */
import type { FieldSpec } from '../runtime/core/fields.ts'
import type { CompiledResource } from '../runtime/core/registry.ts'

type Rec = Record<string, unknown>

/** Rows of a resource without a generator: enough to page through twice at the conformance tests' page sizes. */
export const GENERIC_RECORDS = 12

const BASE = Date.UTC(2026, 0, 5)
const DAY = 86_400_000

/** A value of field `name` for row `i` (0-based); `salt` varies the rows between orgs and scans. */
function valueOf(name: string, spec: FieldSpec, i: number, salt: number, idField: string | undefined): unknown {
  // Every fifth row of a nullable field is null, so that isNull() finds rows too (never the id).
  if (spec.nullable && name !== idField && i % 5 === 4) return null
  switch (spec.kind) {
    case 'int': return name === idField ? i + 1 : ((i + salt) * 37) % 100
    case 'num': return Math.round(((i + salt) * 13.7) % 100 * 10) / 10
    case 'text': return name === idField ? `${name}-${i + 1}` : `${name} ${String.fromCharCode(97 + ((i + salt) % 26))}${i + 1}`
    case 'enum': return spec.values![(i + salt) % spec.values!.length]
    case 'bool': return (i + salt) % 2 === 0
    case 'ts': return new Date(BASE + ((i + salt) % 60) * DAY + i * 3_600_000).toISOString().replace(/\.\d{3}Z$/, 'Z')
    case 'date': return new Date(BASE + ((i + salt) % 60) * DAY).toISOString().slice(0, 10)
    case 'textArray': return [`${name}-${i + 1}`]
    case 'json': return {}
  }
}

/** The generic rows of `c` for one scan (`salt` tells orgs and scans apart). */
export function genericRecords(c: CompiledResource, salt = 0): Rec[] {
  const idField = c.decl.id?.field ?? c.tiebreak
  const stored = [...c.fields].filter(([, spec]) => !spec.expr)
  const count = c.decl.kind === 'singleton' ? 1 : GENERIC_RECORDS
  return Array.from({ length: count }, (_, i) => Object.fromEntries(stored.map(([name, spec]) => [name, valueOf(name, spec, i, salt, idField)])))
}
