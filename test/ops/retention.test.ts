/**
 * Retention (docs/operating.md "Retention"): each org keeps its newest N scans and always its latest completed one;
 * older scans and their records go, `scanCount` follows, and every answer about the latest scan is unchanged. The
 * service prunes in the background (ORGSCAN_KEEP_SCANS, ORGSCAN_PRUNE_EVERY_MS).
 */
import { t } from '../helpers/file-test.ts'
import { startTestService } from '../helpers/service.ts'
import { pruneScans } from '../../runtime/platform/retention.ts'

t.test('pruning keeps the newest N scans and the latest completed one; answers are unchanged', async (t) => {
  const ts = await startTestService(t)
  const sql = ts.svc.db.sql
  const org = ts.seed.orgs.find((o) => o.large)!
  const auth = await ts.keyHeader(org.accountId)
  const counts = async () => Object.fromEntries((await sql<{ org_id: string; n: number }[]>`SELECT org_id, count(*)::int AS n FROM scans GROUP BY org_id`).map((r) => [r.org_id, r.n]))
  const before = await counts()
  t.ok(Object.values(before).some((n) => n >= 3), 'an org with three scans (two completed, then a failed one)')
  const orgIds = ts.seed.orgs.filter((o) => o.accountId === org.accountId && o.scans > 0).map((o) => o.salesforceId)
  const answers = async () => Promise.all(orgIds.map(async (id) => (await ts.get(`/v1/orgs/${id}/fields?limit=20&sort=-id`, auth)).text))
  const answered = await answers()
  const latest = Object.fromEntries((await sql<{ salesforce_id: string; latest_scan_id: string }[]>`SELECT salesforce_id, latest_scan_id::text FROM orgs`).map((r) => [r.salesforce_id, r.latest_scan_id]))
  const [{ rows }] = await sql<{ rows: number }[]>`SELECT count(*)::int AS rows FROM fields`

  const deleted = await pruneScans(sql, 1)
  t.equal(deleted, Object.values(before).reduce((a, n) => a + Math.max(0, n - 1), 0) - Object.values(before).filter((n) => n >= 3).length, 'every scan past one per org, except a latest completed one behind a newer failed scan')
  const after = await counts()
  for (const [id, n] of Object.entries(before)) t.equal(after[id], n >= 3 ? 2 : Math.min(n, 1), `${id}: ${n} → ${after[id]} scans`)
  const stillLatest = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM orgs o WHERE o.latest_scan_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM scans s WHERE s.id = o.latest_scan_id)`
  t.equal(stillLatest[0].n, 0, 'every latest completed scan is kept')
  t.same(Object.fromEntries((await sql<{ salesforce_id: string; latest_scan_id: string }[]>`SELECT salesforce_id, latest_scan_id::text FROM orgs`).map((r) => [r.salesforce_id, r.latest_scan_id])), latest, 'latest scans unchanged')
  const [{ rows: rowsAfter }] = await sql<{ rows: number }[]>`SELECT count(*)::int AS rows FROM fields`
  t.ok(rowsAfter < rows, `the older scans' records are gone (${rows} → ${rowsAfter} fields)`)
  t.same(await answers(), answered, 'every answer about the latest scans is the same')
  const summary = await ts.get(`/v1/orgs/${org.salesforceId}`, auth)
  t.equal(summary.body.data.scanCount, after[org.salesforceId], 'scanCount follows')
  t.equal(await pruneScans(sql, 1), 0, 'a second run has nothing to do')
})

t.test('the service prunes in the background', async (t) => {
  const ts = await startTestService(t, { config: { retention: { keepScans: 1, everyMs: 200 } } })
  const sql = ts.svc.db.sql
  const total = async () => (await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM scans`)[0].n
  const start = await total()
  const t0 = Date.now()
  let now = start
  while (Date.now() - t0 < 10_000 && (now = await total()) === start) await new Promise((r) => setTimeout(r, 100))
  t.ok(now < start, `pruned without being asked (${start} → ${now} scans in ${Date.now() - t0} ms)`)
})
