// The fair queue in front of the database (runtime/platform/pipeline/fair-share.ts, docs/adr/0100-fair-share.md): at most the
// pool's turns out, one account never all of them, freed turns to the account with the fewest out and the one served
// longest ago among equals, waits bounded. Over the wire: test/rest/rest-fair-share.test.ts, test/alone/fairness.test.ts.
import { t } from '../helpers/file-test.ts'
import { FairShare, type Release } from '../../runtime/platform/pipeline/fair-share.ts'
import { ApiError } from '../../runtime/core/errors.ts'

const options = { queueDepth: 100, maxWaitMs: 60_000 }

/** Requests of accounts that record the order in which they got their turn. */
function recorder(fs: FairShare) {
  const order: string[] = []
  const held = new Map<string, Release[]>()
  const ask = (account: string) =>
    fs.acquire(account).then((r) => {
      order.push(account)
      ;(held.get(account) ?? held.set(account, []).get(account)!).push(r)
      return r
    })
  /** Gives back the oldest turn `account` holds. */
  const done = (account: string) => held.get(account)!.shift()!()
  /** Gives every turn back, and those of the requests still waiting as they get them: nothing left pending. */
  const finish = async () => {
    for (let i = 0; i < 1000 && !fs.idle; i++) {
      for (const rs of held.values()) while (rs.length) rs.shift()!()
      await settle()
    }
  }
  return { order, ask, done, finish }
}

const settle = () => new Promise((r) => setImmediate(r))

t.test('one account never holds every turn: its share is held below the pool', async (t) => {
  t.equal(new FairShare({ slots: 4, perAccount: 8, ...options }).perAccount, 3, 'asked for 8 of 4: 3')
  t.equal(new FairShare({ slots: 4, perAccount: 2, ...options }).perAccount, 2, 'a smaller share stays')
  t.equal(new FairShare({ slots: 1, perAccount: 5, ...options }).perAccount, 1, 'one connection: one at a time')
  const fs = new FairShare({ slots: 4, perAccount: 4, ...options })
  const { order, ask, finish } = recorder(fs)
  for (let i = 0; i < 6; i++) void ask('A')
  await settle()
  t.same(order, ['A', 'A', 'A'], 'A gets three of the four turns')
  t.same(fs.load('A'), { active: 3, queued: 3 })
  void ask('B')
  await settle()
  t.same(order.at(-1), 'B', 'B finds the fourth at once')
  await finish()
  t.equal(order.length, 7, 'every request served in the end')
})

t.test('accounts are served in turn: the fewest turns out first, then the one served longest ago', async (t) => {
  const fs = new FairShare({ slots: 4, perAccount: 3, ...options })
  const { order, ask, done, finish } = recorder(fs)
  for (let i = 0; i < 3; i++) void ask('A')
  void ask('B')
  await settle()
  t.same(order, ['A', 'A', 'A', 'B'], 'every turn out')
  for (let i = 0; i < 5; i++) void ask('A')
  for (let i = 0; i < 3; i++) void ask('C')
  void ask('B')
  await settle()
  t.equal(order.length, 4, 'the rest wait')
  done('A')
  await settle()
  t.equal(order.at(-1), 'C', 'a freed turn of A goes to C (none out), not to A (two out) nor B (one out)')
  done('A')
  await settle()
  t.equal(order.at(-1), 'A', 'A, B and C have one out each: A, whose last turn came before B\'s and C\'s')
  done('A')
  await settle()
  t.equal(order.at(-1), 'B', 'again one out each: B, served longest ago')
  done('B')
  await settle()
  t.equal(order.at(-1), 'C', 'then C')
  t.same(order.slice(4), ['C', 'A', 'B', 'C'], 'in turn')
  await finish()
})

t.test('one connection (embedded): the account whose read ended is not served again before the others waiting', async (t) => {
  const fs = new FairShare({ slots: 1, perAccount: 1, ...options })
  const { order, ask, done, finish } = recorder(fs)
  for (let i = 0; i < 4; i++) void ask('A')
  await settle()
  void ask('B')
  void ask('C')
  await settle()
  t.same(order, ['A'])
  for (const who of ['A', 'B', 'C', 'A', 'A']) {
    done(who)
    await settle()
  }
  t.same(order, ['A', 'B', 'C', 'A', 'A', 'A'], 'A, then B and C, then A again')
  void ask('B')
  await settle()
  done('A')
  await settle()
  t.equal(order.at(-1), 'B', 'a newcomer goes ahead of the account that just read, whose queue is long')
  await finish()
})

t.test('a turn not free within maxWaitMs is a prompt 429 concurrency_limited with Retry-After', async (t) => {
  const fs = new FairShare({ slots: 2, perAccount: 1, queueDepth: 10, maxWaitMs: 150 })
  const a = await fs.acquire('A')
  const b = await fs.acquire('B')
  const t0 = performance.now()
  const err = await fs.acquire('C').then(() => undefined, (e: unknown) => e)
  const waited = performance.now() - t0
  t.ok(err instanceof ApiError && err.code === 'concurrency_limited' && err.status === 429, 'concurrency_limited')
  t.equal((err as ApiError).extras.retryAfterSeconds, 1, 'Retry-After: 1')
  t.ok(waited >= 140 && waited < 2000, `refused after about the bound (${waited.toFixed(0)} ms)`)
  t.ok(fs.load('C').queued === 0 && fs.load('C').active === 0, 'nothing left of it')
  a()
  b()
  t.ok(fs.idle, 'idle once every turn is back')
})

t.test('a full queue is refused at once; a turn given back twice counts once', async (t) => {
  const fs = new FairShare({ slots: 2, perAccount: 1, queueDepth: 1, maxWaitMs: 60_000 })
  const a = await fs.acquire('A')
  const waiting = fs.acquire('A')
  const err = await fs.acquire('A').then(() => undefined, (e: unknown) => e)
  t.ok(err instanceof ApiError && err.code === 'concurrency_limited', 'the second waiting request is refused')
  a()
  a()
  const next = await waiting
  t.same(fs.load('A'), { active: 1, queued: 0 }, 'the waiting one got the turn; the repeated release did nothing')
  const b = await fs.acquire('B')
  t.same(fs.load('B'), { active: 1, queued: 0 }, 'B has the other turn: two out, as many as the slots')
  next()
  b()
  t.ok(fs.idle)
})
