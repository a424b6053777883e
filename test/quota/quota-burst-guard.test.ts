/** Edge burst guard (docs/contract.md §7 429 form 2): token bucket per client address, injected clock. */
import { t } from '../helpers/file-test.ts'
import { BurstGuard, clientKey } from '../../runtime/platform/quota/burst-guard.ts'

function guard(o: Partial<ConstructorParameters<typeof BurstGuard>[0]> = {}) {
  let now = 1_000_000
  const g = new BurstGuard({ enabled: true, ratePerSecond: 10, burst: 5, clock: () => now, ...o })
  return { g, advance: (ms: number) => (now += ms) }
}

t.test('disabled: everything passes, nothing is stored', async (t) => {
  const { g } = guard({ enabled: false })
  for (let i = 0; i < 1000; i++) t.equal(g.allow('10.0.0.1'), true)
  t.equal(g.size, 0)
})

t.test('burst, then the sustained rate', async (t) => {
  const { g, advance } = guard()
  const first = Array.from({ length: 8 }, () => g.allow('10.0.0.1'))
  t.same(first, [true, true, true, true, true, false, false, false], 'a burst of 5, then refused')
  t.equal(g.refused, 3)
  advance(99)
  t.equal(g.allow('10.0.0.1'), false, 'less than one token after 99 ms at 10/s')
  advance(1)
  t.equal(g.allow('10.0.0.1'), true, 'one token after 100 ms')
  t.equal(g.allow('10.0.0.1'), false)
  advance(10_000)
  t.same(Array.from({ length: 6 }, () => g.allow('10.0.0.1')), [true, true, true, true, true, false], 'refills to the burst, not beyond')
})

t.test('clients are independent', async (t) => {
  const { g } = guard()
  for (let i = 0; i < 5; i++) g.allow('10.0.0.1')
  t.equal(g.allow('10.0.0.1'), false)
  t.equal(g.allow('10.0.0.2'), true, 'another address has its own bucket')
  t.equal(g.allow(undefined), true, 'no address (socket already gone): not throttled')
})

t.test('memory stays bounded', async (t) => {
  const { g, advance } = guard({ maxClients: 100, sweepIntervalMs: 1000 })
  for (let i = 0; i < 1000; i++) g.allow(`10.0.${i >> 8}.${i & 255}`)
  t.ok(g.size <= 100, `at most maxClients buckets (${g.size})`)
  advance(1000) // everything refilled: full buckets are swept on the next use
  g.allow('192.168.1.1')
  t.equal(g.size, 1, 'full buckets swept')
  // A busy client is not swept while its bucket is below full.
  for (let i = 0; i < 5; i++) g.allow('192.168.1.2')
  advance(1000)
  g.sweep()
  t.equal(g.size, 0, 'refilled after 1 s at 10/s with burst 5')
})

t.test('address keys', async (t) => {
  t.equal(clientKey('10.1.2.3'), '10.1.2.3')
  t.equal(clientKey('::ffff:10.1.2.3'), '10.1.2.3', 'IPv4-mapped IPv6 is the IPv4 client')
  t.equal(clientKey('2001:db8:aa:bb:1:2:3:4'), '2001:db8:aa:bb::/64')
  t.equal(clientKey('2001:0DB8:00aa:00bb::9'), '2001:db8:aa:bb::/64', 'one /64 is one client')
  t.equal(clientKey('2001:db8::1'), '2001:db8:0:0::/64')
  t.equal(clientKey('::1'), '0:0:0:0::/64')
  t.equal(clientKey('fe80::1%eth0'), 'fe80:0:0:0::/64')
  const { g } = guard()
  for (let i = 0; i < 5; i++) g.allow(`2001:db8:aa:bb::${i + 1}`)
  t.equal(g.allow('2001:db8:aa:bb:ffff::1'), false, 'rotating addresses inside a /64 share the bucket')
})

t.test('invalid configuration is refused when enabled', async (t) => {
  t.throws(() => new BurstGuard({ enabled: true, ratePerSecond: 0, burst: 5 }))
  t.doesNotThrow(() => new BurstGuard({ enabled: false, ratePerSecond: 0, burst: 0 }))
})
