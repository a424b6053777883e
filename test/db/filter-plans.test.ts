/**
 * The plans the database makes for the worst legal filters, as the read connections make them (one plan without the
 * values, kept): a list of many values is probed through a hash, never compared value by value with every row
 * (`= ANY($n)`); an `ilike` lowers its pattern once (no ILIKE, whose every row lowers the pattern again); and on
 * PostgreSQL a deep page of the default sort skips its rows in an index-only scan (docs/adr/0105-cheap-worst-filters.md).
 */
import { t } from '../helpers/file-test.ts'
import { registry } from '../../resources/index.ts'
import { compileRegistry } from '../../runtime/core/registry.ts'
import { planList } from '../../runtime/core/plan.ts'
import { listStatement, type Statement } from '../../runtime/core/statements.ts'
import { openDatabase } from '../../runtime/platform/db/connect.ts'
import { createTestDatabase } from '../helpers/test-db.ts'
import { seedDemo } from '../../demo/seed.ts'
import { migrate } from '../../runtime/platform/db/migrate.ts'
import { SEED_SCALE } from '../helpers/templates.ts'

const tdb = await createTestDatabase({ template: 'seeded' })
const db = await openDatabase({ databaseUrl: tdb.databaseUrl, dataDir: tdb.dataDir })
t.teardown(async () => {
  await db.close()
  await tdb.drop()
})
const compiled = compileRegistry(registry)
let seed = tdb.seed
if (!seed) {
  // Outside tap's run there are no templates: seed here.
  await migrate(db.sql)
  seed = await seedDemo(db.sql, compiled, { scale: SEED_SCALE })
}
const org = seed.orgs.find((o) => o.large)!
const fields = compiled.find((c) => c.name === 'fields')!

function statement(query: string): Statement {
  const q = new Map<string, string[]>()
  for (const [k, v] of new URLSearchParams(query)) q.set(k, [...(q.get(k) ?? []), v])
  return listStatement(fields, planList(fields, q, 'rest'), { accountId: org.accountId, userId: null, orgId: org.salesforceId })
}

/** A bound value as an SQL literal (test data only: strings, numbers, null, lists of strings). */
function literal(v: unknown): string {
  const text = (s: string) => `'${s.replace(/'/g, "''")}'`
  if (v === null || v === undefined) return 'NULL'
  if (Array.isArray(v)) return `ARRAY[${v.map((x) => text(String(x))).join(',')}]::text[]`
  return typeof v === 'number' ? String(v) : text(String(v))
}

/** The plan made without the values (as a read connection keeps it), as its text lines. */
async function plan(st: Statement): Promise<string> {
  return db.sql.begin(async (tx) => {
    await tx.unsafe('SET LOCAL plan_cache_mode = force_generic_plan')
    await tx.unsafe(`PREPARE filter_plan AS ${st.text}`)
    const rows = await tx.unsafe(`EXPLAIN (VERBOSE, COSTS OFF) EXECUTE filter_plan(${st.values.map(literal).join(',')})`)
    await tx.unsafe('DEALLOCATE filter_plan')
    return rows.map((r) => String(r['QUERY PLAN'])).join('\n')
  })
}

const values = (n: number) => Array.from({ length: n }, (_, i) => i.toString(36)).join(',')
const six = '*e*a*i*o*u*z'

t.test('lists of many values are probed through a hash, whatever surrounds them', async (t) => {
  const filters = [
    `in(label,${values(1000)})`,
    `not(in(label,${values(1000)}))`,
    `out(namespace,${values(1000)})`,
    `in(namespace,${values(999)},null)`,
    `in(createdDate,${Array.from({ length: 300 }, (_, i) => new Date(Date.UTC(2020, 0, 1) + i * 86_400_000).toISOString().slice(0, 10)).join(',')})`,
    `or(${Array.from({ length: 280 }, (_, i) => `eq(label,x${i})`).join(',')})`,
    `or(in(label,${values(900)}),${Array.from({ length: 8 }, (_, i) => `ilike(${['label', 'apiName'][i % 2]},${six})`).join(',')})`,
  ]
  for (const f of filters) {
    for (const page of ['limit=200', 'limit=200&offset=20000&sort=label']) {
      const text = await plan(statement(`${page}&filter=${encodeURIComponent(f)}`))
      const name = `${f.slice(0, 50)}… ${page}`
      t.match(text, /hashed SubPlan/, `${name}: hashed`)
      t.notMatch(text, /ANY \(\$\d+\)|ANY \(\(\$\d+\)::text\[\]\)/, `${name}: no row compared with every value`)
      t.notMatch(text, /Semi Join|Nested Loop Anti/, `${name}: no join that loops over the list`)
    }
  }
})

t.test('ilike lowers the pattern once (no ILIKE in the plan)', async (t) => {
  const text = await plan(statement(`limit=200&filter=${encodeURIComponent(`or(${Array.from({ length: 8 }, () => `ilike(label,'*${'a'.repeat(30)}*b*')`).join(',')})`)}`))
  t.notMatch(text, /~~\*/, 'no ILIKE')
  t.match(text, /lower\(/, 'values lowered')
})

t.test('PostgreSQL: a deep page of the default sort skips its rows in an index-only scan', async (t) => {
  if (db.kind !== 'postgres') {
    t.pass('PostgreSQL only: the planner prefers an index-only scan where the visibility map says the pages are all visible')
    return
  }
  await db.sql.unsafe('VACUUM fields')
  const text = await plan(statement('limit=200&offset=20000'))
  t.match(text, /Index Only Scan using fields_default_idx on (public\.)?fields/, 'the page is found in the index')
  t.match(text, /Index Scan using fields_pkey on (public\.)?fields/, 'its rows are read by key')
})
