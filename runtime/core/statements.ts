/**
 * Query stage: one parameterised SQL statement per request. Org resolution, the caller's access to the org
 * and the org's latest scan are folded into the same statement (a CTE), so a read costs one round trip.
 * PostgreSQL builds the JSON (measured faster than JSON.stringify in Node). Every value is a
 * bound parameter; every identifier comes from the registry.
 */
import { jsonText, quotedColumn, sqlExpr } from './fields.ts'
import { buildObject, orderBy, type CompiledResource } from './registry.ts'
import type { CountPlan, GetPlan, ListPlan } from './plan.ts'
import { compileFilter } from './rql/index.ts'

export interface Statement {
  text: string
  values: unknown[]
  /** The text depends only on the registry (not on a client's filter, sort or fields): see db/prepared-shapes.ts. */
  fixed: boolean
}

/** Who reads, and which org (org-scoped resources). ids are decimal strings (bigint). */
export interface Scope {
  accountId: string
  userId: string | null
  orgId?: string
  /**
   * Pinned to this scan (reads on a replica, runtime/core/db/replica.ts): the org row must show it as its latest scan,
   * else the statement finds no visible org (`org_ok` false) and the read goes to the primary.
   */
  scanId?: string
}

/**
 * The one row every read statement returns, its columns in this order: scan_id, org_ok, has_scan, parent_ok, data, n
 * (runtime/core/read.ts reads them by position).
 */
export interface ResultRow {
  /** The scan read (org-scoped resources), as text; null otherwise. */
  scan_id: string | null
  org_ok: boolean
  has_scan: boolean
  parent_ok: boolean
  /** The records' JSON as the server sent it (UTF-8), never decoded to text on the way. */
  data: Buffer | null
  n: number
  /** Records the filter matches, when the statement counts them (lists, grouped counts); null otherwise. */
  total: number | null
}

class Binder {
  readonly values: unknown[] = []
  bind = (v: unknown): string => {
    this.values.push(v)
    return `$${this.values.length}`
  }
}

const ACCESS = (user: string) =>
  `(${user}::bigint IS NULL OR EXISTS (SELECT 1 FROM user_org_access a WHERE a.user_id = ${user}::bigint AND a.org_id = o.salesforce_id))`

/** The org CTE: the org's latest scan, only if the caller may see the org. */
function orgCte(b: Binder, s: Scope): string {
  const org = b.bind(s.orgId)
  const acct = b.bind(s.accountId)
  const user = b.bind(s.userId)
  const pin = s.scanId === undefined ? '' : ` AND o.latest_scan_id = ${b.bind(s.scanId)}::bigint`
  return `WITH o AS (SELECT o.latest_scan_id AS scan_id FROM orgs o WHERE o.salesforce_id = ${org} AND o.account_id = ${acct}::bigint AND ${ACCESS(user)}${pin})`
}

const SCAN = '(SELECT scan_id FROM o)'

function conditions(c: CompiledResource, b: Binder, s: Scope, filter: ListPlan['filter'], parentId?: string): string[] {
  const where: string[] = []
  if (c.decl.scope === 'org') where.push(`t.scan_id = ${SCAN}`)
  else {
    where.push(`t.account_id = ${b.bind(s.accountId)}::bigint`)
    const user = b.bind(s.userId)
    where.push(ACCESS(user).replaceAll('o.salesforce_id', 't.salesforce_id'))
  }
  if (c.decl.parent && parentId !== undefined) {
    where.push(`${sqlExpr(c.decl.parent.field, c.fields.get(c.decl.parent.field)!)} = ${b.bind(parentId)}::bigint`)
  }
  if (filter) where.push(compileFilter(filter, c.decl.fields, c.decl.filterable ?? [], b.bind))
  return where
}

function head(c: CompiledResource, b: Binder, s: Scope, parentId?: string): { cte: string; cols: string } {
  if (c.decl.scope !== 'org') return { cte: '', cols: 'NULL::text AS scan_id, true AS org_ok, true AS has_scan, true AS parent_ok' }
  const cte = orgCte(b, s)
  const parent =
    c.parentTable && parentId !== undefined
      ? `EXISTS (SELECT 1 FROM ${c.parentTable} p WHERE p.scan_id = ${SCAN} AND p.id = ${b.bind(parentId)}::bigint)`
      : 'true'
  return { cte, cols: `${SCAN}::text AS scan_id, EXISTS (SELECT 1 FROM o) AS org_ok, ${SCAN} IS NOT NULL AS has_scan, ${parent} AS parent_ok` }
}

/**
 * The column that, with `scan_id`, is the primary key of an org-scoped resource's table (runtime/platform/db/ddl.ts): its
 * tiebreak, when that is a plain column. A page is then found by this key first (`listStatement`).
 */
function pageKey(c: CompiledResource): string | undefined {
  if (c.decl.scope !== 'org' || c.tiebreak === undefined) return undefined
  const spec = c.fields.get(c.tiebreak)!
  return spec.expr ? undefined : quotedColumn(c.tiebreak)
}

/**
 * A page of a list. Its last column is how many records the filter matches (`total`), counted in the same statement
 * unless `knownFor` names the scan the statement reads (its total is known: runtime/core/cache/totals.ts); then NULL, and
 * PostgreSQL never runs the count (a CASE branch not taken).
 */
export function listStatement(c: CompiledResource, plan: ListPlan, s: Scope, knownFor?: string): Statement {
  const b = new Binder()
  const { cte, cols } = head(c, b, s, plan.parentId)
  const where = conditions(c, b, s, plan.filter, plan.parentId).join(' AND ')
  const select = plan.fields ? buildObject(plan.fields, c.fields) : c.selectList
  const order = orderBy(plan.sort, c.fields, c.tiebreak)
  let inner: string
  if (c.decl.unpaged) {
    inner = `SELECT '[' || coalesce(string_agg(${select}, ',' ORDER BY ${order}), '') || ']' AS data, count(*)::int AS n FROM ${c.decl.table} t WHERE ${where}`
  } else {
    // The page's rows (plus one, to tell hasMore) are chosen on the bare table rows; JSON is built only for
    // them, never for the rows an offset skips (a deep offset would otherwise build thousands of objects).
    const lim = b.bind(plan.limit)
    const off = b.bind(plan.offset)
    const page = `ORDER BY ${order} LIMIT ${lim}::bigint + 1 OFFSET ${off}::bigint`
    const aggregate = `SELECT '[' || coalesce(string_agg(s.j, ',' ORDER BY s.rn) FILTER (WHERE s.rn <= ${lim}::bigint), '') || ']' AS data, count(*)::int AS n `
    const key = pageKey(c)
    if (key) {
      // Deferred join: the page is chosen by its keys alone, then only its rows are read. The rows an offset skips
      // are never read whole, and when the sort and the filter need only indexed columns, not at all (an index-only
      // scan): see docs/adr/0105-cheap-worst-filters.md.
      inner =
        aggregate +
        `FROM (SELECT row_number() OVER (ORDER BY ${order}) AS rn, ${select} AS j ` +
        `FROM (SELECT t.${key} AS k FROM ${c.decl.table} t WHERE ${where} ${page}) p ` +
        `JOIN ${c.decl.table} t ON t.scan_id = ${SCAN} AND t.${key} = p.k) s`
    } else {
      inner =
        aggregate +
        `FROM (SELECT row_number() OVER (ORDER BY ${order}) AS rn, ${select} AS j ` +
        `FROM (SELECT * FROM ${c.decl.table} t WHERE ${where} ${page}) t) s`
    }
  }
  const fixed = (plan.filter === undefined || plan.filter === c.defaultFilter) && plan.sort === c.defaultSort && plan.fields === undefined
  const counted = `(SELECT count(*) FROM ${c.decl.table} t WHERE ${where})`
  const total = c.decl.unpaged ? 'd.n' : c.decl.scope === 'org' ? `CASE WHEN ${SCAN} = ${b.bind(knownFor ?? null)}::bigint THEN NULL ELSE ${counted} END` : counted
  return { text: `${cte} SELECT ${cols}, d.data, d.n, ${total} AS total FROM (${inner}) d`, values: b.values, fixed }
}

export function getStatement(c: CompiledResource, plan: GetPlan, s: Scope): Statement {
  const b = new Binder()
  const { cte, cols } = head(c, b, s)
  let data: string
  if (c.decl.singletonSql) {
    data = c.decl.singletonSql({ scanParam: SCAN, extra: plan.extra, param: b.bind })
  } else {
    const where = conditions(c, b, s, undefined)
    if (c.decl.id && plan.id !== undefined) {
      const spec = c.fields.get(c.decl.id.field)!
      where.push(`${sqlExpr(c.decl.id.field, spec)} = ${b.bind(plan.id)}${c.decl.id.encoding === 'int' ? '::bigint' : ''}`)
    }
    data = `SELECT ${plan.fields ? buildObject(plan.fields, c.fields) : c.selectOne}::text FROM ${c.decl.table} t WHERE ${where.join(' AND ')} LIMIT 1`
  }
  return { text: `${cte} SELECT ${cols}, (${data}) AS data, 0 AS n`, values: b.values, fixed: plan.fields === undefined }
}

/**
 * A grouped count: for each combination of the `by` fields' values among the records the filter matches, how many
 * there are, most first (ties in the order of the values' JSON text), at most `limit` groups plus one (to tell
 * hasMore); `n` is the number of groups and `total` the number of records. Grouped by each value's JSON text, which
 * is one text per value, so the groups are the values' and the text is what the answer shows.
 */
export function countStatement(c: CompiledResource, plan: CountPlan, s: Scope): Statement {
  const b = new Binder()
  const { cte, cols } = head(c, b, s)
  const where = conditions(c, b, s, plan.filter).join(' AND ')
  const keys = plan.by.map((f, i) => `${jsonText(f, c.fields.get(f)!)} AS k${i}`).join(', ')
  const groupBy = plan.by.map((_f, i) => String(i + 1)).join(', ')
  const order = ['n DESC', ...plan.by.map((_f, i) => `k${i} ASC NULLS FIRST`)].join(', ')
  const object = `'{' || ${plan.by.map((f, i) => `'${i ? ',' : ''}"${f}":' || coalesce(k${i}, 'null')`).join(' || ')} || ',"count":' || n || '}'`
  const lim = b.bind(plan.limit)
  const groups =
    `g AS (SELECT ${keys}, count(*) AS n FROM ${c.decl.table} t WHERE ${where} GROUP BY ${groupBy}), ` +
    `p AS (SELECT row_number() OVER (ORDER BY ${order}) AS rn, ${object} AS j FROM g ORDER BY ${order} LIMIT ${lim}::bigint)`
  const data = `(SELECT '[' || coalesce(string_agg(p.j, ',' ORDER BY p.rn), '') || ']' FROM p)`
  return {
    text: `${cte}, ${groups} SELECT ${cols}, ${data} AS data, (SELECT count(*) FROM g)::int AS n, (SELECT coalesce(sum(n), 0) FROM g)::bigint AS total`,
    values: b.values,
    fixed: false,
  }
}

/** The org's account and whether the user (if any) was granted it: tells 403 (not granted) from 404. */
export function orgAccessStatement(orgId: string, userId: string | null): Statement {
  return {
    text: `SELECT o.account_id::text AS account_id, ${ACCESS('$2')} AS granted FROM orgs o WHERE o.salesforce_id = $1`,
    values: [orgId, userId],
    fixed: true,
  }
}

