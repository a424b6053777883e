/**
 * Scan import: the contract with the scanner. A bundle is validated against the registry,
 * then written in ONE transaction that also flips the org's latest_scan_id, so a reader never sees half a scan.
 */
import * as v from 'valibot'
import type postgres from 'postgres'
import { columnName, fieldSchema } from './fields.ts'
import type { CompiledResource } from './registry.ts'

const ts = v.pipe(v.string(), v.isoTimestamp())

export const OrgInfoSchema = v.strictObject({
  salesforceId: v.pipe(v.string(), v.regex(/^[A-Za-z0-9]{18}$/, 'must be an 18-character org id')),
  name: v.pipe(v.string(), v.minLength(1)),
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

export interface ScanBundle {
  org: OrgInfo
  scan: ScanInfo
  /** Records per resource name; a singleton takes one object. Omitted resources import as empty. */
  data: Record<string, unknown>
}

export class ImportError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ImportError'
  }
}

/** The resources that own a table written by imports (first declaration of each table, org scope, stored). */
export function importTargets(resources: readonly CompiledResource[]): CompiledResource[] {
  const seen = new Set<string>()
  return resources.filter((c) => {
    if (c.decl.scope !== 'org' || c.decl.singletonSql || seen.has(c.decl.table)) return false
    seen.add(c.decl.table)
    return true
  })
}

function recordSchema(c: CompiledResource) {
  const entries: Record<string, v.GenericSchema> = {}
  for (const [n, spec] of c.fields) if (!spec.expr) entries[n] = fieldSchema(spec)
  return v.strictObject(entries)
}

function validate(resources: readonly CompiledResource[], bundle: ScanBundle): Map<CompiledResource, Record<string, unknown>[]> {
  const problems: string[] = []
  const org = v.safeParse(OrgInfoSchema, bundle?.org)
  if (!org.success) problems.push(`org: ${v.summarize(org.issues)}`)
  const scan = v.safeParse(ScanInfoSchema, bundle?.scan)
  if (!scan.success) problems.push(`scan: ${v.summarize(scan.issues)}`)
  const targets = importTargets(resources)
  const known = new Set(targets.map((c) => c.name))
  for (const k of Object.keys(bundle?.data ?? {})) if (!known.has(k)) problems.push(`data.${k}: unknown resource`)
  const out = new Map<CompiledResource, Record<string, unknown>[]>()
  for (const c of targets) {
    const raw = bundle?.data?.[c.name]
    if (raw === undefined) continue
    const list = c.decl.kind === 'singleton' ? [raw] : raw
    if (!Array.isArray(list)) {
      problems.push(`data.${c.name}: must be an array`)
      continue
    }
    const schema = recordSchema(c)
    const rows: Record<string, unknown>[] = []
    list.forEach((rec, i) => {
      const r = v.safeParse(schema, rec)
      if (!r.success) problems.push(`data.${c.name}[${i}]: ${v.summarize(r.issues).slice(0, 300)}`)
      else rows.push(r.output as Record<string, unknown>)
    })
    out.set(c, rows)
    if (problems.length > 20) break
  }
  if (problems.length) throw new ImportError(`Invalid scan bundle:\n  ${problems.slice(0, 20).join('\n  ')}`)
  return out
}

function toColumns(c: CompiledResource, rec: Record<string, unknown>, scanId: string): Record<string, unknown> {
  const row: Record<string, unknown> = { scan_id: scanId }
  for (const [n, spec] of c.fields) {
    if (spec.expr) continue
    row[columnName(n)] = rec[n] ?? null
  }
  return row
}

export interface ImportResult {
  scanId: string
  orgId: string
  counts: Record<string, number>
}

/**
 * Imports one scan for an org of `accountId` (creating the org on first import). Fails if the org belongs to
 * another account. Progress lines go to `progress`.
 */
export async function importScan(
  sql: postgres.Sql,
  resources: readonly CompiledResource[],
  accountId: string,
  bundle: ScanBundle,
  progress: (line: string) => void = () => undefined,
): Promise<ImportResult> {
  const data = validate(resources, bundle)
  const { org, scan } = bundle
  const counts: Record<string, number> = {}
  for (const [c, rows] of data) counts[c.name] = rows.length
  return sql.begin(async (tx) => {
    const existing = await tx<{ account_id: string }[]>`SELECT account_id::text AS account_id FROM orgs WHERE salesforce_id = ${org.salesforceId} FOR UPDATE`
    if (existing[0] && existing[0].account_id !== accountId) throw new ImportError(`Org ${org.salesforceId} belongs to another account.`)
    const orgRow = {
      salesforce_id: org.salesforceId, account_id: accountId, name: org.name, edition: org.edition, instance_url: org.instanceUrl,
      is_sandbox: org.isSandbox, organization_type: org.organizationType, instance_name: org.instanceName,
      namespace_prefix: org.namespacePrefix, country: org.country, locale: org.locale, time_zone: org.timeZone, created_date: org.createdDate,
    }
    await tx`INSERT INTO orgs ${tx(orgRow)} ON CONFLICT (salesforce_id) DO UPDATE SET
      name = EXCLUDED.name, edition = EXCLUDED.edition, instance_url = EXCLUDED.instance_url, is_sandbox = EXCLUDED.is_sandbox,
      organization_type = EXCLUDED.organization_type, instance_name = EXCLUDED.instance_name, namespace_prefix = EXCLUDED.namespace_prefix,
      country = EXCLUDED.country, locale = EXCLUDED.locale, time_zone = EXCLUDED.time_zone`
    const [s] = await tx<{ id: string }[]>`
      INSERT INTO scans (org_id, status, started_at, completed_at, score)
      VALUES (${org.salesforceId}, ${scan.status}, ${scan.startedAt}, ${scan.completedAt}, ${scan.score}) RETURNING id::text AS id`
    for (const [c, rows] of data) {
      if (rows.length === 0) continue
      const cols = ['scan_id', ...[...c.fields].filter(([, sp]) => !sp.expr).map(([n]) => columnName(n))]
      const chunk = Math.max(1, Math.floor(30000 / cols.length))
      for (let i = 0; i < rows.length; i += chunk) {
        const part = rows.slice(i, i + chunk).map((r) => toColumns(c, r, s.id))
        await tx`INSERT INTO ${tx(c.decl.table)} ${tx(part as never, cols as never)}`
      }
      if (rows.length >= 5000) progress(`  ${c.name}: ${rows.length} records`)
    }
    // Summary counts declared by resources (orgSummary), plus a record count per resource.
    const summary: Record<string, Record<string, number>> = {}
    for (const [c, rows] of data) {
      const spec = c.decl.orgSummary
      if (!spec) continue
      const counts: Record<string, number> = Object.fromEntries(Object.values(spec.buckets).map((b) => [b, 0]))
      for (const r of rows) {
        const bucket = spec.buckets[String(r[spec.countBy])]
        if (bucket !== undefined) counts[bucket]++
      }
      summary[spec.field] = counts
    }
    if (scan.status === 'completed') {
      await tx`UPDATE orgs SET latest_scan_id = ${s.id}::bigint, last_scan_date = ${scan.completedAt ?? scan.startedAt},
        last_scan_status = 'completed', scan_count = scan_count + 1, score = ${scan.score},
        summary = ${summary as never}::jsonb, resource_counts = ${counts as never}::jsonb
        WHERE salesforce_id = ${org.salesforceId}`
    } else {
      await tx`UPDATE orgs SET last_scan_date = ${scan.completedAt ?? scan.startedAt}, last_scan_status = ${scan.status},
        scan_count = scan_count + 1 WHERE salesforce_id = ${org.salesforceId}`
    }
    return { scanId: s.id, orgId: org.salesforceId, counts }
  })
}
