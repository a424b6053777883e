/**
 * Prepared statements stay bounded whatever filters clients invent: a connection keeps every statement it prepared
 * for its whole life, so only the registry's fixed shapes and a bounded number of client-shaped statements are
 * prepared; the rest run unprepared and still answer (runtime/core/db/prepared-shapes.ts).
 */
import { t } from '../helpers/file-test.ts'
import { startTestService } from '../helpers/service.ts'

// One read connection, so that pg_prepared_statements (per session) sees everything the reads prepared.
const ts = await startTestService(t, { config: { poolSize: 1 } })
const org = ts.seed.orgs.find((o) => o.large)!
const auth = await ts.keyHeader(org.accountId)
const base = `/v1/orgs/${org.salesforceId}`
const prepared = async () => Number((await ts.svc.db.reads[0]`SELECT count(*)::int AS n FROM pg_prepared_statements`)[0].n)

t.test('client-shaped statements are prepared up to a bound, then run unprepared', async (t) => {
  // Warm the fixed shapes of a few resources.
  for (const p of ['fields', 'objects', 'issues', 'connectedApps']) t.equal((await ts.get(`${base}/${p}?limit=5`, auth)).status, 200)
  const before = await prepared()
  const shapes = 160
  for (let i = 0; i < shapes; i++) {
    // Each filter has a different number of conditions: a different statement text every time (under `and`: under
    // `or`, nine or more `eq` of one field are one list, whatever their number).
    const filter = 'and(' + Array.from({ length: i + 1 }, (_, k) => `eq(id,${k + 1})`).join(',') + ')'
    const r = await ts.get(`${base}/fields?limit=1&filter=${encodeURIComponent(filter)}`, auth)
    t.equal(r.status, 200, `shape ${i + 1} answers`)
  }
  const after = await prepared()
  t.ok(after - before <= 100, `at most 100 more prepared statements after ${shapes} shapes (got ${after - before})`)
  t.ok(after - before >= 50, `client shapes below the bound are still prepared (got ${after - before})`)
  // A fixed shape is still prepared once the bound is reached.
  t.equal((await ts.get(`${base}/installedPackages?limit=5`, auth)).status, 200)
  t.equal(await prepared(), after + 1, 'a new fixed shape is prepared after the bound')
})

// The connections that read keep one value-blind plan per prepared statement (plan_cache_mode: on PostgreSQL the
// read pool's, runtime/platform/db/connect.ts; on the embedded database its one session, runtime/platform/db/embedded-worker.mjs). Left
// to itself, PostgreSQL planned a list's statement again for its first five executions, and on a large table for every
// one, because a value-blind plan of `LIMIT $n OFFSET $m` is estimated dearer than one made for the values.
t.test('a list statement is planned once, not for every page', async (t) => {
  const pages = 12
  // The objects list's statement, as the read connection's own record of its plans shows it (this query's own text
  // names the table too, hence the last condition).
  const plans = async () => {
    const rows = await ts.svc.db.reads[0]`SELECT generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements WHERE statement LIKE '%FROM objects t%OFFSET%' AND statement NOT LIKE '%pg_prepared_statements%'`
    t.equal(rows.length, 1, 'the objects list has one prepared statement')
    return { generic: rows[0].generic as number, custom: rows[0].custom as number }
  }
  const all = await ts.get(`${base}/objects?limit=200`, auth)
  t.ok(all.body.data.length >= pages + 4, `the org has enough objects for ${pages} distinct pages (${all.body.data.length})`)
  const before = await plans()
  for (let i = 0; i < pages; i++) {
    const limit = 2 + (i % 3)
    const r = await ts.get(`${base}/objects?limit=${limit}&offset=${i}`, auth)
    t.equal(r.status, 200, `page ${i + 1} answers`)
    t.same(r.body.data, all.body.data.slice(i, i + limit), `page ${i + 1} has its ${limit} records from offset ${i}`)
  }
  const after = await plans()
  t.same({ generic: after.generic - before.generic, custom: after.custom - before.custom }, { generic: pages, custom: 0 }, 'every page used the one plan made without values')
  t.equal((await ts.svc.db.reads[0]`SHOW plan_cache_mode`)[0].plan_cache_mode, 'force_generic_plan', 'the reading connection keeps value-blind plans')
})
