/** One quota per account over the wire (docs/contract.md §7 429 forms, §8). */
import { t } from '../helpers/file-test.ts'
import { startTestService, basic } from '../helpers/service.ts'
import { spawnServer } from '../helpers/server-process.ts'
import { createKey, updateAccount } from '../../runtime/platform/admin.ts'
import { NEEDS_POSTGRES, postgresForTest } from '../helpers/test-db.ts'
import { servedPostgres } from '../helpers/served-postgres.ts'

const RATE_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']

t.test('headers, 429, free quota reads, 429 consumes nothing', async (t) => {
  let now = Date.parse('2026-11-22T10:00:00Z')
  const ts = await startTestService(t, { clock: () => now })
  const org = ts.seed.orgs.find((o) => o.large)!
  const other = ts.seed.orgs.find((o) => o.accountId !== org.accountId)!
  await updateAccount(ts.svc.db.sql, org.accountId, { dailyLimit: 5, monthlyLimit: 1000 })
  ts.svc.ctx.quota.invalidate?.(org.accountId)
  const auth = await ts.keyHeader(org.accountId)

  const ok = await ts.get(`/v1/orgs/${org.salesforceId}/fields?limit=1`, auth)
  t.equal(ok.status, 200)
  t.equal(ok.headers.get('x-ratelimit-limit'), '5', 'the window closest to exhaustion: daily')
  t.equal(ok.headers.get('x-ratelimit-remaining'), '4')
  t.equal(ok.headers.get('x-ratelimit-reset'), String(Date.parse('2026-11-23T00:00:00Z') / 1000), 'daily resets at 00:00 UTC')
  t.match(ok.headers.get('ratelimit-policy') ?? '', /"daily";q=5;w=86400/, 'RateLimit-Policy names both windows')
  t.match(ok.headers.get('ratelimit-policy') ?? '', /"monthly";q=1000/)

  const bad = await ts.get(`/v1/orgs/${org.salesforceId}/fields?filter=eq(`, auth)
  t.equal(bad.status, 400)
  t.equal(bad.headers.get('x-ratelimit-remaining'), '3', 'a 4xx counts and carries the headers')

  for (let i = 0; i < 10; i++) {
    const q = await ts.get('/v1/account/quota', auth)
    t.equal(q.status, 200)
  }
  const q = await ts.get('/v1/account/quota', auth)
  t.same(q.body, { data: { rateLimit: {
    daily: { limit: 5, remaining: 3, resetAt: '2026-11-23T00:00:00Z' },
    monthly: { limit: 1000, remaining: 998, resetAt: '2026-12-01T00:00:00Z' },
  } } }, 'quota reads are free (§8.5) and report both windows')
  const qo = await ts.get(`/v1/orgs/${org.salesforceId}/quota`, auth)
  t.same(qo.body, q.body, 'the org form returns the account quota')
  const qx = await ts.get(`/v1/orgs/${other.salesforceId}/quota`, auth)
  t.equal(qx.status, 404, "the org form checks org access")
  const qn = await ts.get('/v1/account/quota')
  t.equal(qn.status, 401, 'quota reads need authentication')

  await ts.get('/v1/orgs', auth)
  await ts.get('/v1/orgs', auth)
  await ts.get('/v1/orgs', auth)
  const r = await ts.get('/v1/orgs', auth)
  t.equal(r.status, 429)
  const retry = (Date.parse('2026-11-23T00:00:00Z') - now) / 1000
  t.same(r.body, { error: { status: 429, title: 'Too Many Requests', detail: `Rate limit exceeded. Retry after ${retry} seconds.`, code: 'rate_limited' } })
  t.equal(r.headers.get('retry-after'), String(retry))
  for (const h of RATE_HEADERS) t.ok(r.headers.get(h), `${h} on the 429`)
  t.equal(r.headers.get('x-ratelimit-remaining'), '0')
  for (let i = 0; i < 5; i++) t.equal((await ts.get('/v1/orgs', auth)).status, 429)
  const after = await ts.get('/v1/account/quota', auth)
  t.equal(after.body.data.rateLimit.daily.remaining, 0)
  t.equal(after.body.data.rateLimit.monthly.remaining, 995, 'rejected requests consumed nothing')

  const unauth = await ts.get('/v1/orgs', basic('osk_aaaaaaaaaaaaaaaaaaaa', 'A'.repeat(43)))
  t.equal(unauth.status, 401)
  t.equal(unauth.headers.get('x-ratelimit-limit'), null, 'no account, no quota headers on a 401')

  // The day rolls over (injected clock): the daily window is full again, the monthly one keeps counting.
  now = Date.parse('2026-11-23T00:00:00Z')
  const next = await ts.get('/v1/orgs', auth)
  t.equal(next.status, 200, 'the full daily allowance returns at 00:00 UTC')
  const q2 = await ts.get('/v1/account/quota', auth)
  t.equal(q2.body.data.rateLimit.daily.remaining, 4)
  t.equal(q2.body.data.rateLimit.monthly.remaining, 994)
})

t.test('the monthly window blocks while the daily one has room; limit changes apply at once', async (t) => {
  const now = Date.parse('2026-11-30T23:59:59Z')
  const ts = await startTestService(t, { clock: () => now })
  const org = ts.seed.orgs.find((o) => o.large)!
  await updateAccount(ts.svc.db.sql, org.accountId, { dailyLimit: 100, monthlyLimit: 2 })
  ts.svc.ctx.quota.invalidate?.(org.accountId)
  const auth = await ts.keyHeader(org.accountId)
  t.equal((await ts.get('/v1/orgs', auth)).status, 200)
  const second = await ts.get('/v1/orgs', auth)
  t.equal(second.headers.get('x-ratelimit-limit'), '2', 'headers describe the window closest to exhaustion: monthly')
  const r = await ts.get('/v1/orgs', auth)
  t.equal(r.status, 429)
  t.equal(r.headers.get('x-ratelimit-limit'), '2', 'the blocking window')
  t.equal(r.headers.get('retry-after'), '1', 'one second to 00:00 UTC on the 1st')
  t.equal(r.headers.get('x-ratelimit-reset'), String(Date.parse('2026-12-01T00:00:00Z') / 1000))
  await updateAccount(ts.svc.db.sql, org.accountId, { monthlyLimit: 10 })
  // On PostgreSQL the change arrives by LISTEN/NOTIFY; the embedded database has no second connection, so an
  // in-process change invalidates directly (runtime/platform/quota/factory.ts).
  ts.svc.ctx.quota.invalidate?.(org.accountId)
  let status = 0
  for (let i = 0; i < 20 && status !== 200; i++) {
    status = (await ts.get('/v1/orgs', auth)).status
    if (status !== 200) await new Promise((res) => setTimeout(res, 50))
  }
  t.equal(status, 200, 'a raised limit applies to the next requests')
})

t.test('no request header grants the agent exemption (§5 item 6)', async (t) => {
  const ts = await startTestService(t)
  const org = ts.seed.orgs.find((o) => o.large)!
  await updateAccount(ts.svc.db.sql, org.accountId, { dailyLimit: 2, monthlyLimit: 100 })
  ts.svc.ctx.quota.invalidate?.(org.accountId)
  const auth = await ts.keyHeader(org.accountId)
  const forged = { 'x-verified-agent': 'true', 'x-quota-exempt': 'true', 'x-orgscan-agent': 'assistant', 'x-client-id': 'orgscan-assistant', via: 'orgscan-agent' }
  const statuses: number[] = []
  for (let i = 0; i < 4; i++) statuses.push((await ts.get('/v1/orgs', auth, { headers: forged })).status)
  t.same(statuses, [200, 200, 429, 429], 'forged headers are counted like any request')
})

t.test('edge shedding: a bare 429 before authentication', async (t) => {
  const ts = await startTestService(t, { config: { burstGuard: { enabled: true, ratePerSecond: 1, burst: 3 } }, seed: false })
  const statuses: number[] = []
  let shed: { status: number; headers: Headers; text: string } | undefined
  for (let i = 0; i < 6; i++) {
    const r = await ts.get('/v1/orgs')
    statuses.push(r.status)
    if (r.status === 429) shed = r
  }
  t.same(statuses.slice(0, 3), [401, 401, 401], 'within the burst, requests reach authentication')
  t.ok(shed, 'the flood is shed')
  t.equal(shed!.text, '', 'no body')
  for (const h of RATE_HEADERS) t.equal(shed!.headers.get(h), null, `no ${h}`)
})

t.test('exact across two server processes on one PostgreSQL', async (t) => {
  const fresh = await postgresForTest()
  if (!fresh) return t.plan(0, NEEDS_POSTGRES)
  const pepper = 'two-process-pepper-0123456789abcdefgh'
  const { sql, seed, env } = await servedPostgres(t, fresh, pepper)
  const org = seed.orgs.find((o) => o.large)!
  await updateAccount(sql, org.accountId, { dailyLimit: 100, monthlyLimit: 100000 })
  const key = await createKey(sql, pepper, org.accountId)
  const auth = basic(key.keyId, key.secret)
  const servers = await Promise.all([spawnServer(env()), spawnServer(env())])
  t.teardown(() => Promise.all(servers.map((s) => s.stop(0))))
  const results = await Promise.all(
    Array.from({ length: 300 }, (_, i) => fetch(`${servers[i % 2].url}/v1/orgs/${org.salesforceId}/objects?limit=1`, { headers: { authorization: auth } }).then(async (r) => {
      await r.arrayBuffer()
      return r.status
    })),
  )
  const ok = results.filter((s) => s === 200).length
  const limited = results.filter((s) => s === 429).length
  t.equal(ok, 100, 'exactly the limit is answered')
  t.equal(limited, 200, 'the rest is 429')
  await Promise.all(servers.map((s) => s.stop()))
  const rows = await sql`SELECT window_kind, used::int AS used FROM quota_usage WHERE account_id = ${org.accountId}::bigint ORDER BY window_kind`
  t.same(rows.map((r) => [r.window_kind, r.used]), [['day', 100], ['month', 100]], 'the stored count is exactly 100 in both windows')
})
