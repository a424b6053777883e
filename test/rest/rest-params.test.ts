/**
 * Parameter rules found by trying the service as a new user: the quota endpoints reject unknown query parameters
 * like every other endpoint (and stay free); every limit that is not a whole number of at least 1 gets one wording.
 */
import { t } from '../helpers/file-test.ts'
import { startTestService } from '../helpers/service.ts'

const ts = await startTestService(t)
const org = ts.seed.orgs.find((o) => o.large)!
const auth = await ts.keyHeader(org.accountId)

t.test('the quota endpoints take no parameters', async (t) => {
  const before = (await ts.get('/v1/account/quota', auth)).body.data.rateLimit.daily.remaining
  for (const path of ['/v1/account/quota?foo=1', `/v1/orgs/${org.salesforceId}/quota?limit=5`, '/v1/account/quota?%ZZ=1']) {
    const r = await ts.get(path, auth)
    t.equal(r.status, 400, path)
    t.equal(r.body.error.code, 'unknown_parameter')
  }
  t.equal((await ts.get('/v1/account/quota', auth)).body.data.rateLimit.daily.remaining, before, 'and stay free')
})

t.test('one wording for every bad limit', async (t) => {
  const details = new Set<string>()
  for (const limit of ['0', '-1', '1.5', 'abc', '']) {
    const r = await ts.get(`/v1/orgs/${org.salesforceId}/fields?limit=${limit}`, auth)
    t.equal(r.status, 400, `limit=${limit}`)
    t.equal(r.body.error.parameter, 'limit')
    details.add(r.body.error.detail)
  }
  t.same([...details], ['limit must be a whole number of at least 1.'])
})

t.test('record JSON is compact like the envelope', async (t) => {
  // Records are rendered compactly; an object-valued field (issueCounts) keeps PostgreSQL's jsonb spacing inside it.
  for (const path of [`/v1/orgs/${org.salesforceId}/fields?limit=3`, `/v1/orgs/${org.salesforceId}`, '/v1/orgs', `/v1/orgs/${org.salesforceId}/orgLimits`]) {
    const r = await ts.get(path, auth)
    t.equal(r.status, 200, path)
    t.notMatch(r.text, /" : |\}, \{/, `${path}: no spaces around a field's colon or between records`)
    t.match(r.text, /"data":\[?\{"[a-zA-Z]+":/, "compact from the first field")
    t.same(JSON.parse(r.text), r.body)
  }
})
