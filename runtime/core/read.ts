/**
 * The read pipeline shared by REST and MCP: plan → statement → one query → result. Authentication and
 * quota happen before this; rendering after it, per surface.
 */
import type postgres from 'postgres'
import { ApiError, toApiError } from './errors.ts'
import type { Principal } from './principal.ts'
import type { CompiledResource } from './registry.ts'
import { createHash } from 'node:crypto'
import { planCount, planGet, planList, type CountPlan, type GetPlan, type ListPlan, type QueryInput, type Surface } from './plan.ts'
import type { ResponseCache } from './cache/response-cache.ts'
import type { OrgState, OrgStateCache } from './cache/org-state.ts'
import type { TotalCache } from './cache/totals.ts'
import type { ReplicaReads } from './db/replica.ts'
import { countStatement, getStatement, listStatement, orgAccessStatement, type ResultRow, type Scope, type Statement } from './statements.ts'
import type { PreparedShapes } from './db/prepared-shapes.ts'
import { normalizeOrgId } from './org-id.ts'
import { errorCode } from './db/errors.ts'
import { withDeadline } from './db/deadline.ts'
import { Answer, type ReadResult } from './answer.ts'

export type { ReadResult } from './answer.ts'
import type { OperationKind } from './operations.ts'


export interface ReadRequest {
  resource: CompiledResource
  op: OperationKind
  /** Path parameters by name (orgId, the id param, the parent param). */
  params: Readonly<Record<string, string | undefined>>
  query: QueryInput
  surface: Surface
  principal: Principal
  /**
   * An org-scoped answer comes with its records lent from the response cache as bytes (`dataBytes`, `release()` once
   * written), for a surface that writes them as they are; otherwise they are text (`data`) and nothing is lent.
   */
  lend: boolean
  /**
   * Waits for the request's turn at the database (fair share: runtime/platform/pipeline/fair-share.ts): the read
   * connection (an index into `ReadDb.reads`) its statements run on, and the function that hands it back. Taken just
   * before the read's first statement, so an answer from the response cache never waits for it; absent: no turn is
   * taken.
   */
  turn?: () => Promise<{ connection: number; release: () => void }>
}

/** Where reads run: the read pool, which of its statements may be prepared, and the hot-read caches. */
export interface ReadDb {
  /** Where statements without a turn run (the first read connection); a read with a turn runs on its connection. */
  sql: postgres.Sql
  /** The primary's read connections, each a pool of one: a turn names the one a read runs on. */
  reads: readonly postgres.Sql[]
  /**
   * A streaming replica for the records of completed scans (needs `hot`, whose org state, read on the primary, names
   * the scan): runtime/core/db/replica.ts.
   */
  replica?: ReplicaReads
  shapes: PreparedShapes
  /** Answers of org-scoped reads, and who may see which org (runtime/core/cache/); absent: every read queries. */
  hot?: { responses: ResponseCache; orgs: OrgStateCache }
  /** Totals of lists already counted, by org, resource and filter (runtime/core/cache/totals.ts); absent: lists always count. */
  totals?: TotalCache
  /** Called as a read statement starts; the function it returns, when it has ended (runtime/platform/metrics.ts). */
  onQuery?: () => () => void
}

/**
 * Each field of a plan as text, for the canonical form. Typed over every key of the plan, so a field added to a plan
 * without a line here does not compile (a field left out of the key would let two different answers share it). No
 * part holds a newline: numbers, validated names and ids, and JSON (which escapes them).
 */
const LIST_PARTS: { readonly [K in keyof Required<ListPlan>]: (p: ListPlan) => string } = {
  op: () => 'list',
  limit: (p) => String(p.limit),
  requestedLimit: (p) => (p.requestedLimit === undefined ? '' : String(p.requestedLimit)),
  offset: (p) => String(p.offset),
  filter: (p) => (p.filter === undefined ? '' : JSON.stringify(p.filter)),
  filterGiven: (p) => (p.filterGiven ? '1' : '0'),
  sort: (p) => p.sort.map((k) => (k.desc ? '-' : '+') + k.field).join(','),
  fields: (p) => (p.fields === undefined ? '*' : JSON.stringify(p.fields)),
  extra: (p) => extraText(p.extra),
  parentId: (p) => p.parentId ?? '',
}
const COUNT_PARTS: { readonly [K in keyof Required<CountPlan>]: (p: CountPlan) => string } = {
  op: () => 'count',
  by: (p) => p.by.join(','),
  filter: (p) => (p.filter === undefined ? '' : JSON.stringify(p.filter)),
  filterGiven: (p) => (p.filterGiven ? '1' : '0'),
  limit: (p) => String(p.limit),
  requestedLimit: (p) => (p.requestedLimit === undefined ? '' : String(p.requestedLimit)),
}
const GET_PARTS: { readonly [K in keyof Required<GetPlan>]: (p: GetPlan) => string } = {
  op: () => 'get',
  id: (p) => (p.id === undefined ? '' : JSON.stringify(p.id)),
  fields: (p) => (p.fields === undefined ? '*' : JSON.stringify(p.fields)),
  extra: (p) => extraText(p.extra),
}
/** Extra parameters as JSON; none (the usual case) as nothing, which no JSON object is. */
function extraText(extra: Record<string, string[]>): string {
  for (const _ in extra) return JSON.stringify(extra)
  return ''
}
const listParts = Object.values(LIST_PARTS)
const getParts = Object.values(GET_PARTS)
const countParts = Object.values(COUNT_PARTS)

/**
 * The canonical form of a read: the resource and every field of the parsed plan (normalised filter, sort, page,
 * fields, …), one per line. Built field by field rather than as the plan's JSON: half the time and a third of the
 * length, and it is hashed again by every cache lookup (docs/adr/0031-response-cache-keyed-by-scan.md).
 */
export function canonical(c: CompiledResource, plan: ListPlan | GetPlan | CountPlan): string {
  let s = c.name
  if (plan.op === 'list') for (const part of listParts) s += '\n' + part(plan)
  else if (plan.op === 'get') for (const part of getParts) s += '\n' + part(plan)
  else for (const part of countParts) s += '\n' + part(plan)
  return s
}

/** `"…"`: a strong tag from the scan and the canonical request (a scan never changes, so neither does the answer). */
function etagOf(scanId: string, key: string): string {
  return `"${createHash('sha256').update(scanId).update('\n').update(key).digest('base64url').slice(0, 32)}"`
}

/**
 * Runs a statement on `sql` (default: the primary's read pool); failures as they come from the driver. `raw`: each row
 * an array of its columns as the server sent them (postgres.js `raw()`), nothing decoded.
 */
async function query<T>(db: ReadDb, st: Statement, sql = db.sql, raw = false): Promise<T[]> {
  const done = db.onQuery?.()
  try {
    const q = sql.unsafe(st.text, st.values as postgres.ParameterOrJSON<never>[], { prepare: db.shapes.prepare(st.text, st.fixed) })
    return (await withDeadline(raw ? q.raw() : q)) as unknown as T[]
  } finally {
    done?.()
  }
}

/** Runs a statement on the primary's read pool; a failure is the error its response shows. */
async function run<T>(db: ReadDb, st: Statement, hasFilter: boolean, raw = false): Promise<T[]> {
  try {
    return await query<T>(db, st, db.sql, raw)
  } catch (e) {
    throw toApiError(e, hasFilter)
  }
}

/** A read statement's row as the server sent it (`query(…, raw)`). */
type RawRow = Array<Buffer | null>

/**
 * The one row of a read statement (listStatement, getStatement), read raw: its small columns are parsed here, and the
 * records stay bytes, which the response cache copies and REST writes as they are, so a read never makes a JavaScript
 * string of them nor encodes one back (about 25 KB of each on a page of 50 fields).
 */
function rowOf(rows: RawRow[]): ResultRow {
  const [scanId, orgOk, hasScan, parentOk, data, n, total] = rows[0]
  const int = (b: Buffer | null | undefined) => (b === null || b === undefined ? null : Number(b.toString('latin1')))
  return { scan_id: scanId && scanId.toString('latin1'), org_ok: isTrue(orgOk), has_scan: isTrue(hasScan), parent_ok: isTrue(parentOk), data, n: int(n) ?? 0, total: int(total) }
}

/** A boolean column in PostgreSQL's text format ('t' or 'f'). */
const isTrue = (b: Buffer | null): boolean => b !== null && b[0] === 0x74

/** 404 unless the principal's account owns the org; 403 when a user-scoped principal was not granted it. */
export async function checkOrgAccess(db: ReadDb, p: Principal, orgId: string): Promise<void> {
  const rows = await run<{ account_id: string; granted: boolean }>(db, orgAccessStatement(orgId, p.userId), false)
  if (!rows[0] || rows[0].account_id !== p.accountId) throw new ApiError('not_found', 'Org not found.', { parameter: 'orgId' })
  if (!rows[0].granted) throw new ApiError('forbidden', 'You do not have access to this org.', { parameter: 'orgId' })
}

/** The read statement found no visible org: explain why (403 or 404). */
async function orgDenied(db: ReadDb, orgId: string, p: Principal): Promise<never> {
  await checkOrgAccess(db, p, orgId)
  throw new ApiError('not_found', 'Org not found.', { parameter: 'orgId' })
}

export async function read(db: ReadDb, req: ReadRequest): Promise<ReadResult> {
  const c = req.resource
  const decl = c.decl
  const scope: Scope = { accountId: req.principal.accountId, userId: req.principal.userId }
  const orgParam = decl.scope === 'org' ? req.params.orgId : decl.id?.param === 'orgId' ? req.params.orgId : undefined
  if (orgParam !== undefined) scope.orgId = normalizeOrgId(orgParam)

  if (req.op === 'list') {
    const parentId = decl.parent ? req.params[decl.parent.param] : undefined
    if (decl.parent && (parentId === undefined || !/^[1-9][0-9]{0,17}$/.test(parentId))) {
      throw new ApiError('invalid_id', `${decl.parent.param} must be a positive integer of at most 18 digits.`, { parameter: decl.parent.param })
    }
    const plan = planList(c, req.query, req.surface, parentId)
    const key = decl.scope === 'org' ? canonical(c, plan) : undefined
    const state = key ? await orgState(db, scope) : undefined
    const hit = key && cached(db, state, key, req.lend)
    if (hit) return hit
    // The filter's total, when this process counted it on a scan before: the statement counts only on another scan.
    const totalKey = key && db.totals ? `${scope.orgId}\n${c.name}\n${LIST_PARTS.filter(plan)}\n${plan.parentId ?? ''}\n${extraText(plan.extra)}` : undefined
    const known = totalKey ? db.totals!.get(totalKey) : undefined
    return withTurn(req, db, async (db) => {
      const row = await runRead(db, state, (pin) => listStatement(c, plan, { ...scope, scanId: pin }, known?.scanId), plan.filter !== undefined)
      checkRow(row, decl.scope, decl.parent?.param)
      if (!row.org_ok && decl.scope === 'org') return orgDenied(db, scope.orgId!, req.principal)
      const count = Math.min(row.n, plan.limit)
      const total = row.total ?? known!.total
      if (totalKey && row.total !== null && row.scan_id !== null) db.totals!.set(totalKey, { scanId: row.scan_id, total })
      return remember(db, req.lend, scope, key, row, new Answer('list', row.data ?? EMPTY_LIST, { count, total, hasMore: row.n > plan.limit, plan, unpaged: decl.unpaged === true }))
    })
  }

  if (req.op === 'count') {
    const plan = planCount(c, req.query, req.surface)
    const key = canonical(c, plan)
    const state = await orgState(db, scope)
    const hit = cached(db, state, key, req.lend)
    if (hit) return hit
    return withTurn(req, db, async (db) => {
      const row = await runRead(db, state, (pin) => countStatement(c, plan, { ...scope, scanId: pin }), plan.filter !== undefined)
      checkRow(row, decl.scope)
      if (!row.org_ok) return orgDenied(db, scope.orgId!, req.principal)
      return remember(db, req.lend, scope, key, row, new Answer('counts', row.data ?? EMPTY_LIST, { total: row.total ?? 0, groups: row.n, hasMore: row.n > plan.limit, count: Math.min(row.n, plan.limit), countPlan: plan }))
    })
  }

  const idParam = decl.id?.param
  const plan = planGet(c, req.query, idParam === 'orgId' ? scope.orgId : idParam ? req.params[idParam] : undefined)
  const key = decl.scope === 'org' ? canonical(c, plan) : undefined
  const state = key ? await orgState(db, scope) : undefined
  const hit = key && cached(db, state, key, req.lend)
  if (hit) return hit
  return withTurn(req, db, async (db) => {
    const row = await runRead(db, state, (pin) => getStatement(c, plan, { ...scope, scanId: pin }), false)
    if (decl.scope === 'org') {
      if (!row.org_ok) return orgDenied(db, scope.orgId!, req.principal)
      checkRow(row, decl.scope)
    }
    if (row.data === null) {
      if (decl.scope === 'account') return orgDenied(db, scope.orgId!, req.principal)
      throw new ApiError('not_found', `${decl.title} not found.`, idParam ? { parameter: idParam } : {})
    }
    // A computed singleton's JSON comes from PostgreSQL's json_build_object, which writes `"key" : value`: made as
    // compact as every other answer (declaration order kept; its numbers are doubles and counts, exact in JavaScript).
    const data = decl.singletonSql ? Buffer.from(JSON.stringify(JSON.parse(row.data.toString('utf8')))) : row.data
    return remember(db, req.lend, scope, key, row, new Answer('one', data))
  })
}

/** `db` with its statements on read connection `connection` (the one a fair-share turn names). */
export function onConnection(db: ReadDb, connection: number): ReadDb {
  return { ...db, sql: db.reads[connection] }
}

/** Runs a read's statements within the request's turn at the database (when it has to take one), on its connection. */
async function withTurn<T>(req: ReadRequest, db: ReadDb, statements: (db: ReadDb) => Promise<T>): Promise<T> {
  const turn = await req.turn?.()
  try {
    return await statements(turn ? onConnection(db, turn.connection) : db)
  } finally {
    turn?.release()
  }
}

const EMPTY_LIST = Buffer.from('[]')

/**
 * The org's state as the primary has it (org-state cache), when the caller may see the org: needed by the response
 * cache (its key holds the scan) and by a replica (the scan it must show). Without either, the one statement checks
 * access itself and nothing is asked first.
 */
async function orgState(db: ReadDb, scope: Scope): Promise<OrgState | undefined> {
  if (!db.hot || (!db.hot.responses.enabled && !db.replica)) return undefined
  return db.hot.orgs.visible(scope.orgId!, scope.accountId, scope.userId)
}

/**
 * The cached answer of an org-scoped read, when the caller may see the org (per the org-state cache) and it is held:
 * its records lent as bytes when the caller writes bytes (`release()` once written), else decoded to text.
 */
function cached(db: ReadDb, state: OrgState | undefined, key: string, lend: boolean): ReadResult | undefined {
  if (!state || !state.scanId || !db.hot?.responses.enabled) return undefined
  return db.hot.responses.get(`${state.scanId}\n${key}`, lend)
}

/**
 * Runs an org-scoped read: on the replica, pinned to the latest scan the primary named, when there is one; on the
 * primary when the replica does not show that scan yet, fails, or rests (runtime/core/db/replica.ts). A failure that is
 * the request's own (a 4xx: a bad value, a statement too expensive) is not retried: the primary would say the same.
 */
async function runRead(db: ReadDb, state: OrgState | undefined, build: (pin?: string) => Statement, hasFilter: boolean): Promise<ResultRow> {
  const replica = db.replica
  if (replica && state && state.scanId && replica.usable()) {
    try {
      const row = rowOf(await query<RawRow>(db, build(state.scanId), replica.sql, true))
      if (row.org_ok) {
        replica.served()
        return row
      }
      replica.behind()
    } catch (e) {
      const error = toApiError(e, hasFilter)
      if (error.status < 500) throw error
      replica.failed(error.status === 503, errorCode(e) || error.code)
    }
  }
  return rowOf(await run<RawRow>(db, build(), hasFilter, true))
}

/** A successful answer read from the database: tagged (org-scoped), and kept for the next identical read. */
function remember(db: ReadDb, lend: boolean, scope: Scope, key: string | undefined, row: ResultRow, answer: Answer): ReadResult {
  const result = answer.result
  if (key === undefined || row.scan_id === null) return result
  result.etag = etagOf(row.scan_id, key)
  if (db.hot) {
    db.hot.orgs.observed(scope.orgId!, row.scan_id)
    // A caller that writes bytes gets the bytes kept lent back as what it writes (no second encoding of the records).
    const lent = db.hot.responses.enabled ? db.hot.responses.set(`${row.scan_id}\n${key}`, result, lend) : undefined
    if (lent) {
      result.dataBytes = lent.dataBytes
      result.release = lent.release
    }
  }
  return result
}

/** The 404 of a read of an org that has no completed scan (the pipeline tells a pending org's apart). */
export const NO_COMPLETED_SCAN = 'This org has no completed scan yet.'

function checkRow(row: ResultRow, scope: 'org' | 'account', parentParam?: string): void {
  if (scope !== 'org' || !row.org_ok) return
  if (!row.has_scan) throw new ApiError('not_found', NO_COMPLETED_SCAN, { parameter: 'orgId' })
  if (!row.parent_ok) throw new ApiError('not_found', 'Parent record not found.', parentParam ? { parameter: parentParam } : {})
}
