/** Resource-specific behaviour the generated conformance suite does not pin (docs/contract.md §2, §4.2). */
import { t } from '../helpers/file-test.ts'
import { startTestService } from '../helpers/service.ts'

const ts = await startTestService(t)
const org = ts.seed.orgs.find((o) => o.large)!
const auth = await ts.keyHeader(org.accountId)
const base = `/v1/orgs/${org.salesforceId}`
const enc = encodeURIComponent

t.test('loginActivity/overview: the repeatable license parameter scopes every count (§4.2)', async (t) => {
  const all = await ts.get(`${base}/loginActivity/overview`, auth)
  t.equal(all.status, 200)
  t.equal(all.body.data.licenseTypes, null, 'unscoped')
  t.same(all.body.data.windows.map((w: { days: number }) => w.days), [30, 90, 365])
  t.equal(all.text, JSON.stringify(all.body), 'as compact as every other answer (no `"key" : value` from PostgreSQL)')
  t.same(Object.keys(all.body.data), ['licenseTypes', 'windows'], 'in declaration order')
  const users = await ts.get(`${base}/loginActivity?limit=200&filter=${enc('eq(isActive,true)')}`, auth)
  const types = [...new Set(users.body.data.map((u: { licenseType: string }) => u.licenseType))] as string[]
  t.ok(types.length >= 2, 'several license types in the seed')
  const one = await ts.get(`${base}/loginActivity/overview?license=${enc(types[0])}`, auth)
  const two = await ts.get(`${base}/loginActivity/overview?license=${enc(types[0])}&license=${enc(types[1])}`, auth)
  t.same(one.body.data.licenseTypes, [types[0]])
  t.same(two.body.data.licenseTypes, [types[0], types[1]])
  for (const i of [0, 1, 2]) {
    const w1 = one.body.data.windows[i]
    const w2 = two.body.data.windows[i]
    const wa = all.body.data.windows[i]
    t.ok(w1.licensedUsers <= w2.licensedUsers && w2.licensedUsers <= wa.licensedUsers, `window ${wa.days}: scoped counts are subsets`)
    t.equal(w1.loggedIn + w1.notLoggedIn, w1.licensedUsers, `window ${wa.days}: loggedIn + notLoggedIn = licensedUsers`)
    const pct = w1.licensedUsers === 0 ? 0 : Math.round((w1.loggedIn * 1000) / w1.licensedUsers) / 10
    t.equal(w1.adoptionPercent, pct, `window ${wa.days}: adoption percentage`)
  }
  const none = await ts.get(`${base}/loginActivity/overview?license=NoSuchLicense`, auth)
  t.same(none.body.data.windows.map((w: { licensedUsers: number }) => w.licensedUsers), [0, 0, 0], 'an unknown license type counts nobody')
})

t.test('orgLimits: all rows in one page, derived used and percentUsed (§2)', async (t) => {
  const r = await ts.get(`${base}/orgLimits`, auth)
  t.equal(r.status, 200)
  const names = r.body.data.map((l: { name: string }) => l.name)
  for (const n of ['DailyApiRequests', 'PermissionSets', 'DailyBulkApiBatches']) t.ok(names.includes(n), n)
  for (const l of r.body.data) {
    t.equal(l.used, l.cap - l.remaining, `${l.name}: used = cap − remaining`)
    const pct = l.cap === 0 ? 0 : Math.round(((l.cap - l.remaining) * 10000) / l.cap) / 100
    t.equal(l.percentUsed, pct, `${l.name}: percentUsed`)
  }
  t.ok(r.body.data.some((l: { cap: number; percentUsed: number }) => l.cap === 0 && l.percentUsed === 0), 'cap 0 → 0 %')
  const one = await ts.get(`${base}/orgLimits/DailyApiRequests`, auth)
  t.same(one.body.data, r.body.data.find((l: { name: string }) => l.name === 'DailyApiRequests'), 'same shape as a list row')
  const hot = await ts.get(`${base}/orgLimits?filter=${enc('gt(percentUsed,50)')}&sort=-percentUsed`, auth)
  t.ok(hot.body.data.length > 0, 'the seed has limits over 50 % used')
  t.ok(hot.body.data.every((l: { percentUsed: number }) => l.percentUsed > 50), 'filter on a derived value')
})

t.test('connected app assignments: exactly one of profileId and permissionSetId (§2)', async (t) => {
  const r = await ts.get(`${base}/connectedAppAssignments?limit=200`, auth)
  t.ok(r.body.data.length > 0)
  for (const a of r.body.data) t.ok((a.profileId === null) !== (a.permissionSetId === null), `assignment ${a.id}`)
})

t.test('issues and recommendations (§2, §4.2)', async (t) => {
  const issues = await ts.get(`${base}/issues?limit=5`, auth)
  t.equal(issues.status, 200)
  const first = issues.body.data[0]
  const latest = (await ts.get(base, auth)).body.data.latestScanId
  t.ok(issues.body.data.length > 0, 'issues listed')
  t.ok(issues.body.data.every((i: { scanId: number }) => i.scanId === latest), 'issues of the latest scan')
  const rec = await ts.get(`${base}/issues/${Buffer.from(first.issueKey).toString('base64url')}`, auth)
  t.equal(rec.status, 200)
  t.equal(rec.body.data.issueKey, first.issueKey)
  t.equal(rec.body.data.priority, first.priority)
  t.ok(Array.isArray(rec.body.data.remediationSteps) && rec.body.data.remediationSteps.length > 0, 'remediation steps')
  const padded = await ts.get(`${base}/issues/${Buffer.from(first.issueKey).toString('base64')}`, auth)
  t.ok(padded.status === 200 || padded.status === 400, 'standard Base64 is either accepted when equal or rejected')
  const plain = await ts.get(`${base}/issues/${enc(first.issueKey)}`, auth)
  t.equal(plain.status, 400, 'an issueKey that is not Base64URL is 400')
})

t.test('the org summary reflects the latest completed scan; a failed latest scan keeps the previous data (§1)', async (t) => {
  const failed = ts.seed.orgs.find((o) => o.scans >= 3)
  t.ok(failed, 'seed has an org whose latest scan failed')
  const a = await ts.keyHeader(failed!.accountId)
  const s = await ts.get(`/v1/orgs/${failed!.salesforceId}`, a)
  t.equal(s.body.data.lastScanStatus, 'failed')
  t.type(s.body.data.latestScanId, 'number', 'still points at the last completed scan')
  const f = await ts.get(`/v1/orgs/${failed!.salesforceId}/fields?limit=1`, a)
  t.equal(f.status, 200, 'data of the last completed scan is served')
  t.equal(f.body.data.length, 1)
  const big = await ts.get(base, auth)
  const counted = big.body.data.issueCounts
  const n = await ts.get(`${base}/issues?filter=&limit=200`, auth)
  t.ok(counted.critical + counted.high + counted.medium + counted.low >= n.body.data.length, 'issue counts cover the listed issues')
})
