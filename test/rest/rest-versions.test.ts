/** Versioning (§3, §9): discovery, version header, deprecation headers, 410 after sunset (injected clock). */
import { t } from '../helpers/file-test.ts'
import { startTestService } from '../helpers/service.ts'

t.test('current version', async (t) => {
  const ts = await startTestService(t)
  const root = await ts.get('/')
  t.equal(root.status, 200, 'GET / is unauthenticated')
  t.same(root.body, { versions: [{ name: 'v1', status: 'current' }] })
  const org = ts.seed.orgs.find((o) => o.large)!
  const auth = await ts.keyHeader(org.accountId)
  const r = await ts.get('/v1/orgs', auth)
  t.equal(r.headers.get('x-orgscan-api-version'), '1')
  t.equal(r.headers.get('deprecation'), null, 'no Deprecation header on a current version')
  const err = await ts.get('/v1/orgs')
  t.equal(err.status, 401)
  t.equal(err.headers.get('x-orgscan-api-version'), '1', 'the version header is on errors too')
  const unknown = await ts.get('/v1/nothing-here', auth)
  t.equal(unknown.status, 404)
  t.equal(unknown.headers.get('x-orgscan-api-version'), '1', 'the version header on a 404 under /v1')
  const post = await ts.get('/v1/orgs', auth, { method: 'POST' })
  t.equal(post.status, 405)
  t.equal(post.headers.get('x-orgscan-api-version'), '1', 'the version header on a 405 under /v1')
  t.equal((await ts.get('/')).headers.get('x-orgscan-api-version'), null, 'GET / is unversioned')
  for (const p of ['/orgs', '/orgs/00D000000000001', '/mcp/../orgs', '/v2/orgs', '/V1/orgs']) {
    const u = await ts.get(p, auth)
    t.equal(u.status, 404, `${p} → 404 (unversioned and unknown paths are gone)`)
    t.equal(u.body.error.code, 'not_found')
  }
})

t.test('deprecated version, then removed at its sunset date', async (t) => {
  // Adopted three months before its sunset (the shortest window), then served on its last day.
  let now = Date.parse('2026-12-31T00:00:00Z')
  const ts = await startTestService(t, {
    clock: () => now,
    config: { versions: [{ name: 'v1', status: 'deprecated', sunsetDate: '2027-03-31' }] },
  })
  now = Date.parse('2027-03-30T23:59:59Z')
  const org = ts.seed.orgs.find((o) => o.large)!
  const auth = await ts.keyHeader(org.accountId)
  const root = await ts.get('/')
  t.same(root.body, { versions: [{ name: 'v1', status: 'deprecated', sunsetDate: '2027-03-31' }] })
  const r = await ts.get('/v1/orgs', auth)
  t.equal(r.status, 200)
  t.equal(r.headers.get('deprecation'), 'true')
  t.equal(r.headers.get('sunset'), 'Wed, 31 Mar 2027 00:00:00 GMT')
  const e = await ts.get('/v1/orgs/bad-id', auth)
  t.equal(e.headers.get('deprecation'), 'true', 'deprecation headers on errors too')
  // Every answer of the deprecated version: a path that is no endpoint, a method it does not take, no credentials.
  for (const [what, res] of [
    ['a 404 under /v1', await ts.get('/v1/nothing-here', auth)],
    ['a 405 under /v1', await ts.get('/v1/orgs', auth, { method: 'POST' })],
    ['a 401', await ts.get('/v1/orgs')],
  ] as const) {
    t.equal(res.headers.get('deprecation'), 'true', `Deprecation on ${what}`)
    t.equal(res.headers.get('sunset'), 'Wed, 31 Mar 2027 00:00:00 GMT', `Sunset on ${what}`)
  }
  now = Date.parse('2027-03-31T00:00:00Z')
  const gone = await ts.get('/v1/orgs', auth)
  t.equal(gone.status, 410, 'sunset version → 410 Gone')
  t.equal(gone.body.error.code, 'gone')
  for (const [what, res] of [
    ['a path that is no endpoint', await ts.get('/v1/nothing-here', auth)],
    ['a method it does not take', await ts.get('/v1/orgs', auth, { method: 'POST' })],
    ['a request without credentials', await ts.get('/v1/orgs')],
  ] as const) {
    t.equal(res.status, 410, `every request to the removed version is 410: ${what}`)
    t.equal(res.body.error.code, 'gone')
    t.equal(res.headers.get('x-orgscan-api-version'), '1')
  }
  const root2 = await ts.get('/')
  t.same(root2.body, { versions: [] }, 'a removed version is no longer listed')
})

t.test('a first-start version table is adopted only by the lifecycle rules: the start fails otherwise', async (t) => {
  const now = Date.parse('2026-11-25T12:00:00Z')
  for (const [versions, problem] of [
    [[{ name: 'v1', status: 'deprecated', sunsetDate: '2026-12-01' }], /less than 3 months away/],
    [[{ name: 'v1', status: 'current' }, { name: 'v2', status: 'current' }], /v2 is not served by this build.*more than one version is current/],
    [[{ name: 'v1', status: 'current' }, { name: 'v1', status: 'current' }], /listed twice/],
  ] as const) {
    await t.rejects(startTestService(t, { clock: () => now, config: { versions: versions as never } }), { message: problem }, JSON.stringify(versions))
  }
})
