/**
 * MCP resources: the valid values of every filterable field, and the catalogs enum fields declare (such as
 * `service://issue-categories`). Derived from the registry, read without touching the database, free of quota.
 *
 * - `resource://filter-values/{resource}/{field}`: the field's type, the RQL operators it takes, an example
 *   condition, and for an enum its values (with their titles and descriptions when declared). A rejected filter
 *   value points here (`bad_filter` `links`). Listed for every enum field; every filterable field is readable
 *   through the template.
 * - a field's `catalog` (e.g. `service://issue-categories`): each value with its title and description.
 * - `service://rql`: the filter grammar (rql-guide.ts), markdown.
 */
import type { FieldSpec } from '../../core/fields.ts'
import type { CompiledResource } from '../../core/registry.ts'
import { filterOperators } from '../../core/rql/index.ts'
import { rqlGuide, RQL_URI } from './rql-guide.ts'
import type { LookupDocument } from './lookup-document.ts'

export const VALUES_TEMPLATE = 'resource://filter-values/{resource}/{field}'

export function valuesUri(resource: string, field: string): string {
  return `resource://filter-values/${resource}/${field}`
}

export type { LookupDocument } from './lookup-document.ts'

/** The text `resources/read` serves for a document. */
export function lookupText(doc: LookupDocument): string {
  const b = doc.body()
  return typeof b === 'string' ? b : JSON.stringify(b)
}

const FORMAT: Partial<Record<FieldSpec['kind'], string>> = {
  ts: 'ISO 8601 timestamp, e.g. 2026-01-31T12:00:00Z (a date alone means midnight UTC)',
  date: 'date, e.g. 2026-01-31',
  bool: 'true or false',
  int: 'integer',
  num: 'number',
  text: 'text; quote it when it contains , ( ) or spaces; like/ilike take * as wildcard',
}

function sampleValue(s: FieldSpec): string {
  switch (s.kind) {
    case 'enum': return s.values?.[0] ?? 'x'
    case 'bool': return 'true'
    case 'int': case 'num': return '10'
    case 'ts': case 'date': return '2026-01-01'
    default: return "'text'"
  }
}

function labeledValues(s: FieldSpec): Array<Record<string, string>> {
  return (s.values ?? []).map((v) => ({ value: v, ...(s.labels?.[v] ?? {}) }))
}

/** The lookup document of one filterable field (undefined when the field is not filterable there). */
export function fieldLookup(c: CompiledResource, field: string): LookupDocument | undefined {
  const s = c.fields.get(field)
  if (!s || !(c.decl.filterable ?? []).includes(field)) return undefined
  const ops = filterOperators(s.kind)
  return {
    uri: valuesUri(c.name, field),
    name: `${c.name}.${field}`,
    title: `Filter values of ${c.name}.${field}`,
    description: `Valid values and operators for filtering ${c.name} on ${field}.`,
    body: () => ({
      resource: c.name,
      field,
      type: s.kind,
      nullable: s.nullable,
      ...(s.description ? { description: s.description } : {}),
      operators: [...ops],
      ...(s.kind === 'enum' ? { values: labeledValues(s) } : { format: FORMAT[s.kind] }),
      ...(s.catalog ? { catalog: s.catalog } : {}),
      example: `eq(${field},${sampleValue(s)})`,
    }),
  }
}

/** Every catalog an enum field declares, once per address. */
export function catalogs(resources: readonly CompiledResource[]): LookupDocument[] {
  const seen = new Map<string, LookupDocument>()
  for (const c of resources) {
    for (const [name, s] of c.fields) {
      if (s.kind !== 'enum' || !s.catalog || seen.has(s.catalog)) continue
      const label = s.catalog.replace(/^[a-z]+:\/\//, '')
      seen.set(s.catalog, {
        uri: s.catalog,
        name: label,
        title: label.replace(/-/g, ' ').replace(/^./, (x) => x.toUpperCase()),
        description: `The values of ${c.name}.${name}, each with a title and a description.`,
        body: () => ({ field: name, values: labeledValues(s) }),
      })
    }
  }
  return [...seen.values()]
}

/** The documents listed by `resources/list`: the RQL grammar, every catalog, and the values of every filterable enum field. */
export function listedLookups(resources: readonly CompiledResource[]): LookupDocument[] {
  const out = [rqlGuide(), ...catalogs(resources)]
  for (const c of resources) {
    for (const f of c.decl.filterable ?? []) {
      if (c.fields.get(f)?.kind === 'enum') out.push(fieldLookup(c, f)!)
    }
  }
  return out
}

/** The document at `uri`, or undefined. */
export function readLookup(resources: readonly CompiledResource[], uri: string): LookupDocument | undefined {
  const m = /^resource:\/\/filter-values\/([A-Za-z0-9]+)\/([A-Za-z0-9]+)$/.exec(uri)
  if (m) {
    const c = resources.find((r) => r.name === m[1])
    return c ? fieldLookup(c, m[2]) : undefined
  }
  if (uri === RQL_URI) return rqlGuide()
  return catalogs(resources).find((d) => d.uri === uri)
}
