/**
 * Fair share over the wire (docs/adr/0100-fair-share.md), with the read pool made busy by slow statements sent to it
 * directly (`pg_sleep`: every connection taken, on PostgreSQL and on the embedded database alike):
 * - an org's state whose entry has expired is looked up without waiting behind those reads;
 * - an account's answers from the response cache do not wait for its own database turn;
 * - a read that cannot start within ORGSCAN_ACCOUNT_QUEUE_WAIT_MS (1 s by default) is a prompt 429
 *   `concurrency_limited` with `Retry-After: 1`, not an answer seconds later.
 * The queue's order on its own: test/runtime/fair-share.test.ts; under an attack: test/alone/fairness.test.ts.
 */
import type { Test } from 'tap'
import { t } from '../helpers/file-test.ts'
import { startTestService, type TestService } from '../helpers/service.ts'
import type { Config } from '../../runtime/platform/config.ts'

const MB = 1024 * 1024
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function service(t: Test, config: Partial<Config>): Promise<{ ts: TestService; base: string; auth: string; accountId: string }> {
  const ts = await startTestService(t, { config: { authCacheMs: 5000, ...config } })
  const org = ts.seed.orgs.find((o) => o.large)!
  return { ts, base: `/v1/orgs/${org.salesforceId}`, auth: await ts.keyHeader(org.accountId), accountId: org.accountId }
}

/**
 * Warms what a request needs besides its read: the key verified, the org's state known, and (a burst of requests) a
 * quota lease large enough for the rest of the test, so that nothing but the read itself needs the database.
 */
async function warm(ts: TestService, path: string, auth: string): Promise<void> {
  for (let i = 0; i < 3; i++) {
    const rs = await Promise.all(Array.from({ length: 30 }, () => ts.get(path, auth)))
    if (rs.some((r) => r.status !== 200)) throw new Error(`warming ${path}: ${rs.map((r) => r.status)}`)
  }
}

/** Takes every connection of the read pool with a statement of `seconds`; `ended` resolves when they all have. */
async function busyReadPool(ts: TestService, seconds: number): Promise<{ ended: Promise<unknown> }> {
  const ended = Promise.all(ts.svc.db.reads.map((c) => c`SELECT pg_sleep(${seconds})`.execute()))
  await sleep(150) // sent, and running
  return { ended }
}

/** A request's answer and how long it took, ms. */
async function timed(ts: TestService, path: string, auth: string) {
  const t0 = performance.now()
  const r = await ts.get(path, auth)
  return { ...r, ms: performance.now() - t0 }
}

t.test("an expired org-state entry is looked up without waiting behind the pool's reads", async (t) => {
  const { ts, base, auth } = await service(t, { cache: { maxBytes: 64 * MB, orgStateMs: 300 } })
  const path = `${base}/fields?limit=5`
  await warm(ts, path, auth)
  await sleep(400) // the org's entry has expired: the next request needs its lookup (or its refresh)
  const before = ts.svc.hot.orgs.lookups
  const { ended } = await busyReadPool(ts, 3)
  const r = await timed(ts, path, auth)
  t.equal(r.status, 200, 'answered')
  t.ok(ts.svc.hot.orgs.lookups > before, 'the org was looked up again')
  t.ok(r.ms < 1500, `in ${r.ms.toFixed(0)} ms, while every read connection is busy for 3 s`)
  await ended
})

t.test("an account's cached answers do not wait for its own database turn", async (t) => {
  const { ts, base, auth } = await service(t, { cache: { maxBytes: 64 * MB, orgStateMs: 60_000 }, fairShare: { perAccount: 1, queueDepth: 100, maxWaitMs: 10_000 } })
  const cached = `${base}/fields?limit=5`
  await warm(ts, cached, auth)
  const { ended } = await busyReadPool(ts, 3)
  // The account's one turn: a read that waits behind the busy pool for the next 3 s.
  let slowDone = false
  const slow = ts.get(`${base}/fields?limit=7&offset=3`, auth).then((r) => ((slowDone = true), r))
  await sleep(200)
  const hit = await timed(ts, cached, auth)
  t.equal(hit.status, 200, 'the cached answer')
  t.notOk(slowDone, "while the account's own read still waits for the database")
  t.ok(hit.ms < 1500, `in ${hit.ms.toFixed(0)} ms`)
  t.equal((await slow).status, 200, 'and the read is answered once the pool is free')
  await ended
})

t.test('a read that cannot start within ORGSCAN_ACCOUNT_QUEUE_WAIT_MS is a prompt 429 with Retry-After, and costs nothing', async (t) => {
  const { ts, base, auth } = await service(t, { cache: { maxBytes: 64 * MB, orgStateMs: 60_000 } })
  t.equal(ts.svc.ctx.config.fairShare.maxWaitMs, 1000, 'the default bound: 1 s')
  await warm(ts, `${base}/fields?limit=5`, auth)
  const { ended } = await busyReadPool(ts, 4)
  // The account's share (one connection less than the pool on PostgreSQL, one on the embedded database), each with as
  // many reads as it may pipeline on it: reads waiting behind the busy pool.
  const share = (ts.svc.db.kind === 'embedded' ? 1 : ts.svc.ctx.config.poolSize - 1) * ts.svc.fairShare.depth
  const running = Array.from({ length: share }, (_, i) => ts.get(`${base}/fields?limit=9&offset=${i}`, auth))
  await sleep(200)
  const before = await ts.get(`${base}/fields?limit=5`, auth)
  const refused = await timed(ts, `${base}/fields?limit=11`, auth)
  t.equal(refused.status, 429, 'refused')
  t.equal(refused.body?.error?.code, 'concurrency_limited')
  t.equal(refused.headers.get('retry-after'), '1', 'Retry-After: 1')
  t.ok(refused.ms >= 900 && refused.ms < 3000, `after about the bound (${refused.ms.toFixed(0)} ms), not when the pool frees (4 s)`)
  // Two answers from the response cache around it, each charged one unit: the refusal between them costs nothing.
  const after = await ts.get(`${base}/fields?limit=5`, auth)
  t.equal(Number(after.headers.get('x-ratelimit-remaining')), Number(before.headers.get('x-ratelimit-remaining')) - 1, 'not charged')
  for (const r of await Promise.all(running)) t.equal(r.status, 200, 'the reads that had their turn are answered')
  await ended
})
