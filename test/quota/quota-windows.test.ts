/** Quota window math and header rendering (docs/contract.md §8): pure functions, no database. */
import { t } from '../helpers/file-test.ts'
import { dayWindow, isoSeconds, monthWindow, secondsUntil } from '../../runtime/platform/quota/windows.ts'
import { headerWindow, quotaHeaders, rateLimitedError, retryAfterSeconds, type WindowView } from '../../runtime/platform/quota/headers.ts'

const U = (s: string) => Date.parse(s)

t.test('daily window: calendar day in UTC', async (t) => {
  const cases: [string, string, string][] = [
    ['2027-06-15T12:34:56.789Z', '2027-06-15T00:00:00Z', '2027-06-16T00:00:00Z'],
    ['2027-06-15T00:00:00.000Z', '2027-06-15T00:00:00Z', '2027-06-16T00:00:00Z'], // first instant
    ['2027-06-15T23:59:59.999Z', '2027-06-15T00:00:00Z', '2027-06-16T00:00:00Z'], // last instant
    ['2027-06-30T23:59:59.000Z', '2027-06-30T00:00:00Z', '2027-07-01T00:00:00Z'], // last second of a month
    ['2028-02-28T23:59:59.999Z', '2028-02-28T00:00:00Z', '2028-02-29T00:00:00Z'], // before the leap day
    ['2028-02-29T00:00:00.000Z', '2028-02-29T00:00:00Z', '2028-03-01T00:00:00Z'], // leap day
    ['2028-02-29T23:59:59.999Z', '2028-02-29T00:00:00Z', '2028-03-01T00:00:00Z'],
    ['2027-02-28T23:59:59.999Z', '2027-02-28T00:00:00Z', '2027-03-01T00:00:00Z'], // no leap day in 2027
    ['2027-12-31T23:59:59.999Z', '2027-12-31T00:00:00Z', '2028-01-01T00:00:00Z'], // year end
    ['2028-01-01T00:00:00.000Z', '2028-01-01T00:00:00Z', '2028-01-02T00:00:00Z'],
  ]
  for (const [now, start, reset] of cases) {
    const w = dayWindow(U(now))
    t.equal(isoSeconds(w.start), start, `${now} starts ${start}`)
    t.equal(isoSeconds(w.reset), reset, `${now} resets ${reset}`)
    t.equal(w.reset - w.start, 86_400_000, 'a UTC day is always 86400 s')
  }
})

t.test('monthly window: calendar month in UTC', async (t) => {
  const cases: [string, string, string, number][] = [
    ['2027-06-15T12:00:00Z', '2027-06-01T00:00:00Z', '2027-07-01T00:00:00Z', 30],
    ['2027-01-31T23:59:59.999Z', '2027-01-01T00:00:00Z', '2027-02-01T00:00:00Z', 31], // last instant of January
    ['2027-02-01T00:00:00.000Z', '2027-02-01T00:00:00Z', '2027-03-01T00:00:00Z', 28],
    ['2028-02-28T23:59:59.999Z', '2028-02-01T00:00:00Z', '2028-03-01T00:00:00Z', 29], // leap year February
    ['2028-02-29T12:00:00Z', '2028-02-01T00:00:00Z', '2028-03-01T00:00:00Z', 29],
    ['2028-03-01T00:00:00Z', '2028-03-01T00:00:00Z', '2028-04-01T00:00:00Z', 31],
    ['2100-02-15T00:00:00Z', '2100-02-01T00:00:00Z', '2100-03-01T00:00:00Z', 28], // century, not a leap year
    ['2000-02-15T00:00:00Z', '2000-02-01T00:00:00Z', '2000-03-01T00:00:00Z', 29], // 400-year leap year
    ['2027-12-31T23:59:59.999Z', '2027-12-01T00:00:00Z', '2028-01-01T00:00:00Z', 31], // year end
    ['2028-01-01T00:00:00Z', '2028-01-01T00:00:00Z', '2028-02-01T00:00:00Z', 31],
  ]
  for (const [now, start, reset, days] of cases) {
    const w = monthWindow(U(now))
    t.equal(isoSeconds(w.start), start, `${now} starts ${start}`)
    t.equal(isoSeconds(w.reset), reset, `${now} resets ${reset}`)
    t.equal((w.reset - w.start) / 86_400_000, days, `${days} days`)
  }
})

t.test('every day of four years: windows contain the instant and tile without gaps', async (t) => {
  let prevDay = dayWindow(U('2027-01-01T00:00:00Z'))
  let prevMonth = monthWindow(U('2027-01-01T00:00:00Z'))
  let days = 0
  for (let ms = prevDay.reset; ms < U('2031-01-01T00:00:00Z'); ms += 86_400_000) {
    for (const probe of [ms, ms + 1, ms + 86_399_999]) {
      const d = dayWindow(probe)
      const m = monthWindow(probe)
      if (!(d.start <= probe && probe < d.reset && m.start <= probe && probe < m.reset && m.start <= d.start && d.reset <= m.reset)) {
        t.fail(`window does not contain ${new Date(probe).toISOString()}`)
        return
      }
    }
    const d = dayWindow(ms)
    if (d.start !== prevDay.reset) t.fail(`gap before ${isoSeconds(ms)}`)
    const m = monthWindow(ms)
    if (m.start !== prevMonth.start && m.start !== prevMonth.reset) t.fail(`month gap before ${isoSeconds(ms)}`)
    prevDay = d
    prevMonth = m
    days++
  }
  t.equal(days, 4 * 365 + 1 - 1, 'walked 2027-01-02 … 2030-12-31 (2028 is a leap year)')
})

t.test('secondsUntil rounds up and is at least 1', async (t) => {
  const reset = U('2027-06-16T00:00:00Z')
  t.equal(secondsUntil(reset, U('2027-06-15T23:59:59.000Z')), 1, 'last second of the day')
  t.equal(secondsUntil(reset, U('2027-06-15T23:59:59.999Z')), 1, 'last millisecond')
  t.equal(secondsUntil(reset, U('2027-06-15T23:59:58.500Z')), 2)
  t.equal(secondsUntil(reset, U('2027-06-15T00:00:00.000Z')), 86_400, 'first instant: a full day')
})

const W = (kind: 'day' | 'month', limit: number, remaining: number, start: string, reset: string): WindowView => ({ kind, limit, remaining, start: U(start), reset: U(reset) })

t.test('header window: closest to exhaustion, or the blocking one', async (t) => {
  const day = (r: number) => W('day', 100, r, '2028-02-29T00:00:00Z', '2028-03-01T00:00:00Z')
  const month = (r: number) => W('month', 1000, r, '2028-02-01T00:00:00Z', '2028-03-01T00:00:00Z')
  t.equal(headerWindow(day(40), month(900), false).kind, 'day', 'fewer left in the day')
  t.equal(headerWindow(day(40), month(10), false).kind, 'month', 'fewer left in the month')
  t.equal(headerWindow(day(5), month(5), false).kind, 'month', 'tie: the later (or equal) reset, monthly')
  t.equal(headerWindow(day(0), month(10), true).kind, 'day', 'blocked by the day')
  t.equal(headerWindow(day(10), month(0), true).kind, 'month', 'blocked by the month')
  const dec31 = W('day', 100, 0, '2027-12-30T00:00:00Z', '2027-12-31T00:00:00Z')
  const monthDec = W('month', 1000, 0, '2027-12-01T00:00:00Z', '2028-01-01T00:00:00Z')
  t.equal(headerWindow(dec31, monthDec, true).kind, 'month', 'both block: the one resetting later')
  t.equal(retryAfterSeconds(dec31, monthDec, U('2027-12-30T12:00:00Z')), 36 * 3600, 'Retry-After waits for both')
})

t.test('headers are well-formed', async (t) => {
  const now = U('2028-02-29T23:59:59Z')
  const day = W('day', 100, 7, '2028-02-29T00:00:00Z', '2028-03-01T00:00:00Z')
  const month = W('month', 2000, 1500, '2028-02-01T00:00:00Z', '2028-03-01T00:00:00Z')
  const h = quotaHeaders(day, month, now)
  t.same(h, {
    'X-RateLimit-Limit': '100',
    'X-RateLimit-Remaining': '7',
    'X-RateLimit-Reset': String(U('2028-03-01T00:00:00Z') / 1000),
    'RateLimit-Policy': `"daily";q=100;w=86400, "monthly";q=2000;w=${29 * 86400}`,
    RateLimit: '"daily";r=7;t=1, "monthly";r=1500;t=1',
  })
  // RFC 8941 List of Items: sf-string item with integer parameters, comma-separated.
  const item = /^"[a-z]+"(;[a-z]+=\d{1,15})+$/
  for (const name of ['RateLimit-Policy', 'RateLimit']) {
    for (const part of h[name].split(', ')) t.match(part, item, `${name} member ${part}`)
  }
  t.match(h['X-RateLimit-Reset'], /^\d{10}$/, 'Unix seconds')
})

t.test('the 429 error matches docs/contract.md §7', async (t) => {
  const e = rateLimitedError(42)
  t.equal(e.status, 429)
  t.equal(e.title, 'Too Many Requests')
  t.equal(e.message, 'Rate limit exceeded. Retry after 42 seconds.')
  t.equal(e.extras.retryAfterSeconds, 42)
})
