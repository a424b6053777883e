/**
 * A database that drops its connections mid-traffic (issue 3 "Bad input and faults"): every answer is a
 * 200 or a clear 5xx in the error envelope, the process keeps serving, and failed requests are not counted.
 * Needs a PostgreSQL server (connections are terminated from a second session).
 */
import t from 'tap'
import postgres from 'postgres'
import { startTestService } from './helpers/service.ts'

const PG = process.env.TEST_DATABASE_URL
t.test('connections terminated under load', { skip: PG ? false : 'needs TEST_DATABASE_URL (PostgreSQL): the embedded database has no second session to kill connections from' }, async (t) => {
  const ts = await startTestService(t)
  const org = ts.seed.orgs.find((o) => o.large)!
  const auth = await ts.keyHeader(org.accountId)
  const dbName = (await ts.svc.db.sql`SELECT current_database() AS d`)[0].d as string
  const admin = postgres(PG!, { max: 1, onnotice: () => undefined })
  t.teardown(() => admin.end())
  const before = await ts.get('/v1/account/quota', auth)
  const statuses: number[] = []
  const bodies: string[] = []
  const fire = async () => {
    const r = await ts.get(`/v1/orgs/${org.salesforceId}/fields?limit=5`, auth)
    statuses.push(r.status)
    if (r.status !== 200) bodies.push(r.text)
  }
  for (let round = 0; round < 5; round++) {
    const load = Array.from({ length: 20 }, fire)
    await admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ${dbName} AND pid <> pg_backend_pid()`
    await Promise.all(load)
  }
  t.ok(statuses.every((s) => s === 200 || s === 503 || s === 500), `only 200 or 5xx: ${[...new Set(statuses)].join(',')}`)
  for (const b of bodies) {
    const e = JSON.parse(b).error
    t.ok(e.status >= 500 && typeof e.code === 'string', 'error envelope')
    t.notMatch(b, /SELECT|terminat|pg_|at .*\.ts/i, 'no driver or SQL text leaks')
  }
  let ok = 0
  for (let i = 0; i < 10; i++) if ((await ts.get(`/v1/orgs/${org.salesforceId}/fields?limit=1`, auth)).status === 200) ok++
  t.equal(ok, 10, 'the process keeps serving once the database is back')
  const served = statuses.filter((s) => s === 200).length + ok
  await ts.svc.ctx.quota.close()
  const rows = await admin.unsafe(`SELECT 1`) // keep admin alive until here
  t.ok(rows.length === 1)
  const used = await ts.svc.db.sql`SELECT used::int AS used FROM quota_usage WHERE window_kind = 'day' AND account_id = ${org.accountId}::bigint`
  const startUsed = before.body.data.rateLimit.daily.limit - before.body.data.rateLimit.daily.remaining
  t.ok(used[0].used - startUsed <= statuses.length + 10, 'never more counted than requests')
  t.ok(used[0].used - startUsed >= served, 'every served request counted')
  t.equal(used[0].used - startUsed, served, 'failed requests were given back: exactly the served ones are counted')
})
