/**
 * What a scan bundle holds on the wire (docs/import.md): the org, the scan, and records per import target. The same
 * declarations serve the import (validation) and the export (the SQL that renders a record), so the two cannot drift.
 */
import * as v from 'valibot'
import { f, fieldSchema, timestampSchema, type FieldSpec } from '../../core/fields.ts'
import type { CompiledResource } from '../../core/registry.ts'
import { checksum } from '../../core/org-id.ts'
import { shapeOf, type Shape } from './check.ts'

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

/** The `scans` columns of a bundle's `scan`, described for the import's messages. */
export const SCAN_FIELDS = {
  status: f.enum(['completed', 'failed', 'running', 'queued'], { description: 'How the scan ended: only a completed scan becomes the one served.' }),
  startedAt: f.ts({ description: 'When the scan started.' }),
  completedAt: f.ts({ nullable: true, description: 'When the scan finished; null for a scan that did not.' }),
  score: f.int({ nullable: true, description: 'Health score of the scan, 0–100; null when it has none.' }),
} as const satisfies Record<keyof ScanInfo, FieldSpec>

/** NDJSON bundles: the header line's `format` and `version`. */
export const NDJSON_FORMAT = 'orgscan-scan-bundle+ndjson'
export const NDJSON_VERSION = 1

/** The stored fields of a resource, in declaration order: every declared field without an `expr` (derived values are computed, never imported). */
export function storedFields(c: CompiledResource): string[] {
  return [...c.fields].filter(([, spec]) => !spec.expr).map(([n]) => n)
}

/** What one record of a resource must hold: its stored fields; its derived ones (`expr`) are computed, never imported. */
export function recordShape(c: CompiledResource): Shape {
  const single = c.decl.kind === 'singleton'
  const fields = new Map(storedFields(c).map((n) => [n, { spec: c.fields.get(n)!, schema: fieldSchema(c.fields.get(n)!) }]))
  const computed = [...c.fields].filter(([, spec]) => spec.expr).map(([n]) => n)
  return shapeOf(single ? `the ${c.name} record` : `a ${c.name} record`, single ? `the ${c.name} record` : `${c.name} records`, fields, computed)
}

/**
 * What a bundle's `org` must hold. The registry's org resource (the account-scoped one, keyed by salesforceId) gives
 * the descriptions, and its fields the bundle does not carry are the ones the service computes from the scans it
 * imports (lastScanDate, score, …): what `GET /v1/orgs/{orgId}` shows of them is accepted and ignored.
 */
export function orgShape(resources: readonly CompiledResource[]): Shape {
  const declared = resources.find((c) => c.decl.scope === 'account' && c.decl.id?.field === 'salesforceId')?.fields
  const entries = OrgInfoSchema.entries as Record<string, v.GenericSchema>
  const fields = new Map(Object.entries(ORG_FIELDS).map(([n, spec]) => [n, { spec: { ...spec, description: declared?.get(n)?.description }, schema: entries[n] }]))
  return shapeOf('the org', 'the org', fields, [...(declared?.keys() ?? [])].filter((n) => !fields.has(n)))
}

/** What a bundle's `scan` must hold. */
export function scanShape(): Shape {
  const entries = ScanInfoSchema.entries as Record<string, v.GenericSchema>
  return shapeOf('the scan', 'the scan', new Map(Object.entries(SCAN_FIELDS).map(([n, spec]) => [n, { spec, schema: entries[n] }])), [])
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
