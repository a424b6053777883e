/**
 * Exactness under concurrency ("the heart"): several quota engines — each with its own
 * connection pool, as separate service processes would have — share one PostgreSQL database. Never more
 * successful charges than the limit, no lost counts, and the stored count equals what was admitted.
 * Also once on embedded PGlite (single process, one connection).
 *
 * A fresh database per file on TEST_DATABASE_URL; without it the PostgreSQL part is skipped, saying so (the PostgreSQL
 * run covers it).
 */
import { t } from '../helpers/file-test.ts'
import postgres from 'postgres'
import { migrate } from '../../runtime/platform/db/migrate.ts'
import { createTestDatabase, NEEDS_POSTGRES, postgresForTest } from '../helpers/test-db.ts'
import type { Logger } from '../../runtime/core/log.ts'
import type { Principal } from '../../runtime/core/principal.ts'
import type { QuotaCharge } from '../../runtime/core/quota-types.ts'
import { PgQuota, type PgQuotaOptions } from '../../runtime/platform/quota/pg-quota.ts'

const silent = () => {}
const quietLog: Logger = { info: silent, warn: silent, error: silent }

function principal(accountId: string): Principal {
  return { accountId, userId: null, method: 'api_key', credentialId: 'osk_test', quotaExempt: false }
}

async function createAccount(sql: postgres.Sql, daily: number, monthly: number): Promise<string> {
  const [r] = await sql<{ id: string }[]>`INSERT INTO accounts (name, daily_limit, monthly_limit) VALUES ('concurrency', ${daily}, ${monthly}) RETURNING id::text AS id`
  return r.id
}

async function storedUsed(sql: postgres.Sql, accountId: string): Promise<{ day: number; month: number }> {
  const rows = await sql<{ window_kind: string; used: string }[]>`SELECT window_kind, sum(used)::text AS used FROM quota_usage WHERE account_id = ${accountId}::bigint GROUP BY window_kind`
  const get = (k: string) => Number(rows.find((r) => r.window_kind === k)?.used ?? 0)
  return { day: get('day'), month: get('month') }
}

function tally(results: PromiseSettledResult<QuotaCharge>[]) {
  let allowed = 0
  let limited = 0
  const other: unknown[] = []
  for (const r of results) {
    if (r.status === 'rejected') other.push(r.reason)
    else if (r.value.allowed) allowed++
    else if (r.value.error?.status === 429) limited++
    else other.push(r.value)
  }
  return { allowed, limited, other }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

// ---- PostgreSQL ----------------------------------------------------------------------------------------

t.test('PostgreSQL: several processes on one database', async (t) => {
  const fresh = await postgresForTest()
  if (!fresh) {
    t.plan(0, NEEDS_POSTGRES)
    return
  }
  const pools: postgres.Sql[] = []
  const quotas: PgQuota[] = []
  t.teardown(async () => {
    for (const q of quotas) await q.close().catch(silent)
    for (const p of pools) await p.end({ timeout: 2 }).catch(silent)
    await fresh.drop()
  })
  const sql = postgres(fresh.databaseUrl, { max: 4, onnotice: silent })
  pools.push(sql)
  await migrate(sql)

  /** n engines, each with its own pool (a separate "process"). */
  async function processes(n: number, o: Partial<PgQuotaOptions> = {}): Promise<PgQuota[]> {
    const qs = Array.from({ length: n }, () => {
      const pool = postgres(fresh!.databaseUrl, { max: 4, onnotice: silent })
      pools.push(pool)
      const q = new PgQuota(pool, Date.now, quietLog, { listen: true, ...o })
      quotas.push(q)
      return q
    })
    await Promise.all(qs.map((q) => q.ready()))
    return qs
  }

  for (const [label, daily, monthly] of [
    ['daily limit', 100, 100_000],
    ['monthly limit', 100_000, 100],
    ['equal limits', 100, 100],
  ] as const) {
    t.test(`3 processes, ${label} 100, 300 concurrent charges → exactly 100 allowed`, async (t) => {
      for (let round = 0; round < 3; round++) {
        const id = await createAccount(sql, daily, monthly)
        const qs = await processes(3)
        const p = principal(id)
        const results = await Promise.allSettled(Array.from({ length: 300 }, (_, i) => qs[i % 3].charge(p)))
        const { allowed, limited, other } = tally(results)
        t.same(other, [], 'no errors')
        t.equal(allowed, 100, `round ${round}: 100 allowed`)
        t.equal(limited, 200, `round ${round}: 200 answered 429`)
        for (const q of qs) await q.close()
        t.same(await storedUsed(sql, id), { day: 100, month: 100 }, `round ${round}: stored count exactly 100 in both windows`)
      }
    })
  }

  t.test('2 processes, each with 50 concurrent clients (HTTP-like), adaptive leases: 100 / 200', async (t) => {
    for (let round = 0; round < 3; round++) {
      const id = await createAccount(sql, 100, 10_000)
      const qs = await processes(2)
      const p = principal(id)
      const results: PromiseSettledResult<QuotaCharge>[] = []
      // 150 requests per process, 50 at a time per process (like a client with 50 sockets per server).
      await Promise.all(
        qs.flatMap((q) =>
          Array.from({ length: 50 }, async () => {
            for (let i = 0; i < 3; i++) {
              results.push(...(await Promise.allSettled([q.charge(p)])))
              await sleep(Math.random() * 3)
            }
          }),
        ),
      )
      const { allowed, limited, other } = tally(results)
      t.same(other, [], 'no errors')
      t.equal(allowed, 100, `round ${round}: exactly 100 allowed`)
      t.equal(limited, 200, `round ${round}: 200 answered 429`)
      for (const q of qs) await q.close()
      t.same(await storedUsed(sql, id), { day: 100, month: 100 }, `round ${round}: stored exactly 100`)
    }
  })

  t.test('prefetching processes with staggered traffic: never over, nothing lost after returns', async (t) => {
    const id = await createAccount(sql, 200, 10_000)
    const qs = await processes(3, { prefetch: 8, blockedRecheckMs: 0 })
    const p = principal(id)
    let allowed = 0
    let maxSeen = 0
    const results: PromiseSettledResult<QuotaCharge>[] = []
    await Promise.all(
      Array.from({ length: 60 }, async (_, w) => {
        for (let i = 0; i < 5; i++) {
          await sleep(Math.random() * 10)
          const [r] = await Promise.allSettled([qs[(w + i) % 3].charge(p)])
          results.push(r)
          if (r.status === 'fulfilled' && r.value.allowed) allowed++
          maxSeen = Math.max(maxSeen, allowed)
        }
      }),
    )
    const first = tally(results)
    t.same(first.other, [], 'no errors')
    t.ok(maxSeen <= 200, `never more than the limit (${maxSeen})`)
    // Give every leased-but-unused unit back, then use the rest: the total must be exactly the limit.
    for (const q of qs) await q.returnAll()
    t.equal((await storedUsed(sql, id)).day, allowed, 'stored = admitted once leases are back')
    for (let i = 0; ; i++) {
      const r = await qs[i % 3].charge(p)
      if (!r.allowed) break
      allowed++
    }
    t.equal(allowed, 200, 'exactly the limit over all rounds')
    for (const q of qs) await q.returnAll()
    t.same(await storedUsed(sql, id), { day: 200, month: 200 })
  })

  t.test('hot account, high volume: exact with large leases', async (t) => {
    const id = await createAccount(sql, 5000, 1_000_000)
    const qs = await processes(3)
    const p = principal(id)
    let allowed = 0
    let limited = 0
    await Promise.all(
      qs.flatMap((q) =>
        Array.from({ length: 32 }, async () => {
          for (let i = 0; i < 80; i++) {
            const r = await q.charge(p)
            if (r.allowed) allowed++
            else limited++
          }
        }),
      ),
    )
    t.equal(allowed + limited, 3 * 32 * 80)
    t.ok(allowed <= 5000, `never over (${allowed})`)
    t.ok(allowed >= 5000 - 3 * 200, `at most about a lease per process left unused at the end (${allowed})`)
    const leases = qs.reduce((n, q) => n + q.stats.leases, 0)
    t.ok(leases < allowed / 5, `leases amortise the database calls (${leases} lease calls for ${allowed} units)`)
    for (const q of qs) await q.close()
    t.same(await storedUsed(sql, id), { day: allowed, month: allowed }, 'stored = admitted')
  })
})

// ---- embedded PGlite ------------------------------------------------------------------------------------

t.test('embedded PGlite: one process, limit 100, 300 concurrent charges', async (t) => {
  let open: typeof import('../../runtime/platform/db/connect.ts').openDatabase
  try {
    open = (await import('../../runtime/platform/db/connect.ts')).openDatabase
  } catch (e) {
    t.plan(0, `embedded database unavailable: ${(e as Error).message}`)
    return
  }
  // A copy of the run's migrated template (a new folder would pay PGlite's initdb), embedded whatever TEST_DATABASE_URL says
  const tdb = await createTestDatabase({ template: 'empty', embedded: true })
  const db = await open({ dataDir: tdb.dataDir })
  t.teardown(async () => {
    await db.close()
    await tdb.drop()
  })
  await migrate(db.sql)
  for (const opts of [{}, { prefetch: 10 }] as Partial<PgQuotaOptions>[]) {
    const id = await createAccount(db.sql, 100, 1000)
    const q = new PgQuota(db.sql, Date.now, quietLog, { listen: false, ...opts })
    const results = await Promise.allSettled(Array.from({ length: 300 }, () => q.charge(principal(id))))
    const { allowed, limited, other } = tally(results)
    t.same(other, [], 'no errors')
    t.equal(allowed, 100, `100 allowed (${JSON.stringify(opts)})`)
    t.equal(limited, 200, '200 answered 429')
    await q.close()
    t.same(await storedUsed(db.sql, id), { day: 100, month: 100 }, 'stored exactly 100')
  }
})
