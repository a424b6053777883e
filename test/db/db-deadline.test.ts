/** Deadlines for database calls (runtime/core/db/deadline.ts), with a stand-in query the test settles by hand. */
import type { Test } from 'tap'
import { t } from '../helpers/file-test.ts'
import { raceDeadline, withDeadline } from '../../runtime/core/db/deadline.ts'
import { ApiError } from '../../runtime/core/errors.ts'
import postgres from 'postgres'
import { NEEDS_POSTGRES, postgresForTest } from '../helpers/test-db.ts'
import { OrgStateCache } from '../../runtime/core/cache/org-state.ts'

function fakeQuery<T>() {
  let resolve!: (v: T) => void
  let reject!: (e: unknown) => void
  const p = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)))
  const q = Object.assign(p, { cancelled: 0, cancel: () => q.cancelled++ })
  return { q, resolve, reject }
}

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms))

t.test('withDeadline: an answer in time passes through', async (t) => {
  const { q, resolve } = fakeQuery<number>()
  resolve(7)
  t.equal(await withDeadline(q, 1000), 7)
  const f = fakeQuery<number>()
  f.reject(new Error('boom'))
  await t.rejects(withDeadline(f.q, 1000), { message: 'boom' })
  t.equal(q.cancelled + f.q.cancelled, 0, 'nothing cancelled')
})

t.test('withDeadline: no answer in time is a 503, and the query is left to finish (never cancelled)', async (t) => {
  const { q, resolve } = fakeQuery<number>()
  const err = await withDeadline(q, 20).then(() => undefined, (e: unknown) => e)
  t.ok(err instanceof ApiError && err.code === 'service_unavailable', 'service_unavailable')
  t.equal(q.cancelled, 0, 'cancelling a pipelined query would put the connection out of step (below)')
  resolve(1) // a late answer is dropped
})

// The PostgreSQL cases share one database of their own; each uses one connection, so queries queue behind each other.
const pg = await postgresForTest()
if (pg) t.teardown(() => pg.drop())
const onPostgres = { skip: pg ? false : NEEDS_POSTGRES }
function oneConnection(t: Test): postgres.Sql {
  const sql = postgres(pg!.databaseUrl, { max: 1, onnotice: () => undefined })
  t.teardown(() => sql.end({ timeout: 1 }))
  return sql
}

t.test('on PostgreSQL, a deadline passing for a query queued behind another leaves every later answer its own', onPostgres, async (t) => {
  const sql = oneConnection(t)
  await sql`SELECT 1`
  // Sent at once, in this order (postgres.js sends a query when it is awaited, or on execute()).
  const slow = sql`SELECT 'slow' AS who, pg_sleep(0.4)`.execute()
  const late = sql`SELECT 'late' AS who`.execute() // pipelined behind the slow one on the one connection
  const mine = sql`SELECT 'mine' AS who`.execute()
  const theirs = sql`SELECT 'theirs' AS who`.execute()
  const missed = await withDeadline(late, 100).then(() => 'answered', (e: unknown) => e)
  t.ok(missed instanceof ApiError && missed.code === 'service_unavailable', `the queued query misses its deadline (${String(missed)})`)
  t.same((await mine).map((r) => r.who), ['mine'], 'the next query gets its own answer, not the late one\'s')
  t.same((await theirs).map((r) => r.who), ['theirs'])
  t.same((await slow).map((r) => r.who), ['slow'])
  t.same((await sql`SELECT 'after' AS who`).map((r) => r.who), ['after'], 'and so does every query after')
})

t.test('on PostgreSQL, what a principal may see is looked up with a deadline, once for requests that need it at once', onPostgres, async (t) => {
  const sql = oneConnection(t)
  // The two tables the cache reads, with the columns it reads.
  await sql`CREATE TABLE orgs (salesforce_id text PRIMARY KEY, account_id bigint NOT NULL, latest_scan_id bigint)`
  await sql`CREATE TABLE user_org_access (user_id bigint, org_id text)`
  await sql`INSERT INTO orgs VALUES ('00D000000000001AAA', 7, 42)`
  await sql`INSERT INTO user_org_access VALUES (3, '00D000000000001AAA')`
  const cache = new OrgStateCache(sql, Date.now, 1000, 1000, 100)
  // The pool's one connection is busy: the lookups queue behind a slow statement.
  const slow = sql`SELECT pg_sleep(0.5)`.execute()
  const waiting = await Promise.all(Array.from({ length: 8 }, () => cache.visible('00D000000000001AAA', '7', null).then(() => 'answered', (e: unknown) => e)))
  t.ok(waiting.every((e) => e instanceof ApiError && e.code === 'service_unavailable'), 'every request waiting for it gets the 503 at the deadline')
  t.equal(cache.lookups, 1, 'eight requests for the same org: one lookup')
  await slow
  t.same(await cache.visible('00D000000000001AAA', '7', '3'), { accountId: '7', scanId: '42' }, 'answered once the database is free')
  t.equal(await cache.visible('00D000000000001AAA', '8', null), undefined, 'another account does not see it')
  t.equal(await cache.visible('00D000000000001AAA', '7', '4'), undefined, 'nor a user without the grant')
})

t.test('raceDeadline: late outcomes go to the callbacks, never to the caller', async (t) => {
  const expiredErr = new Error('expired')
  let expiredCalls = 0
  const late: unknown[] = []
  const d = {
    ms: 20,
    expired: () => (expiredCalls++, expiredErr),
    onLateAnswer: (v: number) => late.push(['answer', v]),
    onLateError: (e: unknown) => late.push(['error', (e as Error).message]),
  }
  const a = fakeQuery<number>()
  await t.rejects(raceDeadline(a.q, d), expiredErr)
  a.resolve(5)
  const b = fakeQuery<number>()
  await t.rejects(raceDeadline(b.q, d), expiredErr)
  b.reject(new Error('late failure'))
  await tick(5)
  t.same(late, [['answer', 5], ['error', 'late failure']])
  t.equal(expiredCalls, 2)
  t.equal(a.q.cancelled + b.q.cancelled, 0, 'not cancelled unless asked')

  const c = fakeQuery<number>()
  c.resolve(9)
  t.equal(await raceDeadline(c.q, d), 9, 'in time: the caller gets it')
  await tick(30)
  t.equal(late.length, 2, 'and no late callback runs')
})
