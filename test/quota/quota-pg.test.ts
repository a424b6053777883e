/**
 * The quota engine on real PostgreSQL with an injected clock (docs/contract.md §8): counting in both
 * windows, 429s that consume nothing, window boundaries (last second of a day/month, leap day, year end),
 * leases bound to their windows, free state reads, exempt principals, limit changes, a missing account,
 * and a database that stops or hangs mid-request.
 *
 * A fresh database per file on TEST_DATABASE_URL; without it the file is skipped, saying so (the PostgreSQL run covers it).
 */
import { endFile, t } from '../helpers/file-test.ts'
import { NEEDS_POSTGRES, postgresForTest } from '../helpers/test-db.ts'
import net from 'node:net'
import { randomUUID } from 'node:crypto'
import postgres from 'postgres'
import { migrate } from '../../runtime/platform/db/migrate.ts'
import { ApiError } from '../../runtime/core/errors.ts'
import type { Logger } from '../../runtime/core/log.ts'
import type { Principal } from '../../runtime/core/principal.ts'
import type { QuotaCharge } from '../../runtime/core/quota-types.ts'
import { PgQuota, type PgQuotaOptions } from '../../runtime/platform/quota/pg-quota.ts'

const silent = () => {}

// ---- database per file -------------------------------------------------------------------------------

const pools: postgres.Sql[] = []
function pool(url: string, o: postgres.Options<{}> = {}): postgres.Sql {
  const p = postgres(url, { max: 4, onnotice: silent, connection: { TimeZone: 'UTC' }, ...o })
  pools.push(p)
  return p
}

const fresh = await postgresForTest()
if (!fresh) {
  t.plan(0, NEEDS_POSTGRES)
  endFile()
}
t.teardown(async () => {
  for (const p of pools) await p.end({ timeout: 2 }).catch(silent)
  await fresh.drop()
})
const url = fresh.databaseUrl
const sql = pool(url)
await migrate(sql)

// ---- helpers -----------------------------------------------------------------------------------------

const U = (s: string) => Date.parse(s)

function fakeClock(start: string) {
  let now = U(start)
  return { clock: () => now, set: (s: string) => (now = U(s)), advance: (ms: number) => (now += ms) }
}

interface LogLine {
  level: string
  o: Record<string, unknown>
}
function captureLog(): Logger & { lines: LogLine[] } {
  const lines: LogLine[] = []
  return {
    lines,
    info: (o) => lines.push({ level: 'info', o }),
    warn: (o) => lines.push({ level: 'warn', o }),
    error: (o) => lines.push({ level: 'error', o }),
  }
}

const quotas: PgQuota[] = []
t.teardown(async () => {
  for (const q of quotas) await q.close().catch(silent)
})
function quota(clock: () => number, o: Partial<PgQuotaOptions> = {}, db: postgres.Sql = sql, log: Logger = captureLog()): PgQuota {
  const q = new PgQuota(db, clock, log, { listen: false, prefetch: 0, ...o })
  quotas.push(q)
  return q
}

async function account(daily: number, monthly: number): Promise<string> {
  const [r] = await sql<{ id: string }[]>`INSERT INTO accounts (name, daily_limit, monthly_limit) VALUES ('quota test', ${daily}, ${monthly}) RETURNING id::text AS id`
  return r.id
}

function principal(accountId: string, quotaExempt = false): Principal {
  return { accountId, userId: null, method: 'api_key', credentialId: 'osk_test', quotaExempt }
}

/** A proxied connection's two sockets end together, whichever side ends or fails first, and leave `sockets`. */
function endTogether(client: net.Socket, upstream: net.Socket, sockets: Set<net.Socket>): void {
  const end = () => {
    client.destroy()
    upstream.destroy()
    sockets.delete(client)
    sockets.delete(upstream)
  }
  client.on('error', end).on('close', end)
  upstream.on('error', end).on('close', end)
}

/** A new account with these limits, a quota engine (options `o`) on a fake clock starting at `at`, and the account's principal. */
async function scenario(at: string, daily: number, monthly: number, o: Partial<PgQuotaOptions> = {}) {
  const c = fakeClock(at)
  const id = await account(daily, monthly)
  return { c, id, q: quota(c.clock, o), p: principal(id) }
}

/** Stored counters: { 'day 2028-02-29': 5, 'month 2028-02-01': 5 } */
async function stored(accountId: string): Promise<Record<string, number>> {
  const rows = await sql<{ k: string; used: string }[]>`
    SELECT window_kind || ' ' || to_char(window_start AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS k, used::text AS used
    FROM quota_usage WHERE account_id = ${accountId}::bigint ORDER BY window_kind, window_start`
  return Object.fromEntries(rows.map((r) => [r.k, Number(r.used)]))
}

async function charges(q: PgQuota, p: Principal, n: number): Promise<QuotaCharge[]> {
  const out: QuotaCharge[] = []
  for (let i = 0; i < n; i++) out.push(await q.charge(p))
  return out
}

const epoch = (s: string) => String(U(s) / 1000)

async function rejection(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p
  } catch (e) {
    if (e instanceof ApiError) return e
    throw e
  }
  throw new Error('expected a rejection')
}

// ---- tests -------------------------------------------------------------------------------------------

t.test('daily limit: counted in both windows, 429 at the limit consumes nothing', async (t) => {
  const { c, id, q, p } = await scenario('2028-02-29T23:59:00Z', 5, 50) // leap day, last minute
  const ok = await charges(q, p, 5)
  t.same(ok.map((r) => r.allowed), [true, true, true, true, true])
  t.same(ok.map((r) => r.headers['X-RateLimit-Remaining']), ['4', '3', '2', '1', '0'], 'remaining after each request')
  t.same(ok[0].headers['X-RateLimit-Limit'], '5', 'the daily window is closest to exhaustion')
  t.equal(ok[0].headers['X-RateLimit-Reset'], epoch('2028-03-01T00:00:00Z'))
  t.equal(ok[4].headers.RateLimit, '"daily";r=0;t=60, "monthly";r=45;t=60')
  t.equal(ok[4].headers['RateLimit-Policy'], `"daily";q=5;w=86400, "monthly";q=50;w=${29 * 86400}`)

  const no = await q.charge(p)
  t.equal(no.allowed, false)
  t.equal(no.error?.status, 429)
  t.equal(no.error?.message, 'Rate limit exceeded. Retry after 60 seconds.')
  t.equal(no.error?.extras.retryAfterSeconds, 60)
  t.same(
    { l: no.headers['X-RateLimit-Limit'], r: no.headers['X-RateLimit-Remaining'], s: no.headers['X-RateLimit-Reset'] },
    { l: '5', r: '0', s: epoch('2028-03-01T00:00:00Z') },
    'the blocking (daily) window',
  )
  t.same(no.window, { name: 'daily', limit: 5, remaining: 0, resetAt: '2028-03-01T00:00:00Z', retryAfterSeconds: 60 })
  const more = await charges(q, p, 20)
  t.ok(more.every((r) => !r.allowed), 'still throttled (answered locally)')

  const q2 = quota(c.clock, { blockedRecheckMs: 0 })
  const more2 = await Promise.all(Array.from({ length: 20 }, () => q2.charge(p)))
  t.ok(more2.every((r) => !r.allowed && r.error?.status === 429), 'another process: throttled by the database')
  await q.returnAll()
  t.same(await stored(id), { 'day 2028-02-29': 5, 'month 2028-02-01': 5 }, 'exactly 5 stored; the 429s consumed nothing')
  t.equal(q.stats.rejected + q2.stats.rejected, 41)
})

t.test('day rollover resets the daily count but not the monthly; then the month blocks', async (t) => {
  const { c, id, q, p } = await scenario('2027-06-15T23:59:59Z', 3, 5) // last second of a day
  t.same((await charges(q, p, 3)).map((r) => r.allowed), [true, true, true])
  const blocked = await q.charge(p)
  t.equal(blocked.allowed, false)
  t.equal(blocked.error?.extras.retryAfterSeconds, 1, 'one second to midnight')
  t.equal(blocked.headers['X-RateLimit-Limit'], '3')

  c.advance(1000) // 2027-06-16T00:00:00Z
  const next = await charges(q, p, 2)
  t.same(next.map((r) => r.allowed), [true, true], 'a new day')
  t.same(next.map((r) => [r.headers['X-RateLimit-Limit'], r.headers['X-RateLimit-Remaining']]), [['5', '1'], ['5', '0']], 'the monthly window is now closest to exhaustion')
  const monthBlocked = await q.charge(p)
  t.equal(monthBlocked.allowed, false)
  t.same(
    [monthBlocked.headers['X-RateLimit-Limit'], monthBlocked.headers['X-RateLimit-Remaining'], monthBlocked.headers['X-RateLimit-Reset']],
    ['5', '0', epoch('2027-07-01T00:00:00Z')],
    'blocked by the monthly window although the daily has room',
  )
  t.equal(monthBlocked.error?.extras.retryAfterSeconds, 15 * 86400, 'Retry-After: until July 1st')
  t.match(monthBlocked.headers.RateLimit, /^"daily";r=1;t=86400, "monthly";r=0;t=1296000$/)

  c.set('2027-06-30T23:59:59Z') // last second of the month: still blocked
  t.equal((await q.charge(p)).error?.extras.retryAfterSeconds, 1)
  c.set('2027-07-01T00:00:00Z')
  t.equal((await q.charge(p)).allowed, true, 'the full allowance returns at the monthly reset')
  t.same(await stored(id), { 'day 2027-06-15': 3, 'day 2027-06-16': 2, 'day 2027-07-01': 1, 'month 2027-06-01': 5, 'month 2027-07-01': 1 })
})

t.test('year end: both windows reset at 00:00 UTC on January 1st', async (t) => {
  const { c, id, q, p } = await scenario('2027-12-31T23:59:59.999Z', 10, 2)
  t.same((await charges(q, p, 2)).map((r) => r.allowed), [true, true])
  const b = await q.charge(p)
  t.equal(b.allowed, false)
  t.equal(b.window?.name, 'monthly')
  t.equal(b.headers['X-RateLimit-Reset'], epoch('2028-01-01T00:00:00Z'))
  t.equal(b.error?.extras.retryAfterSeconds, 1, 'rounded up to one second')
  c.advance(1)
  const n = await q.charge(p)
  t.equal(n.allowed, true)
  t.equal(n.headers['X-RateLimit-Reset'], epoch('2028-02-01T00:00:00Z'), 'new month (closest to exhaustion: 1 left)')
  t.same(await stored(id), { 'day 2027-12-31': 2, 'day 2028-01-01': 1, 'month 2027-12-01': 2, 'month 2028-01-01': 1 })
})

t.test('leap day: February 28 → 29 is a new day in the same month; March 1 a new month', async (t) => {
  const { c, id, q, p } = await scenario('2028-02-28T23:59:59Z', 1, 3)
  t.equal((await q.charge(p)).allowed, true)
  const b = await q.charge(p)
  t.equal(b.window?.name, 'daily')
  t.equal(b.headers['X-RateLimit-Reset'], epoch('2028-02-29T00:00:00Z'))
  c.advance(1000)
  const leap = await q.charge(p)
  t.equal(leap.allowed, true, 'Feb 29 is a day of its own')
  t.equal(leap.headers['RateLimit-Policy'], `"daily";q=1;w=86400, "monthly";q=3;w=${29 * 86400}`)
  const b2 = await q.charge(p)
  t.equal(b2.allowed, false)
  t.equal(b2.headers['X-RateLimit-Reset'], epoch('2028-03-01T00:00:00Z'), 'the day after the leap day is March 1st')
  c.set('2028-03-01T00:00:00Z')
  t.equal((await q.charge(p)).allowed, true)
  t.same(await stored(id), { 'day 2028-02-28': 1, 'day 2028-02-29': 1, 'day 2028-03-01': 1, 'month 2028-02-01': 2, 'month 2028-03-01': 1 })
})

t.test('monthly limit blocks while the daily window has room (and headers say so)', async (t) => {
  const { c, id, q, p } = await scenario('2027-03-10T08:00:00Z', 100, 3)
  const ok = await charges(q, p, 3)
  t.same(ok.map((r) => r.headers['X-RateLimit-Limit']), ['3', '3', '3'], 'monthly window is closest to exhaustion')
  const b = await q.charge(p)
  t.equal(b.allowed, false)
  t.equal(b.window?.name, 'monthly')
  t.equal(b.error?.extras.retryAfterSeconds, (U('2027-04-01T00:00:00Z') - U('2027-03-10T08:00:00Z')) / 1000)
  t.equal(b.headers.RateLimit, `"daily";r=97;t=${16 * 3600}, "monthly";r=0;t=${(U('2027-04-01T00:00:00Z') - c.clock()) / 1000}`)
})

t.test('leases: units are bound to their windows and go back to them', async (t) => {
  const { c, id, q, p } = await scenario('2027-05-31T23:59:59Z', 1000, 10_000, { prefetch: 10 })
  t.equal((await q.charge(p)).headers['X-RateLimit-Remaining'], '999', 'remaining as the client sees it')
  t.equal(q.localUnits(id), 10, 'prefetched 10 units')
  t.same(await stored(id), { 'day 2027-05-31': 11, 'month 2027-05-01': 11 }, 'leased units are counted in the database')
  const st = await q.state(p)
  t.equal(st.body.daily.remaining, 999, 'state counts unused local units as not used')
  c.advance(1000) // June 1st: new day AND new month
  t.equal((await q.charge(p)).allowed, true)
  await q.returnAll()
  t.same(
    await stored(id),
    { 'day 2027-05-31': 1, 'day 2027-06-01': 1, 'month 2027-05-01': 1, 'month 2027-06-01': 1 },
    'unused units went back to the windows they were leased for',
  )
  t.ok(q.stats.returnedUnits >= 20)
})

t.test('idle leases are returned by the sweeper; grants shrink near the limit', async (t) => {
  const { c, id, q, p } = await scenario('2027-08-01T12:00:00Z', 30, 1000, { prefetch: 50, idleReturnMs: 1000 })
  await q.charge(p)
  t.equal(q.localUnits(id), 2, 'prefetch trimmed to 10 % of what remains: floor(29 × 0.1) = 2')
  c.advance(999)
  q.sweep()
  t.equal(q.localUnits(id), 2, 'not idle yet')
  c.advance(1)
  q.sweep()
  t.equal(q.localUnits(id), 0, 'returned after 1 s without use')
  await q.returnAll()
  t.same(await stored(id), { 'day 2027-08-01': 1, 'month 2027-08-01': 1 })
  // Drain to the limit: every unit must be usable, none lost.
  let allowed = 1
  for (;;) {
    const r = await q.charge(p)
    if (!r.allowed) break
    allowed++
  }
  t.equal(allowed, 30, 'exactly the limit')
  await q.returnAll()
  t.same(await stored(id), { 'day 2027-08-01': 30, 'month 2027-08-01': 30 })
})

t.test('state() is free and well-formed', async (t) => {
  const { c, id, q, p } = await scenario('2027-09-15T06:30:00Z', 10, 100)
  await charges(q, p, 3)
  const before = await stored(id)
  const states = await Promise.all(Array.from({ length: 25 }, () => q.state(p)))
  for (let i = 0; i < 5; i++) states.push(await q.state(p))
  t.same(await stored(id), before, 'state reads consume nothing')
  t.same(states[0].body, {
    daily: { limit: 10, remaining: 7, resetAt: '2027-09-16T00:00:00Z' },
    monthly: { limit: 100, remaining: 97, resetAt: '2027-10-01T00:00:00Z' },
  })
  t.same(states[29].body, states[0].body)
  t.equal(states[0].headers['X-RateLimit-Remaining'], '7')
  t.equal((await q.charge(p)).headers['X-RateLimit-Remaining'], '6', 'the next charge continues from there')
  // Exhausted: state still answers, remaining 0.
  await charges(q, p, 6)
  t.equal((await q.charge(p)).allowed, false)
  const s = await q.state(p)
  t.equal(s.body.daily.remaining, 0)
  t.equal(s.headers['X-RateLimit-Limit'], '10')
  // Another process sees the same.
  t.same((await quota(c.clock).state(p)).body, s.body)
})

t.test('refund gives a counted unit back (request failed after charging)', async (t) => {
  const { c, id, q, p } = await scenario('2027-09-15T06:30:00Z', 2, 100)
  const a = await q.charge(p)
  a.refund?.()
  a.refund?.() // idempotent
  t.same((await charges(q, p, 3)).map((r) => r.allowed), [true, true, false], 'the refunded unit was reused')
  await q.returnAll()
  t.same(await stored(id), { 'day 2027-09-15': 2, 'month 2027-09-01': 2 })
})

t.test('exempt principals are allowed and never counted; usage is logged', async (t) => {
  const c = fakeClock('2027-10-01T00:00:00Z')
  const id = await account(2, 10)
  const log = captureLog()
  const q = quota(c.clock, {}, sql, log)
  const agent = principal(id, true)
  const ex = await Promise.all(Array.from({ length: 20 }, () => q.charge(agent)))
  t.ok(ex.every((r) => r.allowed && r.refund === undefined), 'all allowed, nothing to refund')
  t.same(await stored(id), {}, 'nothing counted')
  t.equal(ex[0].headers['X-RateLimit-Limit'], '2', 'headers still describe the account')
  t.equal(ex[0].headers['X-RateLimit-Remaining'], '2')
  t.equal(q.stats.exempt, 20)
  t.ok(log.lines.some((l) => l.o.msg === 'quota exempt usage' && l.o.accountId === id), 'a log line records exempt usage')
  // The account's own quota runs out; the exempt agent still passes.
  await charges(q, principal(id), 2)
  t.equal((await q.charge(principal(id))).allowed, false)
  c.advance(5000) // past the lease lifetime: the exempt path re-reads the state
  const after = await q.charge(agent)
  t.equal(after.allowed, true)
  t.equal(after.headers['X-RateLimit-Remaining'], '0')
  await q.close()
  t.ok(log.lines.some((l) => l.o.msg === 'quota exempt usage' && l.o.requests === 21), 'aggregated count logged on close')
  t.same(await stored(id), { 'day 2027-10-01': 2, 'month 2027-10-01': 2 })
})

t.test('limit changes apply to the next request', async (t) => {
  t.test('LISTEN/NOTIFY (another process changed the limit)', async (t) => {
    const c = fakeClock('2027-11-11T11:00:00Z')
    const id = await account(1000, 10_000)
    const q = quota(c.clock, { listen: true, prefetch: 20 }, pool(url, { max: 2 }))
    await q.ready()
    const p = principal(id)
    t.equal((await q.charge(p)).headers['X-RateLimit-Limit'], '1000')
    t.equal(q.localUnits(id), 20, 'holding a lease')
    await sql`UPDATE accounts SET daily_limit = 3 WHERE id = ${id}::bigint` // the admin CLI, another process
    for (let i = 0; i < 200 && q.localUnits(id) > 0; i++) await new Promise((r) => setTimeout(r, 10))
    t.equal(q.localUnits(id), 0, 'lease dropped on the notification')
    const r = await charges(q, p, 3)
    t.same(r.map((x) => [x.allowed, x.headers['X-RateLimit-Limit'], x.headers['X-RateLimit-Remaining']]), [[true, '3', '1'], [true, '3', '0'], [false, '3', '0']])
    await sql`UPDATE accounts SET daily_limit = 4 WHERE id = ${id}::bigint`
    for (let i = 0; i < 200; i++) {
      const x = await q.charge(p)
      if (x.allowed) {
        t.equal(x.headers['X-RateLimit-Limit'], '4', 'raised limit applies although this process had cached the 429')
        break
      }
      await new Promise((r) => setTimeout(r, 10))
    }
    await q.returnAll()
    t.same(await stored(id), { 'day 2027-11-11': 4, 'month 2027-11-01': 4 })
  })

  t.test('invalidate() (this process changed the limit; embedded mode)', async (t) => {
    const { c, id, q, p } = await scenario('2027-11-11T11:00:00Z', 1000, 10_000, { prefetch: 20 })
    await q.charge(p)
    await sql`UPDATE accounts SET monthly_limit = 2 WHERE id = ${id}::bigint`
    q.invalidate(id)
    const r = await charges(q, p, 2)
    t.same(r.map((x) => [x.allowed, x.headers['X-RateLimit-Limit']]), [[true, '2'], [false, '2']])
  })

  t.test('without notification: at the latest after the lease lifetime', async (t) => {
    const { c, id, q, p } = await scenario('2027-11-11T11:00:00Z', 1000, 10_000, { prefetch: 20, leaseTtlMs: 2000 })
    await q.charge(p)
    await sql`UPDATE accounts SET daily_limit = 7 WHERE id = ${id}::bigint`
    c.advance(2000)
    t.equal((await q.charge(p)).headers['X-RateLimit-Limit'], '7')
  })
})

t.test('a missing account is a 401, not a 500; the process keeps serving', async (t) => {
  const c = fakeClock('2027-11-11T11:00:00Z')
  const q = quota(c.clock, { prefetch: 5 })
  for (const bad of ['999999999', 'abc', '', '0', '-1', '1 OR 1=1']) {
    const e = await rejection(q.charge(principal(bad)))
    t.equal(e.status, 401, `charge for account ${JSON.stringify(bad)}`)
    t.equal((await rejection(q.state(principal(bad)))).status, 401, `state for account ${JSON.stringify(bad)}`)
  }
  const id = await account(10, 10)
  await q.charge(principal(id))
  await sql`DELETE FROM accounts WHERE id = ${id}::bigint`
  q.invalidate(id) // what the NOTIFY on deletion does
  t.equal((await rejection(q.charge(principal(id)))).status, 401, 'account deleted while its key is still cached')
  const other = await account(10, 10)
  t.equal((await q.charge(principal(other))).allowed, true)
})

// ---- faults: a TCP proxy in front of PostgreSQL that can stop or hang ------------------------------------

interface Proxy {
  port: number
  stop(): Promise<void>
  start(): Promise<void>
  hang(on: boolean): void
}

/** The test database's URL, reached through a proxy listening on `port` of this machine. */
function throughProxy(port: number): string {
  const u = new URL(url)
  u.hostname = '127.0.0.1'
  u.port = String(port)
  return u.toString()
}

async function proxyTo(target: URL): Promise<Proxy> {
  const sockets = new Set<net.Socket>()
  let hanging = false
  const held: (() => void)[] = []
  let server: net.Server | undefined
  let port = 0
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server = net.createServer((client) => {
        const upstream = net.connect(Number(target.port || 5432), target.hostname)
        sockets.add(client)
        sockets.add(upstream)
        const forward = (from: net.Socket, to: net.Socket) =>
          from.on('data', (d) => {
            if (hanging) held.push(() => to.write(d))
            else to.write(d)
          })
        forward(client, upstream)
        forward(upstream, client)
        endTogether(client, upstream, sockets)
      })
      server.once('error', reject)
      server.listen(port, '127.0.0.1', () => {
        port = (server!.address() as net.AddressInfo).port
        resolve()
      })
    })
  await listen()
  return {
    get port() {
      return port
    },
    async stop() {
      for (const s of sockets) s.destroy()
      await new Promise<void>((r) => server!.close(() => r()))
    },
    start: listen,
    hang(on: boolean) {
      hanging = on
      if (!on) for (const f of held.splice(0)) f()
    },
  }
}

t.test('database faults: 503, the process keeps serving, nothing double-counted', async (t) => {
  const target = new URL(url)
  const proxy = await proxyTo(target)
  t.teardown(() => proxy.stop().catch(silent))
  const db = pool(throughProxy(proxy.port), { max: 2, connect_timeout: 2 })
  const c = fakeClock('2027-12-01T10:00:00Z')
  const id = await account(1000, 1000)
  const log = captureLog()
  const q = quota(c.clock, { leaseTimeoutMs: 500 }, db, log)
  const p = principal(id)
  let allowed = 0
  const count = (r: QuotaCharge) => {
    if (r.allowed) allowed++
    return r
  }
  for (const r of await charges(q, p, 5)) count(r)
  t.equal(allowed, 5)

  await proxy.stop() // the database goes away (connections cut, new ones refused)
  const down = await Promise.allSettled(Array.from({ length: 10 }, () => q.charge(p).then(count)))
  for (const d of down) {
    if (d.status === 'rejected') {
      t.ok(d.reason instanceof ApiError && d.reason.status === 503, `503 while the database is down (${(d.reason as Error).message})`)
    } else t.fail('no charge can succeed without the database')
  }
  t.ok(log.lines.some((l) => l.level === 'error'), 'the failure is logged')

  await proxy.start() // back (same port)
  let back = false
  for (let i = 0; i < 50 && !back; i++) {
    try {
      back = count(await q.charge(p)).allowed
    } catch {
      await new Promise((r) => setTimeout(r, 100))
    }
  }
  t.ok(back, 'serving again once the database is back')

  proxy.hang(true) // the database stops answering mid-request
  const hung = await Promise.allSettled(Array.from({ length: 5 }, () => q.charge(p).then(count)))
  t.ok(hung.every((h) => h.status === 'rejected' && (h.reason as ApiError).status === 503), '503 after the lease timeout')
  proxy.hang(false) // the statement runs after all; its late grant must go back
  for (let i = 0; i < 100 && q.stats.returnedUnits === 0; i++) await new Promise((r) => setTimeout(r, 20))
  for (const r of await charges(q, p, 3)) count(r)
  await q.returnAll()
  const s = await stored(id)
  t.equal(s['day 2027-12-01'], allowed, `stored count equals the requests admitted (${allowed})`)
  t.equal(s['month 2027-12-01'], allowed)
})

t.test('after close(): 503, and every unused unit is back', async (t) => {
  const c = fakeClock('2027-12-24T10:00:00Z')
  const id = await account(1000, 1000)
  const q = quota(c.clock, { prefetch: 30 })
  await charges(q, principal(id), 4)
  await q.close()
  t.equal((await rejection(q.charge(principal(id)))).status, 503)
  t.same(await stored(id), { 'day 2027-12-24': 4, 'month 2027-12-01': 4 })
})

t.test('in-doubt calls (migration 003): a return or lease whose answer is lost is settled exactly once', async (t) => {
  t.test('SQL: the same return id twice is applied once; a cancel settles a lease either way', async (t) => {
    const id = await account(1000, 1000)
    const day = '2027-11-02T00:00:00Z'
    const month = '2027-11-01T00:00:00Z'
    const lease = async (leaseId: string, need: number, giveBack = 0) =>
      (await sql<{ granted: number }[]>`SELECT granted FROM orgscan_quota_lease(${leaseId}::uuid, ${id}::bigint, ${day}::timestamptz, ${month}::timestamptz, ${need}, 0, 0.1::float8, false, ${giveBack})`)[0]!.granted
    const ret = async (rid: string, units: number) =>
      (await sql<{ ok: boolean }[]>`SELECT orgscan_quota_return(${rid}::uuid, ${id}::bigint, ${day}::timestamptz, ${month}::timestamptz, ${units}) AS ok`)[0]!.ok
    const cancel = async (leaseId: string) =>
      (await sql<{ applied: boolean; returned: number }[]>`SELECT applied, returned FROM orgscan_quota_lease_cancel(${leaseId}::uuid, ${id}::bigint, ${day}::timestamptz, ${month}::timestamptz)`)[0]!
    const used = async () => (await stored(id))['day 2027-11-02']

    t.equal(await lease(randomUUID(), 10), 10)
    const rid = randomUUID()
    t.equal(await ret(rid, 4), true, 'first return applied')
    t.equal(await ret(rid, 4), false, 'the same return again: a no-op')
    t.equal(await used(), 6)
    t.equal(await ret(randomUUID(), 4), true, 'another return (another id) is applied')
    t.equal(await used(), 2)
    t.same(await stored(id), { 'day 2027-11-02': 2, 'month 2027-11-01': 2 }, 'both windows')

    const applied = randomUUID()
    t.equal(await lease(applied, 5, 1), 5, 'a lease (giving 1 back) whose answer we pretend was lost')
    t.equal(await used(), 6)
    t.same(await cancel(applied), { applied: true, returned: 5 }, 'cancel: it was applied; its grant goes back')
    t.same(await cancel(applied), { applied: true, returned: 0 }, 'cancel again: nothing more')
    t.equal(await used(), 1, 'its grant back; its giveBack stays applied')

    const never = randomUUID()
    t.same(await cancel(never), { applied: false, returned: 0 }, 'cancel first: not applied (tombstone)')
    t.equal(await lease(never, 5, 1), 0, 'the lease arriving after its cancel grants nothing')
    t.equal(await used(), 1, '… and applies nothing, not even its giveBack')
    t.same(await cancel(never), { applied: false, returned: 0 }, 'cancel again: still not applied')
    t.same(await stored(id), { 'day 2027-11-02': 1, 'month 2027-11-01': 1 })
  })

  t.test('engine: answers lost after commit (connection cut) — stored count stays exact', async (t) => {
    const proxy = await answerLosingProxy(new URL(url))
    t.teardown(() => proxy.stop())
    const db = pool(throughProxy(proxy.port), { max: 1, connect_timeout: 2 })
    const c = fakeClock('2027-11-03T10:00:00Z')
    const id = await account(1000, 1000)
    const log = captureLog()
    const q = quota(c.clock, { prefetch: 30 }, db, log)
    const p = principal(id)
    await charges(q, p, 4)
    const leased = (await stored(id))['day 2027-11-03']
    t.ok(leased > 4, `units leased ahead (${leased})`)

    // A return that commits but whose answer never arrives: resent under its id, applied once.
    proxy.loseAnswers(true)
    await q.returnAll()
    proxy.loseAnswers(false)
    t.equal(await proxy.lost(), 1, 'one answer was lost')
    t.same(await stored(id), { 'day 2027-11-03': 4, 'month 2027-11-01': 4 }, 'the return was applied (once)')
    t.ok(log.lines.some((l) => l.o.msg === 'quota: returning unused units failed; will retry'), 'the engine did not know')
    await q.returnAll() // the resend: a no-op in the database (without return ids it would have under-counted)
    t.same(await stored(id), { 'day 2027-11-03': 4, 'month 2027-11-01': 4 }, 'the resend changed nothing')
    t.equal(q.stats.droppedReturnUnits, 0, 'nothing given up')

    // A lease that commits but whose answer never arrives: the request gets a 503; the lease is cancelled.
    proxy.loseAnswers(true)
    const err = await rejection(q.charge(p))
    proxy.loseAnswers(false)
    t.equal(err.status, 503, 'the waiting request fails (nothing admitted)')
    t.ok((await stored(id))['day 2027-11-03'] > 4, 'the lease was applied')
    await q.returnAll()
    t.same(await stored(id), { 'day 2027-11-03': 4, 'month 2027-11-01': 4 }, 'cancelled by its id: its units are back')
    t.ok(log.lines.some((l) => l.o.msg === 'quota: lease with a lost answer settled' && l.o.applied === true))

    // And the engine keeps serving.
    t.ok((await q.charge(p)).allowed)
    await q.returnAll()
    t.same(await stored(id), { 'day 2027-11-03': 5, 'month 2027-11-01': 5 })
  })
})

const SELECT_1_COMPLETE = Buffer.concat([Buffer.from('C'), Buffer.from([0, 0, 0, 13]), Buffer.from('SELECT 1\0')])

/** A TCP proxy that, when told to, lets a statement through but cuts the connection instead of answering. */
async function answerLosingProxy(target: URL) {
  const sockets = new Set<net.Socket>()
  let losing = false
  let lost = 0
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname)
    sockets.add(client).add(upstream)
    client.on('data', (d) => upstream.write(d))
    upstream.on('data', (d) => {
      // The statement's result (CommandComplete "SELECT 1"; not a Describe answer) is never delivered: the
      // connection is cut a moment later, after the commit. One answer per loseAnswers(true).
      if (!losing || !d.includes(SELECT_1_COMPLETE)) return void client.write(d)
      losing = false
      lost++
      upstream.pause()
      setTimeout(() => {
        client.destroy()
        upstream.destroy()
      }, 100)
    })
    endTogether(client, upstream, sockets)
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  return {
    port: (server.address() as net.AddressInfo).port,
    loseAnswers(on: boolean) {
      losing = on
    },
    lost: async () => lost,
    async stop() {
      for (const s of sockets) s.destroy()
      await new Promise<void>((r) => server.close(() => r()))
    },
  }
}
