/**
 * Read replicas (docs/adr/0037-read-replica-for-completed-scans.md) against a real streaming replica of the local
 * PostgreSQL (test/helpers/replica.ts): the records of completed scans are read there, pinned to the latest scan the
 * primary names, while access, keys, sessions and quota stay on the primary. With replay paused, a freshly imported
 * scan is served from the primary as soon as its notification arrives — every answer is the old scan or the new one,
 * never a mix and never a 5xx, and never the old one again — the replica never shows part of a scan, and once it has
 * replayed it serves the new scan, byte for byte as the primary did. A replica that stops only moves reads to the
 * primary. The service runs with production bounds (org state trusted for a minute, keys for 5 s), so every change
 * reaches it through the primary's notifications.
 */
import { t } from '../helpers/file-test.ts'
import { readFileSync } from 'node:fs'
import { importScan, type ScanBundle } from '../../runtime/platform/import.ts'
import { loadConfig } from '../../runtime/platform/config.ts'
import { startService } from '../../runtime/service/service.ts'
import { registry } from '../../resources/index.ts'
import { startTestService, createUser, grantOrgAccess } from '../helpers/service.ts'
import { startReplica } from '../helpers/replica.ts'
import { initializeBody, rpc } from '../helpers/mcp.ts'

t.test('the embedded database refuses a replica', { skip: process.env.TEST_DATABASE_URL ? 'embedded database only' : false }, async (t) => {
  const config = loadConfig({}, { dataDir: 'memory://', replicaUrl: 'postgres://127.0.0.1:1/none', port: 0 })
  await t.rejects(startService(config, { registry }), /A replica needs a PostgreSQL primary \(DATABASE_URL\): the embedded database has no replicas/)
})

const replica = await startReplica(t)
if (replica) {
  const ts = await startTestService(t, {
    config: { authCacheMs: 5000, cache: { maxBytes: 64 * 1024 * 1024, orgStateMs: 60_000 }, admin: { port: 0, host: '127.0.0.1' } },
    beforeStart: async ({ databaseUrl }) => {
      await replica.catchUp() // the test's database, created on the primary a moment ago
      return { replicaUrl: replica.urlOf(databaseUrl!) }
    },
  })
  const stats = () => ts.svc.replica!.stats()
  const large = ts.seed.orgs.find((o) => o.large)!
  const acct = large.accountId
  const auth = await ts.keyHeader(acct)
  const example = JSON.parse(readFileSync(new URL('../../examples/scan-bundle.json', import.meta.url), 'utf8')) as ScanBundle
  const orgId = example.org.salesforceId
  const fieldsPage = (limit: number) => `/v1/orgs/${orgId}/fields?limit=${limit}`

  t.test('scan records are read on the replica; org lists, quota and health on the primary', async (t) => {
    const before = stats()
    const page = await ts.get(`/v1/orgs/${large.salesforceId}/fields?limit=7`, auth)
    t.equal(page.status, 200)
    t.equal(page.body.data.length, 7)
    t.equal(stats().served, before.served + 1, 'served by the replica')
    t.equal((await ts.get('/v1/orgs', auth)).status, 200)
    t.equal((await ts.get(`/v1/orgs/${large.salesforceId}/quota`, auth)).status, 200)
    t.equal(stats().served, before.served + 1, 'account-scoped reads and the quota are not offered to the replica')
    t.equal(stats().behind + stats().failed + stats().down, 0, 'nothing fell back')
    const ready = await ts.get('/readyz')
    t.equal(ready.status, 200)
    t.match(ready.body, { status: 'ready', replica: { reachable: true, standby: true, replayPaused: false, lagBytes: Number } })
    const metrics = await (await fetch(`${ts.svc.adminUrl}/metrics`)).text()
    t.match(metrics, /orgscan_db_replica_reads_total\{outcome="served"\} [1-9]/, 'counted in the metrics')
  })

  t.test('a scan imported while replay is paused: old or new, never a mix or a 5xx; the replica serves it once replayed', async (t) => {
    // The first scan of the example org (its 2 fields), replayed, read on the replica.
    await importScan(ts.svc.db.sql, ts.svc.ctx.resources, acct, example)
    await replica.catchUp()
    const first = await ts.get(fieldsPage(200), auth)
    t.equal(first.status, 200)
    t.equal(first.body.data.length, 2)
    const [{ s1 }] = await ts.svc.db.sql<{ s1: string }[]>`SELECT latest_scan_id::text AS s1 FROM orgs WHERE salesforce_id = ${orgId}`
    const user = await createUser(ts.svc.db.sql, acct, { email: 'replica-reader@example.com', name: 'Replica reader' })
    await grantOrgAccess(ts.svc.db.sql, user.id, orgId)
    const userAuth = await ts.keyHeader(acct, user.id)
    t.equal((await ts.get(fieldsPage(5), userAuth)).status, 200, 'the granted user reads the org')

    await replica.pause()
    // The second scan: 2,000 fields, labelled so that an answer shows which scan each record came from.
    const next = structuredClone(example)
    next.scan = { ...next.scan, startedAt: '2026-10-27T03:48:00Z', completedAt: '2026-10-27T03:52:00Z' }
    const field = (example.data.fields as Array<Record<string, unknown>>)[0]
    next.data.fields = Array.from({ length: 2000 }, (_, i) => ({ ...field, id: i + 1, apiName: `F${i + 1}__c`, label: `Field ${i + 1} (scan 2)` }))
    /** Which scan an answer came from: 1 or 2 when all its records are of that scan, else 'mixed'. */
    const scanOf = (data: Array<{ label: string }>, limit: number): 1 | 2 | 'mixed' => {
      if (JSON.stringify(data) === JSON.stringify(first.body.data)) return 1
      return data.length === limit && data.every((r) => r.label.endsWith('(scan 2)')) ? 2 : 'mixed'
    }
    const seen: Array<1 | 2 | 'mixed'> = []
    const statuses = new Set<number>()
    let stop = false
    // Distinct pages (limit 150–199), so that most reads are statements, not cache hits.
    const reader = (async () => {
      for (let i = 0; !stop || seen.at(-1) !== 2; i++) {
        const limit = 150 + (i % 50)
        const r = await ts.get(fieldsPage(limit), auth)
        statuses.add(r.status)
        if (r.status === 200) seen.push(scanOf(r.body.data, limit))
        if (i > 2000) break
      }
    })()
    for (const end = Date.now() + 5000; seen.length < 2 && Date.now() < end; ) await new Promise((r) => setTimeout(r, 10))
    await importScan(ts.svc.db.sql, ts.svc.ctx.resources, acct, next)
    const [{ s2 }] = await ts.svc.db.sql<{ s2: string }[]>`SELECT latest_scan_id::text AS s2 FROM orgs WHERE salesforce_id = ${orgId}`
    const behindBefore = stats().behind
    const until = Date.now() + 5000
    while (seen.at(-1) !== 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 20))
    await new Promise((r) => setTimeout(r, 200))
    stop = true
    await reader
    t.same([...statuses], [200], 'every answer a 200')
    t.notOk(seen.includes('mixed'), `never a mix (${seen.length} answers)`)
    t.ok(seen.includes(1) && seen.includes(2), 'the old scan, then the new one')
    t.equal(seen.lastIndexOf(1) < seen.indexOf(2), true, 'once the new scan was served, never the old one again')
    t.ok(stats().behind > behindBefore, 'the paused replica did not have it: the primary answered')

    // On the paused replica the new scan does not exist at all, neither its row nor its records.
    const rsql = replica.connect(new URL(ts.location.databaseUrl!).pathname.slice(1))
    const onReplica = async () => (await rsql<{ latest: string; n: number; scans: number }[]>`
      SELECT o.latest_scan_id::text AS latest, (SELECT count(*)::int FROM fields f WHERE f.scan_id = o.latest_scan_id) AS n,
        (SELECT count(*)::int FROM scans s WHERE s.id = ${s2}::bigint) AS scans
      FROM orgs o WHERE o.salesforce_id = ${orgId}`)[0]
    t.same(await onReplica(), { latest: s1, n: 2, scans: 0 }, 'the replica still shows the first scan, and nothing of the second')
    const ready = await ts.get('/readyz')
    t.equal(ready.status, 200, 'a replica behind does not make the process unready')
    t.match(ready.body.replica, { reachable: true, replayPaused: true })
    t.ok(ready.body.replica.lagBytes > 0, `the lag is reported (${ready.body.replica.lagBytes} bytes)`)

    // Everything that decides access or writes is on the primary: it sees changes the replica has not replayed.
    await ts.svc.db.sql`DELETE FROM user_org_access WHERE user_id = ${user.id}::bigint`
    let denied = 0
    for (const end = Date.now() + 3000; denied !== 403 && Date.now() < end; ) denied = (await ts.get(fieldsPage(5), userAuth)).status
    t.equal(denied, 403, 'a grant removed on the primary applies, though the replica still has it')
    const fresh = await ts.keyHeader(acct)
    t.equal((await ts.get(fieldsPage(5), fresh)).status, 200, 'a key created a moment ago authenticates')
    const init = await rpc(ts.svc.mcpUrl, initializeBody(), { authorization: auth })
    t.equal(init.status, 200, 'an MCP session opens')
    const call = await rpc(ts.svc.mcpUrl, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_org_fields', arguments: { orgId, limit: 3 } } }, { authorization: auth, 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-11-25' })
    t.equal(call.body.result?.structuredContent?.data?.[0]?.label.endsWith('(scan 2)'), true, 'and reads the new scan in it')
    const fromPrimary = await ts.get(fieldsPage(123), auth)

    // Replay resumes: the replica shows the first scan or the whole second one, never part of it.
    const views: Array<{ latest: string; n: number }> = []
    const watcher = (async () => {
      for (const end = Date.now() + 10_000; Date.now() < end; ) {
        const v = await onReplica()
        views.push({ latest: v.latest, n: v.n })
        if (v.latest === s2) break
      }
    })()
    await replica.resume()
    await watcher
    await replica.catchUp()
    t.ok(views.every((v) => (v.latest === s1 && v.n === 2) || (v.latest === s2 && v.n === 2000)), `every view of the replica is one whole scan (${views.length} looks)`)
    t.same(views.at(-1), { latest: s2, n: 2000 }, 'then the second')

    ts.svc.hot.responses.clear()
    const served = stats().served
    const fromReplica = await ts.get(fieldsPage(123), auth)
    t.equal(stats().served, served + 1, 'the replica serves the new scan once it has replayed it')
    t.equal(fromReplica.text, fromPrimary.text, 'the same bytes as the primary gave')
    t.equal(fromReplica.headers.get('etag'), fromPrimary.headers.get('etag'), 'and the same tag')
  })

  t.test('a replica that stops: reads go to the primary, and /readyz stays ready and says so', async (t) => {
    await replica.stop()
    const before = stats()
    const a = await ts.get(fieldsPage(31), auth)
    const b = await ts.get(fieldsPage(32), auth)
    t.equal(a.status, 200)
    t.equal(b.status, 200)
    t.equal(a.body.data.length, 31)
    t.equal(stats().failed, before.failed + 1, 'the first read found it unreachable')
    t.equal(stats().down, before.down + 1, 'the next went straight to the primary')
    const ready = await ts.get('/readyz')
    t.equal(ready.status, 200)
    t.same(ready.body, { status: 'ready', replica: { reachable: false } })
  })
}
