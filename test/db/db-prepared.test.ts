/**
 * Prepared statements stay bounded whatever filters clients invent: a connection keeps every statement it prepared
 * for its whole life, so only the registry's fixed shapes and a bounded number of client-shaped statements are
 * prepared; the rest run unprepared and still answer (runtime/db/prepared-shapes.ts).
 */
import { t } from '../helpers/file-test.ts'
import { startTestService } from '../helpers/service.ts'

// One read connection, so that pg_prepared_statements (per session) sees everything the reads prepared.
const ts = await startTestService(t, { config: { poolSize: 1 } })
const org = ts.seed.orgs.find((o) => o.large)!
const auth = await ts.keyHeader(org.accountId)
const base = `/v1/orgs/${org.salesforceId}`
const prepared = async () => Number((await ts.svc.db.read`SELECT count(*)::int AS n FROM pg_prepared_statements`)[0].n)

t.test('client-shaped statements are prepared up to a bound, then run unprepared', async (t) => {
  // Warm the fixed shapes of a few resources.
  for (const p of ['fields', 'objects', 'issues', 'connectedApps']) t.equal((await ts.get(`${base}/${p}?limit=5`, auth)).status, 200)
  const before = await prepared()
  const shapes = 160
  for (let i = 0; i < shapes; i++) {
    // Each filter has a different number of conditions: a different statement text every time.
    const filter = 'or(' + Array.from({ length: i + 1 }, (_, k) => `eq(id,${k + 1})`).join(',') + ')'
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
