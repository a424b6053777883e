/**
 * The org-state cache refreshed ahead (runtime/core/cache/org-state.ts, docs/adr/0100-fair-share.md), on an embedded
 * database with the two tables it reads and a clock the test moves: an entry past half its lifetime is served at once
 * while a lookup replaces it in the background; without a grace (PostgreSQL) none is served past its lifetime, and an
 * invalidation drops it at once; with one (the embedded database) an expired entry is served while its refresh is
 * under way, for at most the grace. The changes are made behind the cache's back, as a lost notification would leave them.
 */
import { t } from '../helpers/file-test.ts'
import { openDatabase } from '../../runtime/platform/db/connect.ts'
import { OrgStateCache } from '../../runtime/core/cache/org-state.ts'

const ORG = '00D000000000001AAA'
const db = await openDatabase({ dataDir: 'memory://' })
t.teardown(() => db.close())
await db.sql`CREATE TABLE orgs (salesforce_id text PRIMARY KEY, account_id bigint NOT NULL, latest_scan_id bigint)`
await db.sql`CREATE TABLE user_org_access (user_id bigint, org_id text)`
await db.sql`INSERT INTO orgs VALUES (${ORG}, 7, 42)`

let now = 1_000_000
const scan = async (c: OrgStateCache) => (await c.visible(ORG, '7', null))?.scanId
const setScan = (id: number) => db.sql`UPDATE orgs SET latest_scan_id = ${id} WHERE salesforce_id = ${ORG}`
/** Lets a lookup started in the background finish. */
const settle = async () => {
  await db.sql`SELECT 1`
  await new Promise((r) => setImmediate(r))
}

t.test('without a grace: refreshed ahead, never served past its lifetime, dropped at once when invalidated', async (t) => {
  await setScan(42)
  const c = new OrgStateCache(db.sql, () => now, 1000, 1000)
  t.equal(await scan(c), '42')
  t.equal(c.lookups, 1)
  now += 400
  t.equal(await scan(c), '42', 'young: from the cache')
  t.equal(c.lookups, 1, 'no lookup')
  await setScan(43)
  now += 200
  t.equal(await scan(c), '42', 'past half its lifetime: still answered at once, from the entry')
  t.equal(c.lookups, 2, 'and looked up again in the background')
  await settle()
  t.equal(await scan(c), '43', 'the refreshed entry')
  t.equal(c.lookups, 2, 'without another lookup')
  await setScan(44)
  now += 1001
  t.equal(await scan(c), '44', 'an entry past its lifetime is never served: the request waits for the lookup')
  await setScan(45)
  c.invalidate({ org: ORG })
  t.equal(await scan(c), '45', 'an invalidation drops it at once')
})

t.test('with a grace: an expired entry is served while its refresh is under way, for at most the grace', async (t) => {
  await setScan(46)
  const c = new OrgStateCache(db.sql, () => now, 1000, 1000, 15_000, 5000)
  t.equal(await scan(c), '46')
  await setScan(47)
  now += 1500
  t.equal(await scan(c), '46', 'past its lifetime, within the grace: served, its refresh started')
  await settle()
  t.equal(await scan(c), '47', 'then the refreshed entry')
  await setScan(48)
  now += 6001
  t.equal(await scan(c), '48', 'past the grace: the request waits for the lookup')
  await setScan(49)
  c.invalidate({ org: ORG })
  t.equal(await scan(c), '49', 'an invalidation drops it at once')
})
