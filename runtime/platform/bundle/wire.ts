/**
 * What a scan bundle holds on the wire (docs/import.md): the org, the scan, and records per import target. The same
 * declarations serve the import (validation) and the export (the SQL that renders a record), so the two cannot drift.
 */
import * as v from 'valibot'
import { f, fieldSchema, timestampSchema, type FieldSpec } from '../../core/fields.ts'
import type { CompiledResource } from '../../core/registry.ts'
import { checksum } from '../../core/org-id.ts'

const ts = timestampSchema

export const OrgInfoSchema = v.strictObject({
  // Stored in the canonical form (the checksum upper-case), the form every path resolves to: an id whose checksum
  // does not match would be an org no endpoint can reach.
  salesforceId: v.pipe(
    v.string(),
    v.regex(/^[A-Za-z0-9]{18}$/, 'must be an 18-character org id'),
    v.check((id) => id.slice(15).toUpperCase() === checksum(id.slice(0, 15)), 'has a checksum (its last 3 characters) that does not match its first 15'),
    v.transform((id) => id.slice(0, 15) + checksum(id.slice(0, 15))),
  ),
  name: v.pipe(v.string(), v.minLength(1), v.maxLength(1000)),
  edition: v.string(),
  instanceUrl: v.pipe(v.string(), v.url()),
  isSandbox: v.boolean(),
  organizationType: v.string(),
  instanceName: v.string(),
  namespacePrefix: v.nullable(v.string()),
  country: v.nullable(v.string()),
  locale: v.string(),
  timeZone: v.string(),
  createdDate: ts,
})
export type OrgInfo = v.InferOutput<typeof OrgInfoSchema>

export const ScanInfoSchema = v.strictObject({
  status: v.picklist(['completed', 'failed', 'running', 'queued']),
  startedAt: ts,
  completedAt: v.nullable(ts),
  score: v.nullable(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(100))),
})
export type ScanInfo = v.InferOutput<typeof ScanInfoSchema>

/** The `orgs` columns of a bundle's `org` (column = snake_case of the name), for the export's SQL and the import's row. */
export const ORG_FIELDS = {
  salesforceId: f.text(), name: f.text(), edition: f.text(), instanceUrl: f.text(), isSandbox: f.bool(),
  organizationType: f.text(), instanceName: f.text(), namespacePrefix: f.text({ nullable: true }),
  country: f.text({ nullable: true }), locale: f.text(), timeZone: f.text(), createdDate: f.ts(),
} as const satisfies Record<keyof OrgInfo, FieldSpec>

/** The `scans` columns of a bundle's `scan`. */
export const SCAN_FIELDS = {
  status: f.text(), startedAt: f.ts(), completedAt: f.ts({ nullable: true }), score: f.int({ nullable: true }),
} as const satisfies Record<keyof ScanInfo, FieldSpec>

/** NDJSON bundles: the header line's `format` and `version`. */
export const NDJSON_FORMAT = 'orgscan-scan-bundle+ndjson'
export const NDJSON_VERSION = 1

/** The stored fields of a resource, in declaration order: every declared field without an `expr` (derived values are computed, never imported). */
export function storedFields(c: CompiledResource): string[] {
  return [...c.fields].filter(([, spec]) => !spec.expr).map(([n]) => n)
}

/** The valibot schema of one imported record of a resource. */
export function recordSchema(c: CompiledResource): v.GenericSchema {
  const entries: Record<string, v.GenericSchema> = {}
  for (const n of storedFields(c)) entries[n] = fieldSchema(c.fields.get(n)!)
  return v.strictObject(entries)
}

const UNSTORABLE_CHAR = /[\u0000\p{Cs}]/u

/** The problem of one scalar, or undefined. */
function scalarProblem(x: unknown): string | undefined {
  if (typeof x === 'string') {
    // With the u flag, \p{Cs} matches only a surrogate that is not part of a pair.
    const bad = UNSTORABLE_CHAR.exec(x)?.[0]
    if (bad === undefined) return undefined
    return bad === '\u0000' ? 'text must not contain the NUL character' : 'text must be well-formed Unicode (a lone surrogate)'
  }
  return typeof x === 'number' && !Number.isFinite(x) ? 'number must be finite' : undefined
}

/** Whether a value holds anything `scalarProblem` refuses (a walk without allocations: most records are fine). */
function storable(x: unknown): boolean {
  if (typeof x === 'string' || typeof x === 'number') return scalarProblem(x) === undefined
  if (typeof x !== 'object' || x === null) return true
  if (Array.isArray(x)) {
    for (let i = 0; i < x.length; i++) if (!storable(x[i])) return false
    return true
  }
  for (const k in x) if (!storable(k) || !storable((x as Record<string, unknown>)[k])) return false
  return true
}

/** The path and problem of the first unstorable value in `x`. */
function locate(x: unknown, path: string): string | undefined {
  const own = scalarProblem(x)
  if (own) return `${path || 'value'}: ${own}`
  if (typeof x !== 'object' || x === null) return undefined
  if (Array.isArray(x)) {
    for (let i = 0; i < x.length; i++) {
      const p = locate(x[i], `${path}[${i}]`)
      if (p) return p
    }
    return undefined
  }
  for (const [k, y] of Object.entries(x)) {
    const at = path ? `${path}.${k.slice(0, 40)}` : k.slice(0, 40)
    const p = scalarProblem(k) ? `${at} (key): ${scalarProblem(k)}` : locate(y, at)
    if (p) return p
  }
  return undefined
}

/**
 * What the field schemas cannot say and the database cannot store: text that is not well-formed Unicode or holds
 * the NUL character (PostgreSQL's text and jsonb refuse both) and numbers that are not finite, anywhere in a value.
 * Returns the path and the problem of the first such value, or undefined.
 */
export function unstorableValue(value: unknown, path = ''): string | undefined {
  return storable(value) ? undefined : locate(value, path)
}

/** The lines of the NDJSON bundle of a bundle object — header, one per record, end — each without its newline. */
export function* ndjsonLines(bundle: { org: unknown; scan: unknown; data: Record<string, unknown> }): Generator<string> {
  yield JSON.stringify({ format: NDJSON_FORMAT, version: NDJSON_VERSION, org: bundle.org, scan: bundle.scan })
  const counts: Record<string, number> = {}
  for (const [resource, raw] of Object.entries(bundle.data)) {
    const list = Array.isArray(raw) ? raw : [raw]
    counts[resource] = list.length
    for (const record of list) yield JSON.stringify({ resource, record })
  }
  yield JSON.stringify({ end: true, counts })
}
