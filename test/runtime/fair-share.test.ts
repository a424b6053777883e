// The fair queue in front of the database (runtime/platform/pipeline/fair-share.ts, docs/adr/0100-fair-share.md): at most the
// pool's turns out, one account never all of them, freed turns to the account with the fewest out and the one served
// longest ago among equals, waits bounded. Over the wire: test/rest/rest-fair-share.test.ts, test/alone/fairness.test.ts.
import { t } from '../helpers/file-test.ts'
import { FairShare, type Turn } from '../../runtime/platform/pipeline/fair-share.ts'
import { ApiError } from '../../runtime/core/errors.ts'

const options = { queueDepth: 100, maxWaitMs: 60_000 }

/** Requests of accounts that record the order in which they got their turn. */
function recorder(fs: FairShare) {
  const order: string[] = []
  const held = new Map<string, Turn[]>()
  const ask = (account: string) =>
    fs.acquire(account).then((r) => {
      order.push(account)
      ;(held.get(account) ?? held.set(account, []).get(account)!).push(r)
      return r
    })
  /** Gives back the oldest turn `account` holds. */
  const done = (account: string) => held.get(account)!.shift()!.release()
  /** Gives every turn back, and those of the requests still waiting as they get them: nothing left pending. */
  const finish = async () => {
    for (let i = 0; i < 1000 && !fs.idle; i++) {
      for (const rs of held.values()) while (rs.length) rs.shift()!.release()
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
  t.same(fs.load('A'), { active: 3, queued: 3, connections: 3 })
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
  a.release()
  b.release()
  t.ok(fs.idle, 'idle once every turn is back')
})

t.test('a full queue is refused at once; a turn given back twice counts once', async (t) => {
  const fs = new FairShare({ slots: 2, perAccount: 1, queueDepth: 1, maxWaitMs: 60_000 })
  const a = await fs.acquire('A')
  const waiting = fs.acquire('A')
  const err = await fs.acquire('A').then(() => undefined, (e: unknown) => e)
  t.ok(err instanceof ApiError && err.code === 'concurrency_limited', 'the second waiting request is refused')
  a.release()
  a.release()
  const next = await waiting
  t.same(fs.load('A'), { active: 1, queued: 0, connections: 1 }, 'the waiting one got the turn; the repeated release did nothing')
  const b = await fs.acquire('B')
  t.same(fs.load('B'), { active: 1, queued: 0, connections: 1 }, 'B has the other turn: two out, as many as the slots')
  next.release()
  b.release()
  t.ok(fs.idle)
})

t.test('pipelining: an account alone sends up to depth reads on each connection it holds, never on the one it leaves free', async (t) => {
  let now = 0
  const fs = new FairShare({ slots: 4, perAccount: 3, depth: 3, aloneMs: 1000, now: () => now, ...options })
  const turns: Turn[] = []
  for (let i = 0; i < 11; i++) void fs.acquire('A').then((x) => turns.push(x))
  await settle()
  t.equal(turns.length, 9, 'three connections, three reads on each')
  t.same(fs.load('A'), { active: 9, queued: 2, connections: 3 })
  fs.saw('A')
  t.equal(turns.length, 9, 'its requests answered from the cache change nothing')
  t.same(turns.slice(0, 3).map((x) => x.connection), [0, 1, 2], 'a free connection first, one for each of the first three')
  t.same([...new Set(turns.map((x) => x.connection))].sort(), [0, 1, 2], 'the pipelined reads go to those three')
  fs.saw('B') // as the pipeline does for every request
  const b = await fs.acquire('B')
  t.equal(b.connection, 3, 'B finds the fourth connection at once')
  turns[0].release()
  await settle()
  t.equal(turns.length, 9, "while B reads, A is not alone: a read given back makes no room for A's next")
  b.release()
  turns[1].release()
  await settle()
  t.equal(turns.length, 9, 'nor within aloneMs of B\'s last request')
  now += 1000
  turns[2].release()
  await settle()
  t.equal(turns.length, 11, 'then A pipelines again, its two waiting reads on its connections with room')
  t.ok(turns.slice(9).every((x) => [0, 1, 2].includes(x.connection)), 'on its own connections')
  for (const x of turns) x.release()
  await settle()
  for (const x of turns) x.release()
  t.ok(fs.idle, 'idle once every turn is back')
})

t.test('pipelining stops while another account reads or waits, so the connections drain to it', async (t) => {
  const fs = new FairShare({ slots: 2, perAccount: 1, depth: 3, ...options })
  const a: Turn[] = []
  for (let i = 0; i < 2; i++) a.push(await fs.acquire('A'))
  const b = await fs.acquire('B')
  t.same([a[0].connection, a[1].connection, b.connection], [0, 0, 1], "A pipelines on its one connection, B has the other")
  let c: Turn | undefined
  void fs.acquire('C').then((x) => (c = x))
  const more: Turn[] = []
  void fs.acquire('A').then((x) => more.push(x))
  await settle()
  a[0].release()
  await settle()
  t.equal(more.length, 0, "A's next read is not pipelined while B reads and C waits for a connection, though A's connection has room")
  t.equal(c, undefined, 'C still waits: the connection runs A\'s read already sent')
  a[1].release()
  await settle()
  t.equal(c?.connection, 0, "C gets A's connection once A's reads on it are done")
  t.equal(more.length, 0, 'A waits for a connection of its own now')
  b.release()
  await settle()
  t.equal(more[0]?.connection, 1, "A gets B's connection once it is free")
  c!.release()
  more[0].release()
  t.ok(fs.idle)
})

t.test('whatever the order of requests and releases: one account a connection, its share, its depth, nothing free while someone waits for it', async (t) => {
  // A seeded pseudo-random run of acquires and releases, the invariants checked after each step.
  let seed = 7
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31)
  const shapes = [{ slots: 4, perAccount: 3, depth: 3 }, { slots: 3, perAccount: 1, depth: 2 }, { slots: 1, perAccount: 1, depth: 1 }]
  // Two accounts (one often alone, pipelining) and five (often several waiting).
  for (const [shape, names] of shapes.flatMap((s) => [[s, 'AB'], [s, 'ABCDE']] as const)) {
    const fs = new FairShare({ ...shape, queueDepth: 1000, maxWaitMs: 60_000 })
    const out: Array<{ account: string; turn: Turn }> = []
    let waiting = 0
    let violations = 0
    for (let step = 0; step < 3000; step++) {
      if (random() < 0.55) {
        const account = names[Math.floor(random() * names.length)]
        waiting++
        fs.saw(account)
        void fs.acquire(account).then((turn) => {
          waiting--
          out.push({ account, turn })
        })
      } else if (out.length > 0) {
        out.splice(Math.floor(random() * out.length), 1)[0].turn.release()
      }
      await settle()
      const byConnection = new Map<number, Set<string>>()
      const reads = new Map<number, number>()
      for (const { account, turn } of out) {
        ;(byConnection.get(turn.connection) ?? byConnection.set(turn.connection, new Set()).get(turn.connection)!).add(account)
        reads.set(turn.connection, (reads.get(turn.connection) ?? 0) + 1)
      }
      const held = new Map<string, number>()
      for (const accounts of byConnection.values()) {
        if (accounts.size > 1) violations++
        for (const a of accounts) held.set(a, (held.get(a) ?? 0) + 1)
      }
      for (const n of held.values()) if (n > fs.perAccount) violations++
      for (const n of reads.values()) if (n > shape.depth) violations++
      // Someone waits while a connection is free and the waiting account holds less than its share: never.
      const free = shape.slots - byConnection.size
      if (free > 0 && waiting > 0) {
        for (const account of names) if (fs.load(account).queued > 0 && (held.get(account) ?? 0) < fs.perAccount) violations++
      }
    }
    t.equal(violations, 0, `${JSON.stringify(shape)}, accounts ${names}: no step broke a bound`)
    while (out.length || waiting) {
      for (const x of out.splice(0)) x.turn.release()
      await settle()
    }
    t.ok(fs.idle, `${JSON.stringify(shape)}, accounts ${names}: idle in the end`)
  }
})

t.test("an account is not alone within aloneMs of another's request, even one answered from the cache", async (t) => {
  let now = 0
  const fs = new FairShare({ slots: 4, perAccount: 3, depth: 3, aloneMs: 1000, now: () => now, ...options })
  const { order, ask, finish } = recorder(fs)
  fs.saw('B')
  for (let i = 0; i < 5; i++) void ask('A')
  await settle()
  t.equal(order.length, 3, 'A holds its three connections, one read on each: B was seen just now')
  now += 999
  fs.saw('A')
  for (let i = 0; i < 1; i++) void ask('A')
  await settle()
  t.equal(order.length, 3, 'still within aloneMs')
  now += 1
  void ask('A')
  await settle()
  t.equal(order.length, 7, 'past it, A pipelines its waiting reads and the new one')
  fs.saw('B')
  void ask('A')
  await settle()
  t.equal(order.length, 7, "B's request (say, a cache hit) ends it at once")
  await finish()
})
