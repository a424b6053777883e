/**
 * One account cannot starve another (docs/adr/0100-fair-share.md): account A keeps 16 of the most expensive legal
 * filters in flight for 10 s — the shapes an external tester used first (test/bench/worst-filter-set.ts) — while
 * account B reads a small list every 100 ms, as the tester's B did. With default settings (the production key cache,
 * response cache and org-state bound), every B request succeeds and B's p99 stays under 1 s: B's lists answered from
 * the response cache (on both databases), and B's pages that each read the database (PostgreSQL; on the embedded
 * database such a read waits for A's running statement, which nothing can cancel there). Before the fix both failed:
 * A held every read connection with more queries pipelined behind, B's org-state lookups queued on the same pool, and
 * B's cached answers waited for a database turn (figures in the decision record).
 * The data is the demo seed at half scale, enough to make the attack's filters costly while B's own stay cheap.
 * It runs while no other test file runs (test/alone/, tap's `serial` in package.json): another file's load would be in
 * B's latency too.
 */
import { t } from '../helpers/file-test.ts'
import { startTestService } from '../helpers/service.ts'
import { updateAccount } from '../../runtime/platform/admin.ts'
import { PLAIN, percentile, starvationAttack } from '../attack/tenant-starvation.ts'

const ts = await startTestService(t, { seedScale: 0.5, config: { authCacheMs: 5000, cache: { maxBytes: 64 * 1024 * 1024, orgStateMs: 1000 } } })
const large = ts.seed.orgs.find((o) => o.large)!
const other = ts.seed.orgs.find((o) => o.accountId !== large.accountId && o.scans > 0)!
for (const id of [large.accountId, other.accountId]) await updateAccount(ts.svc.db.sql, id, { dailyLimit: 1_000_000, monthlyLimit: 1_000_000 })
ts.svc.ctx.quota.invalidate?.()
const attacker = { authorization: await ts.keyHeader(large.accountId), orgId: large.salesforceId }
const victim = { authorization: await ts.keyHeader(other.accountId), orgId: other.salesforceId }

for (const [what, misses] of [['lists answered from the response cache', false], ['pages that each read the database', true]] as const) {
  t.test(`16 concurrent worst-case filters from A do not starve B's ${what}`, async (t) => {
    if (misses && ts.svc.db.kind === 'embedded') {
      // One connection, and PGlite cannot cancel a statement: each of B's reads waits for the one of A's that is running
      // (never for more: fair share), however long the filters make it. That bound is the filters' cost (docs/rql.md).
      t.plan(0, "embedded: a read of the database waits for A's running statement, whose length is the filters' cost")
      return
    }
    // B was reading before A came: its lists are in the response cache, its key, quota lease and org state at hand.
    for (const p of PLAIN) t.equal((await ts.get(`/v1/orgs/${victim.orgId}/${p}`, victim.authorization)).status, 200, `B reads ${p}`)
    const before = ts.svc.hot.responses.stats()
    const report = await starvationAttack({ url: ts.url, attacker, victim, seconds: 10, concurrency: 16, victimIntervalMs: 100, victimMisses: misses })
    const after = ts.svc.hot.responses.stats()
    const lat = report.victim.latenciesMs
    const p99 = percentile(lat, 0.99)
    t.comment(`B: ${lat.length} requests, p50 ${percentile(lat, 0.5).toFixed(0)} ms, p99 ${p99.toFixed(0)} ms, max ${Math.max(...lat).toFixed(0)} ms; A: ${JSON.stringify(report.attacker.statuses)}; cache hits ${after.hits - before.hits}`)
    t.ok(lat.length >= 20, 'B kept being served')
    t.same(Object.keys(report.victim.statuses), ['200'], 'every B request succeeded')
    t.ok(p99 < 1000, `B's p99 is under 1 s (${p99.toFixed(0)} ms)`)
    t.ok((report.attacker.statuses[200] ?? 0) > 0, "A's expensive requests were served too (legal, just expensive)")
    t.notOk(Object.keys(report.attacker.statuses).some((s) => s.startsWith('5')), 'A got no 5xx either')
    if (misses) t.equal(after.hits, before.hits, 'every request read the database (none answered from the cache)')
    else t.ok(after.hits - before.hits >= lat.length / 2, "B's lists came from the response cache")
  })
}
