/**
 * A list page is found by its keys first and its rows read after (runtime/core/statements.ts `listStatement`): the pages a
 * client sees are the ones a plain `ORDER BY … LIMIT … OFFSET …` over the table gives — same rows, same order, ties
 * broken by the resource's tiebreak ascending, same `hasMore` — for every paged org-scoped list, every sortable field in
 * both directions, at the first, a middle, the last and past the last offset, with and without filters (large `in` and
 * `out` lists with and without null, merged comparisons, several patterns of one field).
 */
import { t } from '../helpers/file-test.ts'
import { registry } from '../../resources/index.ts'
import { compileRegistry, orderBy, type CompiledResource } from '../../runtime/core/registry.ts'
import { parseSort } from '../../runtime/core/sort.ts'
import { quotedColumn, sqlExpr } from '../../runtime/core/fields.ts'
import { startTestService } from '../helpers/service.ts'
import { updateAccount } from '../../runtime/platform/admin.ts'

const ts = await startTestService(t)
const org = ts.seed.orgs.find((o) => o.large)!
const auth = await ts.keyHeader(org.accountId)
await updateAccount(ts.svc.db.sql, org.accountId, { dailyLimit: 1_000_000, monthlyLimit: 1_000_000 })
ts.svc.ctx.quota.invalidate?.(org.accountId)
const sql = ts.svc.db.sql
const [{ scan }] = await sql<{ scan: string }[]>`SELECT latest_scan_id::text AS scan FROM orgs WHERE salesforce_id = ${org.salesforceId}`
const lists = compileRegistry(registry).filter((c) => c.decl.operations.list && c.decl.scope === 'org' && !c.decl.unpaged)
const [{ object }] = await sql<{ object: string }[]>`SELECT sobject_id::text AS object FROM fields WHERE scan_id = ${scan} GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`

/** A filter as the API takes it and as plain SQL over the table alias `t` (its values bound through `b`). */
interface Filter {
  rql: string
  sql: (b: (v: unknown) => string) => string
}

/** The tiebreak values of a page the plain way, and whether more rows follow. */
async function reference(c: CompiledResource, sort: string | undefined, offset: number, limit: number, filter?: Filter): Promise<{ keys: string[]; hasMore: boolean }> {
  const params: unknown[] = [scan]
  const b = (v: unknown) => (params.push(v), `$${params.length}`)
  const where = ['t.scan_id = $1::bigint']
  if (c.decl.parent) where.push(`${sqlExpr(c.decl.parent.field, c.fields.get(c.decl.parent.field)!)} = ${b(object)}::bigint`)
  if (filter) where.push(filter.sql(b))
  const keys = sort === undefined ? c.defaultSort : parseSort(sort, c.decl.sortable ?? [])
  const text = `SELECT t.${quotedColumn(c.tiebreak!)}::text AS k FROM ${c.decl.table} t WHERE ${where.join(' AND ')} ORDER BY ${orderBy(keys, c.fields, c.tiebreak)} LIMIT ${b(limit + 1)}::bigint OFFSET ${b(offset)}::bigint`
  const rows = await sql.unsafe<{ k: string }[]>(text, params as never[])
  return { keys: rows.slice(0, limit).map((r) => r.k), hasMore: rows.length > limit }
}

async function count(c: CompiledResource): Promise<number> {
  const parent = c.decl.parent ? ` AND ${quotedColumn(c.decl.parent.field)} = ${object}` : ''
  const [{ n }] = await sql.unsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM ${c.decl.table} WHERE scan_id = ${scan}${parent}`)
  return n
}

const problems: string[] = []
let compared = 0

async function check(c: CompiledResource, sort: string | undefined, offset: number, limit: number, filter?: Filter): Promise<void> {
  const q = new URLSearchParams({ limit: String(limit), offset: String(offset) })
  if (sort !== undefined) q.set('sort', sort)
  // An empty filter removes a list's default filter (the reference has none).
  q.set('filter', filter?.rql ?? '')
  const path = c.decl.path.replace('{objectId}', object)
  // Six pages at once from an account that may run fewer reads at once (one on the embedded database): retried after
  // Retry-After when one waits its turn past 1 s, as a client sending many reads does.
  const r = await ts.get(`/v1/orgs/${org.salesforceId}/${path}?${q}`, auth, { retryBusy: true })
  const where = `${c.name} sort=${sort ?? '(default)'} offset=${offset} limit=${limit}${filter ? ` filter=${filter.rql.slice(0, 80)}` : ''}`
  if (r.status !== 200) return void problems.push(`${where}: ${r.status} ${r.text.slice(0, 200)}`)
  const got = (r.body.data as Array<Record<string, unknown>>).map((x) => String(x[c.tiebreak!]))
  const want = await reference(c, sort, offset, limit, filter)
  compared++
  if (JSON.stringify(got) !== JSON.stringify(want.keys)) problems.push(`${where}: got ${got.slice(0, 5).join(',')}… want ${want.keys.slice(0, 5).join(',')}…`)
  if (r.body.meta.hasMore !== want.hasMore) problems.push(`${where}: hasMore ${r.body.meta.hasMore}, want ${want.hasMore}`)
}

/** Runs the checks with bounded concurrency. */
async function all(jobs: Array<() => Promise<void>>, concurrency = 6): Promise<void> {
  let next = 0
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < jobs.length) await jobs[next++]()
  }))
}

t.test('every paged list, every sort in both directions, first to past-the-last offsets: the plain ORDER BY/OFFSET pages', async (t) => {
  const jobs: Array<() => Promise<void>> = []
  for (const c of lists) {
    const n = await count(c)
    const offsets = [...new Set([0, Math.floor(n / 2), Math.max(n - 3, 0), n + 5])]
    const sorts = [undefined, ...(c.decl.sortable ?? []).flatMap((f) => [f, `-${f}`])]
    for (const sort of sorts) for (const offset of offsets) jobs.push(() => check(c, sort, offset, 7))
  }
  await all(jobs)
  t.ok(compared > 1000, `${compared} pages compared`)
  t.same(problems, [], 'every page as the plain query gives it')
})

t.test('fields: large lists with and without null, merged comparisons and patterns, at deep offsets under every sort', async (t) => {
  problems.length = 0
  compared = 0
  const fields = lists.find((c) => c.name === 'fields')!
  const rows = await sql<{ label: string; namespace: string | null; created: string }[]>`
    SELECT label, namespace, to_char(created_date AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS created FROM fields WHERE scan_id = ${scan} ORDER BY id`
  const labels = [...new Set(rows.map((r) => r.label))].filter((_, i) => i % 3 === 0).slice(0, 300)
  const namespaces = [...new Set(rows.map((r) => r.namespace).filter((x): x is string => x !== null))]
  const created = [...new Set(rows.map((r) => r.created))].filter((_, i) => i % 2 === 0).slice(0, 200)
  const q = (s: string) => `'${s.replace(/[\\']/g, '\\$&')}'`
  const filters: Filter[] = [
    { rql: `in(label,${labels.map(q).join(',')})`, sql: (b) => `t.label = ANY(${b(labels)}::text[])` },
    { rql: `not(in(label,${labels.map(q).join(',')}))`, sql: (b) => `((t.label = ANY(${b(labels)}::text[])) IS NOT TRUE)` },
    { rql: `out(namespace,${[...namespaces, 'x1', 'x2', 'x3', 'x4', 'x5', 'x6', 'x7', 'x8'].map(q).join(',')})`,
      sql: (b) => `(t.namespace IS NULL OR NOT (t.namespace = ANY(${b([...namespaces, 'x1', 'x2', 'x3', 'x4', 'x5', 'x6', 'x7', 'x8'])}::text[])))` },
    { rql: `in(namespace,${[...namespaces.slice(0, 1), 'x1', 'x2', 'x3', 'x4', 'x5', 'x6', 'x7', 'x8'].map(q).join(',')},null)`,
      sql: (b) => `(t.namespace IS NULL OR t.namespace = ANY(${b([...namespaces.slice(0, 1), 'x1', 'x2', 'x3', 'x4', 'x5', 'x6', 'x7', 'x8'])}::text[]))` },
    { rql: `in(createdDate,${created.join(',')})`, sql: (b) => `t.created_date = ANY(${b(created)}::text[]::timestamptz[])` },
    { rql: `or(${labels.slice(0, 40).map((l) => `eq(label,${q(l)})`).join(',')},lt(percentPopulated,5),lt(percentPopulated,20))`,
      sql: (b) => `(t.label = ANY(${b(labels.slice(0, 40))}::text[]) OR t.percent_populated < 5 OR t.percent_populated < 20)` },
    { rql: 'or(ilike(label,*name*),ilike(label,*DATE*),and(ilike(apiName,*__c),not(ilike(label,*id*))))',
      sql: () => `(t.label ILIKE '%name%' OR t.label ILIKE '%DATE%' OR (t.api_name ILIKE '%\\_\\_c' AND ((t.label ILIKE '%id%') IS NOT TRUE)))` },
  ]
  const jobs: Array<() => Promise<void>> = []
  const sorts = [undefined, ...(fields.decl.sortable ?? []).flatMap((f) => [f, `-${f}`])]
  for (const filter of filters) {
    const { keys } = await reference(fields, undefined, 0, 1_000_000, filter)
    const n = keys.length
    t.ok(n > 0 && n < rows.length, `${filter.rql.slice(0, 60)}… selects ${n} of ${rows.length}`)
    for (const sort of sorts) for (const offset of [0, Math.floor(n / 2), Math.max(n - 2, 0)]) jobs.push(() => check(fields, sort, offset, 25, filter))
  }
  await all(jobs)
  t.ok(compared > 500, `${compared} pages compared`)
  t.same(problems, [], 'every filtered page as the plain query gives it')
})
