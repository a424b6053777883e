/**
 * The import of one scan bundle from any source, streaming: each record is validated as it arrives and written at once
 * inside ONE transaction, which also flips the org's latest scan, so a reader never sees half a scan. Nothing is
 * written when anything is invalid: after the first problem nothing more is written, reading goes on to find every
 * problem (the first MAX_LISTED listed with their places, the rest counted), and the transaction is rolled back
 * (docs/adr/0040-ndjson-bundles-and-one-pass-import.md, docs/adr/0170-import-errors-for-people.md).
 */
import type postgres from 'postgres'
import { errorCode, isConnectionFailure } from '../../core/db/errors.ts'
import { columnName } from '../../core/fields.ts'
import { isJsonObject } from '../../core/json-object.ts'
import type { CompiledResource } from '../../core/registry.ts'
import { checkObject, type Report, type Shape } from './check.ts'
import { ProblemList, renderPlace, shown, type IgnoredFields, type Place, type Problem } from './problems.ts'
import { ProgressCounter, type ProgressSink } from './progress.ts'
import type { BundleSource } from './sources.ts'
import { COPY_FROM, ScanWriter, TableWriteError, tableShape, type TableShape } from './table-writer.ts'
import { ORG_FIELDS, orgShape, recordShape, scanShape, type OrgInfo, type ScanInfo } from './wire.ts'

export class ImportError extends Error {
  /** An invalid bundle's problems (the first MAX_LISTED), and how many more it has. */
  readonly problems?: Problem[]
  readonly unlisted?: number

  constructor(message: string, detail?: { problems: Problem[]; unlisted: number }) {
    super(message)
    this.name = 'ImportError'
    if (detail) {
      this.problems = detail.problems
      this.unlisted = detail.unlisted
    }
  }
}

export interface ImportResult {
  scanId: string
  orgId: string
  /** Records per import target (0 for a resource the bundle left out); empty when `alreadyImported`. */
  counts: Record<string, number>
  /** The org already had this scan (same start time and status): nothing was written, `scanId` is the one it has. */
  alreadyImported?: true
  /** Computed values the bundle held (as `GET` shows them), which the import ignored; absent when there were none. */
  ignored?: IgnoredFields[]
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
  check: Shape
  /** The field unique among a scan's records of the resource (its table's key), checked before the database sees it. */
  key: string | undefined
  singleton: boolean
  summary: CompiledResource['decl']['orgSummary']
}

function targetsOf(resources: readonly CompiledResource[]): Map<string, Target> {
  return new Map(
    importTargets(resources).map((c) => {
      const singleton = c.decl.kind === 'singleton'
      return [c.name, { shape: tableShape(c), check: recordShape(c), key: singleton ? undefined : c.tiebreak, singleton, summary: c.decl.orgSummary }]
    }),
  )
}

/** The names a source needs: every import target, and which are singletons. */
export function targetNames(resources: readonly CompiledResource[]): { known: Set<string>; singletons: Set<string> } {
  const t = importTargets(resources)
  return { known: new Set(t.map((c) => c.name)), singletons: new Set(t.filter((c) => c.decl.kind === 'singleton').map((c) => c.name)) }
}

/** The computed values a bundle held, one entry per object kind (the org, the scan, a resource). */
class IgnoredLog {
  private readonly byKind = new Map<string, IgnoredFields>()

  note(kind: string, place: () => Place, fields: string[]): void {
    const e = this.byKind.get(kind)
    if (!e) return void this.byKind.set(kind, { ...place(), fields: [...fields], records: 1 })
    e.records++
    for (const f of fields) if (!e.fields.includes(f)) e.fields.push(f)
  }

  list(): IgnoredFields[] | undefined {
    return this.byKind.size ? [...this.byKind.values()] : undefined
  }
}

/** Reports problems below `place` into `problems` (a sentence made by a function is made only while it is listed). */
const reportAt = (problems: ProblemList, place: () => Place): Report => (pointer, message) => {
  const p = place()
  problems.add({ ...p, pointer: p.pointer + pointer, message: typeof message === 'string' ? message : problems.full ? '' : message() })
}

/** A key value as the duplicate check compares it: the raw id of a record, whether or not the rest of it is valid. */
function keyOf(record: unknown, key: string): string | number | undefined {
  if (!isJsonObject(record)) return undefined
  const k = record[key]
  return typeof k === 'string' || typeof k === 'number' ? k : undefined
}

/**
 * Reads every item, checking, counting and tallying; `write` gets each valid record while no problem was seen. The
 * keys seen are kept per resource (a number or a short text per record), so that a second record with a key names the
 * first's place.
 */
async function readRecords(
  source: BundleSource,
  targets: Map<string, Target>,
  problems: ProblemList,
  ignored: IgnoredLog,
  write: ((t: Target, rec: Record<string, unknown>) => Promise<void> | undefined) | undefined,
  progress: ProgressCounter,
): Promise<{ counts: Map<string, number>; summary: Record<string, Record<string, number>> }> {
  const counts = new Map<string, number>()
  const keys = new Map<string, Map<string | number, number>>()
  const firstPos = new Map<string, number>()
  const summary: Record<string, Record<string, number>> = {}
  for (const t of targets.values()) if (t.summary) summary[t.summary.field] = Object.fromEntries(Object.values(t.summary.buckets).map((b) => [b, 0]))
  for await (const item of source.items()) {
    if ('problem' in item) {
      problems.add(item.problem)
      continue
    }
    const { resource, pos } = item
    const target = targets.get(resource)!
    const n = (counts.get(resource) ?? 0) + 1
    counts.set(resource, n)
    progress.record(resource)
    const place = () => source.placeOf(resource, pos)
    if (target.singleton && n > 1) {
      problems.add({ ...place(), message: `${resource} holds one record per bundle; the first is at ${renderPlace(source.placeOf(resource, firstPos.get(resource)!))}` })
      continue
    }
    if (n === 1) firstPos.set(resource, pos)
    if (isAnswer(item.record) && !target.check.fields.has('data')) {
      problems.add({ ...place(), message: 'this is a whole answer of the API: put its data member here, the record itself' })
      continue
    }
    const r = checkObject(target.check, item.record, reportAt(problems, place))
    if (r.ignored.length) ignored.note(resource, place, r.ignored)
    if (target.key) {
      const k = keyOf(item.record, target.key)
      if (k !== undefined) {
        let seen = keys.get(resource)
        if (!seen) keys.set(resource, (seen = new Map()))
        const first = seen.get(k)
        if (first !== undefined) {
          const there = source.placeOf(resource, first)
          const message = `${target.key} ${shown(k)} is used twice among ${resource} records: first at ${renderPlace({ ...there, pointer: `${there.pointer}/${target.key}` })}, again here`
          reportAt(problems, place)(`/${target.key}`, message)
          continue
        }
        seen.set(k, pos)
      }
    }
    if (!r.value) continue
    if (target.summary) {
      const bucket = target.summary.buckets[String(r.value[target.summary.countBy])]
      if (bucket !== undefined) summary[target.summary.field][bucket]++
    }
    if (write && problems.count === 0) {
      const wait = write(target, r.value)
      if (wait) await wait
    }
  }
  return { counts, summary }
}

function invalid(problems: ProblemList): ImportError {
  return new ImportError(problems.render(), { problems: problems.listed, unlisted: problems.unlisted })
}

/** An answer of the API (`{"data":…,"meta":…,"links":…}`) pasted where the object it carries belongs. */
function isAnswer(x: unknown): boolean {
  return isJsonObject(x) && 'data' in x && Object.keys(x).every((k) => k === 'data' || k === 'meta' || k === 'links')
}

/** The org or the scan of a bundle, checked; undefined when it has a problem. */
function part(name: 'org' | 'scan', x: unknown, place: Place, shape: Shape, problems: ProblemList, ignored: IgnoredLog): Record<string, unknown> | undefined {
  const what = name === 'org' ? "the org's identity and settings (docs/import.md)" : 'its status, times and score (docs/import.md)'
  if (x === undefined) problems.add({ ...place, message: `${name} is missing: ${what}` })
  else if (isAnswer(x)) problems.add({ ...place, message: `this is a whole answer of the API: put its data member here, the ${name} itself` })
  else {
    const r = checkObject(shape, x, reportAt(problems, () => place))
    if (r.ignored.length) ignored.note(name, () => place, r.ignored)
    return r.value
  }
  return undefined
}

function header(source: BundleSource, resources: readonly CompiledResource[], problems: ProblemList, ignored: IgnoredLog): { org: OrgInfo; scan: ScanInfo } | undefined {
  for (const p of source.headerProblems) problems.add(p)
  if (source.unreadable) return undefined
  const org = part('org', source.org, source.orgPlace, orgShape(resources), problems, ignored)
  const scan = part('scan', source.scan, source.scanPlace, scanShape(), problems, ignored)
  return org && scan && problems.count === 0 ? { org: org as OrgInfo, scan: scan as ScanInfo } : undefined
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
  const problems = new ProblemList()
  const ignored = new IgnoredLog()
  const progress = new ProgressCounter(opts.progress ?? (() => undefined), source.bytesRead)
  const head = header(source, resources, problems, ignored)
  const org = source.org as { salesforceId?: unknown } | undefined
  opts.progress?.({
    type: 'start', op: 'import', format: source.format, totalRecords: source.totalRecords, totalBytes: source.totalBytes,
    orgId: typeof org?.salesforceId === 'string' ? org.salesforceId.slice(0, 18) : undefined,
  })
  if (!head) {
    // Nothing can be written; the records are still read for their problems.
    const { counts } = await readRecords(source, targets, problems, ignored, undefined, progress)
    for (const p of source.finish(counts)) problems.add(p)
    throw invalid(problems)
  }
  const result = await inTransaction(sql, async (tx) => {
    const scanId = await beginScan(tx, accountId, head.org, head.scan, opts.again === true)
    const writer = new ScanWriter(tx, scanId, opts.copy ? (opts.copyFrom ?? COPY_FROM) : undefined)
    let read
    try {
      read = await readRecords(source, targets, problems, ignored, (t, rec) => writer.add(t.shape, rec), progress)
      if (problems.count === 0) await writer.close()
    } catch (e) {
      await writer.abort()
      if (e instanceof TableWriteError) {
        const at = e.recordIndex === undefined ? '' : `record ${e.recordIndex + 1} of `
        throw new ImportError(`The database refused ${at}${e.resource}: ${e.message.split('\n')[0]}`)
      }
      throw e
    }
    if (problems.count > 0) await writer.abort()
    for (const p of source.finish(read.counts)) problems.add(p)
    if (problems.count > 0) throw invalid(problems)
    const counts = Object.fromEntries([...targets.keys()].map((name) => [name, read.counts.get(name) ?? 0]))
    await finishScan(tx, head.org.salesforceId, scanId, head.scan, read.summary, counts)
    return { scanId, orgId: head.org.salesforceId, counts, ...noted(ignored) }
  }).catch(async (e: unknown) => {
    if (!(e instanceof AlreadyImported)) throw e
    // Nothing was written; the bundle is still read through, so an invalid one is refused as always.
    const { counts } = await readRecords(source, targets, problems, ignored, undefined, progress)
    for (const p of source.finish(counts)) problems.add(p)
    if (problems.count > 0) throw invalid(problems)
    return { scanId: e.scanId, orgId: head.org.salesforceId, counts: {}, alreadyImported: true as const, ...noted(ignored) }
  })
  // Inside a caller's transaction (the first start's seed) nothing is committed yet, and VACUUM cannot run in one:
  // the caller vacuums once it has committed.
  if (!('alreadyImported' in result) && !('savepoint' in sql)) await vacuumLarge(sql, targets, result.counts)
  progress.finish()
  return result
}

/** `{ignored}` when the bundle held computed values, else nothing (a result without them stays as it was). */
function noted(ignored: IgnoredLog): { ignored?: IgnoredFields[] } {
  const list = ignored.list()
  return list ? { ignored: list } : {}
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
    const problems = new ProblemList()
    const ignored = new IgnoredLog()
    const progress = new ProgressCounter(opts.progress ?? (() => undefined), source.bytesRead)
    const head = header(source, resources, problems, ignored)
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
      read = await readRecords(source, targets, problems, ignored, write, progress)
      if (problems.count === 0) await writer.close()
      for (const p of source.finish(read.counts)) problems.add(p)
      if (problems.count > 0) throw invalid(problems)
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
