/**
 * The most expensive legal requests we know of, within the RQL limits (docs/rql.md "Limits"): many wildcard patterns
 * over several fields, negated, long literal segments between wildcards, the longest `or` of comparisons and the
 * largest `in` that fit in a filter, and deep offsets on top. Used by `npm run bench:filters` and by the fairness
 * test (the attacking account sends them), whose attack starts with the shapes an external tester used to starve a
 * neighbour (`TESTER_FILTERS`, first in `WORST_FILTERS`): the fairness must hold however slow these are.
 */
const q = encodeURIComponent

/** The longest filter `build(n)` makes within `max` characters. */
function fit(build: (n: number) => string, start: number, max = 4096): string {
  let n = start
  while (build(n).length > max) n--
  return build(n)
}

const SIX = '*e*a*i*o*u*z'
const BACKTRACK = '*a*a*a*a*a*e'
const LONG = `*${'a'.repeat(38)}*${'b'.repeat(38)}*${'c'.repeat(38)}*${'d'.repeat(38)}*${'e'.repeat(38)}*`
const eight = (f: (i: number) => string) => Array.from({ length: 8 }, (_, i) => f(i)).join(',')
const fields4 = ['label', 'apiName', 'objectApiName', 'type']
/** `n` distinct values of one to two characters (0, 1, …, rr): a thousand of them fit in a filter. */
const short = (n: number) => Array.from({ length: n }, (_, i) => i.toString(36)).join(',')
const ALNUM = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'
/** `n` distinct two-character values (a letter, then a letter or digit), so that 1,000 of them fit in a filter. */
const pairs = (n: number) => Array.from({ length: n }, (_, i) => ALNUM[Math.floor(i / 62)] + ALNUM[i % 62]).join(',')

export interface WorstFilter {
  name: string
  /** Path below /v1/orgs/{orgId}/, with its query string. */
  path: string
}

/** What the tester ran, 16 at once, to starve another account: the largest `in` (1,000 values) with ilikes, and deep. */
export const TESTER_FILTERS: readonly WorstFilter[] = [
  { name: 'not in 1,000 values, sorted by label, deep offset', path: `fields?limit=200&offset=10000&sort=label&filter=${q(fit((n) => `not(in(label,${pairs(n)}))`, 1000))}` },
  { name: 'or of eight 6-wildcard patterns on label', path: `fields?limit=200&filter=${q(`or(${eight(() => `ilike(label,${SIX})`)})`)}` },
  { name: 'not in 1,000 values and eight 6-wildcard patterns', path: `fields?limit=200&filter=${q(fit((n) => `and(not(in(label,${pairs(n)})),or(${eight((i) => `ilike(${fields4[i % 4]},${SIX})`)}))`, 1000))}` },
  { name: 'in 1,000 values or eight 6-wildcard patterns, deep offset', path: `fields?limit=200&offset=10000&sort=label&filter=${q(fit((n) => `or(in(label,${pairs(n)}),${eight((i) => `ilike(${fields4[i % 4]},${SIX})`)})`, 1000))}` },
]

export const WORST_FILTERS: readonly WorstFilter[] = [
  ...TESTER_FILTERS,
  { name: 'eight 6-wildcard patterns over four fields, negated', path: `fields?limit=200&filter=${q(`not(or(${eight((i) => `ilike(${fields4[i % 4]},${SIX})`)}))`)}` },
  { name: 'eight 6-wildcard patterns over four fields', path: `fields?limit=200&filter=${q(`or(${eight((i) => `ilike(${fields4[i % 4]},${SIX})`)})`)}` },
  { name: 'eight backtracking patterns, negated, deep offset', path: `fields?limit=200&sort=-label&offset=10000&filter=${q(`not(and(${eight(() => `ilike(label,${BACKTRACK})`)}))`)}` },
  { name: 'eight patterns of 200 characters', path: `fields?limit=200&filter=${q(`or(${eight(() => `ilike(label,'${LONG}')`)})`)}` },
  { name: 'the longest or of eq', path: `fields?limit=200&filter=${q(fit((n) => `or(${Array.from({ length: n }, (_, i) => `eq(label,x${i})`).join(',')})`, 500))}` },
  { name: 'the largest in on text', path: `fields?limit=200&filter=${q(fit((n) => `in(label,${Array.from({ length: n }, (_, i) => `x${i}`).join(',')})`, 1000))}` },
  // A typed list: each value is cast once (ARRAY(SELECT unnest(…)::timestamptz)); cast per row it took 13 s here.
  { name: 'the largest in on a timestamp', path: `fields?limit=200&filter=${q(fit((n) => `in(createdDate,${Array.from({ length: n }, (_, i) => new Date(Date.UTC(2020, 0, 1) + i * 86_400_000).toISOString().slice(0, 10)).join(',')})`, 500))}` },
  { name: 'the largest out on a timestamp, deep offset', path: `fields?limit=200&offset=10000&sort=createdDate&filter=${q(fit((n) => `out(lastModifiedDate,${Array.from({ length: n }, (_, i) => new Date(Date.UTC(2021, 0, 1) + i * 3_600_000).toISOString().slice(0, 19) + 'Z').join(',')})`, 300))}` },
  { name: 'eight patterns on the last page', path: `fields?limit=200&offset=20700&sort=label&filter=${q(`or(${eight(() => `ilike(label,${SIX})`)})`)}` },
  { name: 'eight patterns on issue titles', path: `issues?limit=200&filter=${q(`or(${eight(() => `ilike(title,${SIX})`)})`)}` },
  // An external tester's shapes: the most values one list may have, negated, on the last page of an unindexed sort;
  // and such a list together with the eight patterns.
  { name: 'in of 1,000 values on text', path: `fields?limit=200&filter=${q(fit((n) => `in(label,${short(n)})`, 1000))}` },
  { name: 'not(in) of 1,000 values, sort=label, offset 20,000', path: `fields?limit=200&offset=20000&sort=label&filter=${q(fit((n) => `not(in(label,${short(n)}))`, 1000))}` },
  { name: 'in of 1,000 values or eight 6-wildcard patterns', path: `fields?limit=200&filter=${q(fit((n) => `or(in(label,${short(n)}),${eight((i) => `ilike(${fields4[i % 4]},${SIX})`)})`, 1000))}` },
  { name: 'the same, negated, sort=-label, offset 20,000', path: `fields?limit=200&offset=20000&sort=-label&filter=${q(fit((n) => `not(or(in(label,${short(n)}),${eight((i) => `ilike(${fields4[i % 4]},${SIX})`)}))`, 1000))}` },
]
