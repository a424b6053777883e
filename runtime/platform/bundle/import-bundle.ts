/**
 * The import of one scan bundle from any source, streaming: each record is validated as it arrives and written at once
 * inside ONE transaction, which also flips the org's latest scan, so a reader never sees half a scan. Nothing is
 * written when anything is invalid: after the first problem nothing more is written, reading goes on to list every
 * problem (up to MAX_PROBLEMS), and the transaction is rolled back
 * (docs/adr/0040-ndjson-bundles-and-one-pass-import.md).
 */
import * as v from 'valibot'
import type postgres from 'postgres'
import { errorCode, isConnectionFailure } from '../../core/db/errors.ts'
import { columnName } from '../../core/fields.ts'
import type { CompiledResource } from '../../core/registry.ts'
import { ProgressCounter, type ProgressSink } from './progress.ts'
import type { BundleSource } from './sources.ts'
import { COPY_FROM, ScanWriter, TableWriteError, tableShape, type TableShape } from './table-writer.ts'
import { ORG_FIELDS, OrgInfoSchema, recordSchema, ScanInfoSchema, unstorableValue, type OrgInfo, type ScanInfo } from './wire.ts'

export class ImportError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ImportError'
  }
}

export interface ImportResult {
  scanId: string
  orgId: string
  /** Records per import target (0 for a resource the bundle left out); empty when `alreadyImported`. */
  counts: Record<string, number>
  /** The org already had this scan (same start time and status): nothing was written, `scanId` is the one it has. */
  alreadyImported?: true
}

export interface ImportOptions {
  /** Write large tables with COPY (PostgreSQL); otherwise multi-row INSERTs (the embedded database). */
  copy: boolean
  /** With `copy`: tables of more records than this use COPY (default COPY_FROM; tests use 0). */
  copyFrom?: number
  progress?: ProgressSink
  /**
   * Import a scan the org already has (same `startedAt` and `status`) as another scan. Without it such a bundle
   * writes nothing and answers `alreadyImported`, so a retried import (did the first one commit?) never doubles a scan.
   */
  again?: boolean
}

/** Thrown inside the transaction (rolling it back) when the org already has the bundle's scan. */
class AlreadyImported extends Error {
  constructor(readonly scanId: string) {
    super('already imported')
  }
}

/** Problems listed at most; reading stops after this many. */
export const MAX_PROBLEMS = 20

/** The resources that own a table written by imports (first declaration of each table, org scope, stored). */
export function importTargets(resources: readonly CompiledResource[]): CompiledResource[] {
  const seen = new Set<string>()
  return resources.filter((c) => {
    if (c.decl.scope !== 'org' || c.decl.singletonSql || seen.has(c.decl.table)) return false
    seen.add(c.decl.table)
    return true
  })
}

interface Target {
  shape: TableShape
  schema: v.GenericSchema
  ints: string[]
  singleton: boolean
  summary: CompiledResource['decl']['orgSummary']
}

function targetsOf(resources: readonly CompiledResource[]): Map<string, Target> {
  return new Map(
    importTargets(resources).map((c) => {
      const shape = tableShape(c)
      const ints = shape.fields.filter((n) => c.fields.get(n)!.kind === 'int')
      return [c.name, { shape, schema: recordSchema(c), ints, singleton: c.decl.kind === 'singleton', summary: c.decl.orgSummary }]
    }),
  )
}

/** The names a source needs: every import target, and which are singletons. */
export function targetNames(resources: readonly CompiledResource[]): { known: Set<string>; singletons: Set<string> } {
  const t = importTargets(resources)
  return { known: new Set(t.map((c) => c.name)), singletons: new Set(t.filter((c) => c.decl.kind === 'singleton').map((c) => c.name)) }
}

/** Validates one record; the problem, or undefined. */
function check(target: Target, record: unknown): { ok: true; value: Record<string, unknown> } | { ok: false; problem: string } {
  const r = v.safeParse(target.schema, record)
  if (!r.success) return { ok: false, problem: v.summarize(r.issues).replace(/\n/g, '; ').slice(0, 300) }
  const value = r.output as Record<string, unknown>
  for (const n of target.ints) {
    const x = value[n]
    if (typeof x === 'number' && !Number.isSafeInteger(x)) return { ok: false, problem: `${n}: integer out of range (at most ±2^53 - 1)` }
  }
  const bad = unstorableValue(value)
  return bad ? { ok: false, problem: bad } : { ok: true, value }
}

/** Reads every item, validating, counting and tallying; `write` gets each valid record while no problem was seen. */
async function readRecords(
  source: BundleSource,
  targets: Map<string, Target>,
  problems: string[],
  write: ((t: Target, rec: Record<string, unknown>) => Promise<void> | undefined) | undefined,
  progress: ProgressCounter,
): Promise<{ counts: Map<string, number>; summary: Record<string, Record<string, number>> }> {
  const counts = new Map<string, number>()
  const summary: Record<string, Record<string, number>> = {}
  for (const t of targets.values()) if (t.summary) summary[t.summary.field] = Object.fromEntries(Object.values(t.summary.buckets).map((b) => [b, 0]))
  for await (const item of source.items()) {
    if ('problem' in item) {
      problems.push(item.problem)
    } else {
      const target = targets.get(item.resource)!
      const n = (counts.get(item.resource) ?? 0) + 1
      counts.set(item.resource, n)
      progress.record(item.resource)
      const r = check(target, item.record)
      if (!r.ok) problems.push(`${item.where()}: ${r.problem}`)
      else if (target.singleton && n > 1) problems.push(`${item.where()}: ${item.resource} is a singleton: one record per bundle`)
      else {
        if (target.summary) {
          const bucket = target.summary.buckets[String(r.value[target.summary.countBy])]
          if (bucket !== undefined) summary[target.summary.field][bucket]++
        }
        if (write && problems.length === 0) {
          const wait = write(target, r.value)
          if (wait) await wait
        }
      }
    }
    if (problems.length >= MAX_PROBLEMS) break
  }
  return { counts, summary }
}

function invalid(problems: string[]): ImportError {
  const more = problems.length >= MAX_PROBLEMS ? `\n  (reading stopped after ${MAX_PROBLEMS} problems)` : ''
  return new ImportError(`Invalid scan bundle:\n  ${problems.slice(0, MAX_PROBLEMS).join('\n  ')}${more}`)
}

function header(source: BundleSource, problems: string[]): { org: OrgInfo; scan: ScanInfo } | undefined {
  problems.push(...source.headerProblems)
  const org = v.safeParse(OrgInfoSchema, source.org)
  if (!org.success) problems.push(`org: ${v.summarize(org.issues).replace(/\n/g, '; ')}`)
  const scan = v.safeParse(ScanInfoSchema, source.scan)
  if (!scan.success) problems.push(`scan: ${v.summarize(scan.issues).replace(/\n/g, '; ')}`)
  const bad = org.success ? unstorableValue(org.output, 'org') : undefined
  if (bad) problems.push(bad)
  return org.success && scan.success && !bad && problems.length === 0 ? { org: org.output, scan: scan.output } : undefined
}

/**
 * Imports one scan for an org of `accountId` (creating the org on first import). Fails if the org belongs to another
 * account, or with every problem of an invalid bundle listed.
 */
export async function importBundle(
  sql: postgres.Sql | postgres.TransactionSql,
  resources: readonly CompiledResource[],
  accountId: string,
  source: BundleSource,
  opts: ImportOptions,
): Promise<ImportResult> {
  try {
    return await importFrom(sql, resources, accountId, source, opts)
  } finally {
    source.close?.()
  }
}

async function importFrom(
  sql: postgres.Sql | postgres.TransactionSql,
  resources: readonly CompiledResource[],
  accountId: string,
  source: BundleSource,
  opts: ImportOptions,
): Promise<ImportResult> {
  const targets = targetsOf(resources)
  const problems: string[] = []
  const progress = new ProgressCounter(opts.progress ?? (() => undefined), source.bytesRead)
  const head = header(source, problems)
  const org = source.org as { salesforceId?: unknown } | undefined
  opts.progress?.({
    type: 'start', op: 'import', format: source.format, totalRecords: source.totalRecords, totalBytes: source.totalBytes,
    orgId: typeof org?.salesforceId === 'string' ? org.salesforceId.slice(0, 18) : undefined,
  })
  if (!head) {
    // Nothing can be written; the records are still read for their problems.
    const { counts } = await readRecords(source, targets, problems, undefined, progress)
    if (problems.length < MAX_PROBLEMS) problems.push(...source.finish(counts))
    throw invalid(problems)
  }
  const result = await inTransaction(sql, async (tx) => {
    const scanId = await beginScan(tx, accountId, head.org, head.scan, opts.again === true)
    const writer = new ScanWriter(tx, scanId, opts.copy ? (opts.copyFrom ?? COPY_FROM) : undefined)
    let read
    try {
      read = await readRecords(source, targets, problems, (t, rec) => writer.add(t.shape, rec), progress)
      if (problems.length === 0) await writer.close()
    } catch (e) {
      await writer.abort()
      if (e instanceof TableWriteError) {
        const at = e.recordIndex === undefined ? '' : `record ${e.recordIndex + 1} of `
        throw new ImportError(`The database refused ${at}${e.resource}: ${e.message.split('\n')[0]}`)
      }
      throw e
    }
    if (problems.length > 0) await writer.abort()
    if (problems.length < MAX_PROBLEMS) problems.push(...source.finish(read.counts))
    if (problems.length > 0) throw invalid(problems)
    const counts = Object.fromEntries([...targets.keys()].map((name) => [name, read.counts.get(name) ?? 0]))
    await finishScan(tx, head.org.salesforceId, scanId, head.scan, read.summary, counts)
    return { scanId, orgId: head.org.salesforceId, counts }
  }).catch(async (e: unknown) => {
    if (!(e instanceof AlreadyImported)) throw e
    // Nothing was written; the bundle is still read through, so an invalid one is refused as always.
    const { counts } = await readRecords(source, targets, problems, undefined, progress)
    if (problems.length < MAX_PROBLEMS) problems.push(...source.finish(counts))
    if (problems.length > 0) throw invalid(problems)
    return { scanId: e.scanId, orgId: head.org.salesforceId, counts: {}, alreadyImported: true as const }
  })
  // Inside a caller's transaction (the first start's seed) nothing is committed yet, and VACUUM cannot run in one:
  // the caller vacuums once it has committed.
  if (!('alreadyImported' in result) && !('savepoint' in sql)) await vacuumLarge(sql, targets, result.counts)
  progress.finish()
  return result
}

/** A scan written by `stageBundle`, not yet served: `publish` makes it the org's, inside the caller's transaction. */
export interface StagedScan {
  scanId: string
  orgId: string
  counts: Record<string, number>
  publish(tx: postgres.TransactionSql): Promise<void>
}

/**
 * Writes a scan without holding a transaction for its records, to be published later: the scan row is created
 * 'running', its records are written in multi-row INSERTs that each commit on their own, so that other statements run
 * between them on the embedded database's one connection, and `publish` (in the caller's transaction) gives the scan
 * its status and makes it the org's latest. Until then no read shows any of it (an org's reads follow its latest
 * completed scan); an interruption leaves the 'running' scan with part of its records, which the caller deletes before
 * staging again. Only the first start's background demo seed stages (docs/adr/0175-first-run-under-a-minute.md):
 * every other import is one transaction.
 */
export async function stageBundle(
  sql: postgres.Sql,
  resources: readonly CompiledResource[],
  accountId: string,
  source: BundleSource,
  opts: { progress?: ProgressSink; signal?: AbortSignal } = {},
): Promise<StagedScan> {
  try {
    const targets = targetsOf(resources)
    const problems: string[] = []
    const progress = new ProgressCounter(opts.progress ?? (() => undefined), source.bytesRead)
    const head = header(source, problems)
    if (!head) throw invalid(problems)
    const running: ScanInfo = { ...head.scan, status: 'running', completedAt: null, score: null }
    const scanId = await sql.begin((tx) => beginScan(tx, accountId, head.org, running, true))
    // INSERTs only (no COPY: copyFrom undefined), which the pool runs statement by statement as a transaction would.
    const writer = new ScanWriter(sql as unknown as postgres.TransactionSql, scanId, undefined)
    let read
    try {
      // Stopped (the server stopping): the caller removes what was staged before staging again.
      const write = (t: Target, rec: Record<string, unknown>) => {
        opts.signal?.throwIfAborted()
        return writer.add(t.shape, rec)
      }
      read = await readRecords(source, targets, problems, write, progress)
      if (problems.length === 0) await writer.close()
      if (problems.length < MAX_PROBLEMS) problems.push(...source.finish(read.counts))
      if (problems.length > 0) throw invalid(problems)
    } catch (e) {
      await writer.abort()
      if (!opts.signal?.aborted) await sql`DELETE FROM scans WHERE id = ${scanId}::bigint`.catch(() => undefined)
      throw e
    }
    const counts = Object.fromEntries([...targets.keys()].map((name) => [name, read.counts.get(name) ?? 0]))
    const summary = read.summary
    progress.finish()
    return {
      scanId,
      orgId: head.org.salesforceId,
      counts,
      async publish(tx) {
        await tx`UPDATE scans SET status = ${head.scan.status}, completed_at = ${head.scan.completedAt}, score = ${head.scan.score} WHERE id = ${scanId}::bigint`
        await finishScan(tx, head.org.salesforceId, scanId, head.scan, summary, counts)
      },
    }
  } finally {
    source.close?.()
  }
}

/** VACUUMs the tables staged scans wrote many records into, once published (see `vacuumLarge`). */
export async function vacuumStaged(sql: postgres.Sql, resources: readonly CompiledResource[], counts: Record<string, number>): Promise<void> {
  await vacuumLarge(sql, targetsOf(resources), counts)
}

/** Runs `fn` in a transaction of its own, or in a savepoint of the caller's transaction (rolled back alone on failure). */
function inTransaction<T>(sql: postgres.Sql | postgres.TransactionSql, fn: (tx: postgres.TransactionSql) => Promise<T>): Promise<T> {
  return ('savepoint' in sql ? sql.savepoint(fn) : sql.begin(fn)) as Promise<T>
}

/** An import that writes at least this many records into a table vacuums the table after it commits (`vacuumLarge`). */
export const VACUUM_FROM = 1000

/**
 * VACUUMs the tables an import wrote many records into, once it has committed: their pages are then marked all-visible,
 * and a deep page of a list skips its rows in an index-only scan instead of visiting each row in the table
 * (docs/adr/0105-cheap-worst-filters.md). PostgreSQL's autovacuum gets there on its own within minutes; the embedded
 * database has no autovacuum, so there the new scan's pages would never be. Not part of the import: the scan is
 * committed, and a failure here (a connection lost) leaves it as it is; a role that may not vacuum only gets a warning.
 */
async function vacuumLarge(sql: postgres.Sql, targets: Map<string, Target>, counts: Record<string, number>): Promise<void> {
  const tables = [...targets].filter(([name]) => (counts[name] ?? 0) >= VACUUM_FROM).map(([, t]) => t.shape.resource.decl.table)
  if (tables.length === 0) return
  try {
    await sql.unsafe(`VACUUM ${tables.join(', ')}`)
  } catch {
    // The import stands; the tables are vacuumed by the next large import (or autovacuum).
  }
}

/** A database error of the org or scan row, as the one line an operator needs (the rest of the import is undone). */
async function refusedAs<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run()
  } catch (e) {
    // Only an error the database raised (it has a SQLSTATE); a lost connection or a bug is not the bundle's fault.
    if (e instanceof ImportError || !(e instanceof Error) || !/^[0-9A-Z]{5}$/.test(errorCode(e)) || isConnectionFailure(e)) throw e
    throw new ImportError(`The database refused the ${what}: ${e.message.split('\n')[0]}`)
  }
}

/** Creates or updates the org (refusing another account's) and inserts the scan row; returns the scan's id. */
async function beginScan(tx: postgres.TransactionSql, accountId: string, org: OrgInfo, scan: ScanInfo, again: boolean): Promise<string> {
  const [account] = await tx`SELECT 1 FROM accounts WHERE id = ${accountId}::bigint`
  if (!account) throw new ImportError(`No account with id ${accountId}.`)
  return refusedAs('org or its scan', () => writeOrgAndScan(tx, accountId, org, scan, again))
}

async function writeOrgAndScan(tx: postgres.TransactionSql, accountId: string, org: OrgInfo, scan: ScanInfo, again: boolean): Promise<string> {
  const existing = await tx<{ account_id: string }[]>`SELECT account_id::text AS account_id FROM orgs WHERE salesforce_id = ${org.salesforceId} FOR UPDATE`
  if (existing[0] && existing[0].account_id !== accountId) throw new ImportError(`Org ${org.salesforceId} belongs to another account.`)
  const orgRow: Record<string, unknown> = { account_id: accountId }
  for (const n of Object.keys(ORG_FIELDS)) orgRow[columnName(n)] = org[n as keyof OrgInfo]
  const [owner] = await tx<{ account_id: string }[]>`INSERT INTO orgs ${tx(orgRow)} ON CONFLICT (salesforce_id) DO UPDATE SET
    name = EXCLUDED.name, edition = EXCLUDED.edition, instance_url = EXCLUDED.instance_url, is_sandbox = EXCLUDED.is_sandbox,
    organization_type = EXCLUDED.organization_type, instance_name = EXCLUDED.instance_name, namespace_prefix = EXCLUDED.namespace_prefix,
    country = EXCLUDED.country, locale = EXCLUDED.locale, time_zone = EXCLUDED.time_zone
    RETURNING account_id::text AS account_id`
  // Checked again: an org first imported by a concurrent transaction (of another account) was not there to lock above.
  if (owner.account_id !== accountId) throw new ImportError(`Org ${org.salesforceId} belongs to another account.`)
  // This transaction now holds the org's row (new or not): a concurrent import of the same bundle waited for it, and
  // finds the scan the first one committed.
  if (!again) {
    const [same] = await tx<{ id: string }[]>`SELECT id::text AS id FROM scans
      WHERE org_id = ${org.salesforceId} AND started_at = ${scan.startedAt} AND status = ${scan.status} ORDER BY id LIMIT 1`
    if (same) throw new AlreadyImported(same.id)
  }
  const [s] = await tx<{ id: string }[]>`
    INSERT INTO scans (org_id, status, started_at, completed_at, score)
    VALUES (${org.salesforceId}, ${scan.status}, ${scan.startedAt}, ${scan.completedAt}, ${scan.score}) RETURNING id::text AS id`
  return s.id
}

/** Records the org's summary and, for a completed scan, makes it the one served. */
async function finishScan(
  tx: postgres.TransactionSql, orgId: string, scanId: string, scan: ScanInfo,
  summary: Record<string, Record<string, number>>, counts: Record<string, number>,
): Promise<void> {
  await refusedAs('scan summary', () => writeSummary(tx, orgId, scanId, scan, summary, counts))
}

async function writeSummary(
  tx: postgres.TransactionSql, orgId: string, scanId: string, scan: ScanInfo,
  summary: Record<string, Record<string, number>>, counts: Record<string, number>,
): Promise<void> {
  if (scan.status === 'completed') {
    await tx`UPDATE orgs SET latest_scan_id = ${scanId}::bigint, last_scan_date = ${scan.completedAt ?? scan.startedAt},
      last_scan_status = 'completed', scan_count = scan_count + 1, score = ${scan.score},
      summary = ${summary as never}::jsonb, resource_counts = ${counts as never}::jsonb
      WHERE salesforce_id = ${orgId}`
  } else {
    await tx`UPDATE orgs SET last_scan_date = ${scan.completedAt ?? scan.startedAt}, last_scan_status = ${scan.status},
      scan_count = scan_count + 1 WHERE salesforce_id = ${orgId}`
  }
}
