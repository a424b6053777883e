/**
 * The export of one scan as a bundle `orgscan import` reads (docs/import.md), streaming in constant memory: each
 * import target's records are read in batches of BATCH rows in the order of the table's key (a keyset walk, each
 * batch its own short statement, so the embedded database's one connection serves requests between batches), and
 * each record's JSON is built by PostgreSQL from the registry (`buildObject`, the same derivation the API serves,
 * with timestamps to the microsecond). A scan's records never change once imported, so the walk needs no long
 * transaction; retention deleting the scan meanwhile is detected at the end.
 */
import type postgres from 'postgres'
import { AdminError } from '../admin.ts'
import { quotedColumn, sqlType } from '../../core/fields.ts'
import { checksumProblem, normalizeOrgId, orgIdFormProblem } from '../../core/org-id.ts'
import { buildObject, type CompiledResource } from '../../core/registry.ts'
import { importTargets } from './import-bundle.ts'
import { ProgressCounter, type ProgressSink } from './progress.ts'
import { NDJSON_FORMAT, NDJSON_VERSION, ORG_FIELDS, SCAN_FIELDS, storedFields } from './wire.ts'

export type BundleFormat = 'json' | 'ndjson'

export interface ExportRequest {
  /** 15- or 18-character org id. */
  orgId: string
  /** A scan of the org; default its latest completed scan. */
  scanId?: string
  format: BundleFormat
}

export interface ExportResult {
  orgId: string
  scanId: string
  format: BundleFormat
  /** Records written per import target. */
  counts: Record<string, number>
  bytes: number
}

/** Rows per statement. */
const BATCH = 2000

const fieldMap = (o: object) => new Map(Object.entries(o))

interface Walk {
  resource: CompiledResource
  singleton: boolean
  /** First batch, then the batches after a key. */
  first: string
  next: string | undefined
}

function walkOf(c: CompiledResource): Walk {
  const json = buildObject(storedFields(c), c.fields, true)
  const from = `FROM "${c.decl.table}" t WHERE t.scan_id = $1`
  const singleton = c.decl.kind === 'singleton'
  const key = c.tiebreak
  if (singleton || !key) return { resource: c, singleton, first: `SELECT ${json} AS j, NULL AS k ${from}`, next: undefined }
  const col = `t.${quotedColumn(key)}`
  const type = sqlType(c.fields.get(key)!)
  return {
    resource: c,
    singleton,
    first: `SELECT ${json} AS j, ${col}::text AS k ${from} ORDER BY ${col} LIMIT ${BATCH}`,
    next: `SELECT ${json} AS j, ${col}::text AS k ${from} AND ${col} > $2::${type} ORDER BY ${col} LIMIT ${BATCH}`,
  }
}

async function resolveScan(sql: postgres.Sql, req: ExportRequest): Promise<{ orgId: string; scanId: string; org: string; scan: string }> {
  // The command checks the id first (admin-ops.ts); a caller that did not is told the same.
  const form = orgIdFormProblem(req.orgId)
  if (form) throw new AdminError(`--org ${form}.`)
  const sum = checksumProblem(req.orgId)
  if (sum) throw new AdminError(`No org ${req.orgId}: ${sum}.`)
  const orgId = normalizeOrgId(req.orgId, 'org')
  const orgFields = fieldMap(ORG_FIELDS)
  const [o] = await sql.unsafe<{ org: string; latest: string | null }[]>(
    `SELECT ${buildObject([...orgFields.keys()], orgFields, true)} AS org, t.latest_scan_id::text AS latest FROM orgs t WHERE t.salesforce_id = $1`,
    [orgId],
  )
  if (!o) throw new AdminError(`No org ${orgId}.`)
  if (req.scanId !== undefined && !/^[1-9][0-9]{0,17}$/.test(req.scanId)) throw new AdminError(`--scan must be a scan id (a positive integer), got "${req.scanId.slice(0, 40)}".`)
  const scanId = req.scanId ?? o.latest
  if (scanId === null) throw new AdminError(`Org ${orgId} has no completed scan to export; name a scan with --scan ID.`)
  const scanFields = fieldMap(SCAN_FIELDS)
  const [s] = await sql.unsafe<{ scan: string }[]>(
    `SELECT ${buildObject([...scanFields.keys()], scanFields, true)} AS scan FROM scans t WHERE t.id = $1::bigint AND t.org_id = $2`,
    [scanId, orgId],
  )
  if (!s) throw new AdminError(`Org ${orgId} has no scan ${scanId}.`)
  return { orgId, scanId, org: o.org, scan: s.scan }
}

/**
 * Writes the bundle of one scan to `write` (awaited when it returns a promise: backpressure). Fails with an AdminError
 * for an unknown org or scan, before anything is written.
 */
export async function exportScan(
  sql: postgres.Sql,
  resources: readonly CompiledResource[],
  req: ExportRequest,
  write: (chunk: string) => Promise<void> | void,
  progress?: ProgressSink,
): Promise<ExportResult> {
  const { orgId, scanId, org, scan } = await resolveScan(sql, req)
  const walks = importTargets(resources).map(walkOf)
  const [totals] = await sql.unsafe<Record<string, number>[]>(
    `SELECT ${walks.map((w, i) => `(SELECT count(*)::int FROM "${w.resource.decl.table}" WHERE scan_id = $1) AS c${i}`).join(', ')}`,
    [scanId],
  )
  progress?.({ type: 'start', op: 'export', orgId, scanId, format: req.format, totalRecords: walks.reduce((n, _, i) => n + totals[`c${i}`], 0) })
  const counter = new ProgressCounter(progress ?? (() => undefined))
  const ndjson = req.format === 'ndjson'
  let bytes = 0
  const put = async (chunk: string) => {
    bytes += Buffer.byteLength(chunk)
    await write(chunk)
  }
  await put(ndjson ? `{"format":"${NDJSON_FORMAT}","version":${NDJSON_VERSION},"org":${org},"scan":${scan}}\n` : `{"org":${org},"scan":${scan},"data":{\n`)
  const counts: Record<string, number> = {}
  let firstResource = true
  for (const w of walks) {
    const name = w.resource.name
    const tag = `{"resource":"${name}","record":`
    let n = 0
    let rows = await sql.unsafe<{ j: string; k: string | null }[]>(w.first, [scanId])
    if (!ndjson && (rows.length > 0 || !w.singleton)) {
      await put(`${firstResource ? '' : ',\n'}"${name}":${w.singleton ? '' : '['}`)
      firstResource = false
    }
    while (rows.length > 0) {
      let chunk = ''
      for (const r of rows) {
        chunk += ndjson ? `${tag}${r.j}}\n` : `${n === 0 ? (w.singleton ? '' : '\n') : ',\n'}${r.j}`
        n++
        counter.record(name)
      }
      await put(chunk)
      if (!w.next || rows.length < BATCH) break
      rows = await sql.unsafe<{ j: string; k: string | null }[]>(w.next, [scanId, rows[rows.length - 1].k])
    }
    if (!ndjson && !w.singleton) await put(']')
    if (n === 0) counter.empty(name)
    counts[name] = n
  }
  // Checked before the end is written: a bundle cut short by a deletion is never complete (an NDJSON file without
  // its end line is refused as truncated, a JSON one is not JSON).
  const [still] = await sql`SELECT 1 AS one FROM scans WHERE id = ${scanId}::bigint`
  if (!still) throw new AdminError(`Scan ${scanId} was deleted while it was being exported (retention); the output is incomplete: export again.`)
  await put(ndjson ? `{"end":true,"counts":${JSON.stringify(counts)}}\n` : '\n}}\n')
  counter.finish()
  return { orgId, scanId, format: req.format, counts, bytes }
}
