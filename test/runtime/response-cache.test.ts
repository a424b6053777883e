// The response cache's storage (runtime/core/cache/response-cache.ts): answers in reused segments, bounded by bytes, the
// least recently used going first, and bytes lent to a writer never overwritten before they are released. The cache
// over the wire (keys, ETags, who may see what, a slow reader) is tested in hot-reads.test.ts.
import { t } from '../helpers/file-test.ts'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { ENTRY_OVERHEAD, ResponseCache } from '../../runtime/core/cache/response-cache.ts'
import type { ReadResult } from '../../runtime/core/read.ts'

const answer = (i: number, size = 6000): ReadResult => ({ kind: 'one', data: JSON.stringify({ i, pad: `${i}:`.padEnd(size, String.fromCharCode(97 + (i % 26))) }) })
const MB = 1024 * 1024

t.test('kept answers come back: decoded for MCP, lent as bytes for REST', async (t) => {
  const cache = new ResponseCache(MB)
  t.equal(cache.set('k1', answer(1), false), undefined, 'kept; nothing lent when not asked to')
  const text = cache.get('k1', false)!
  t.equal(text.data, answer(1).data, 'decoded to the same text')
  t.equal(text.dataBytes, undefined, 'no bytes lent')
  t.equal(text.release, undefined, 'nothing to release')
  const lent = cache.get('k1', true)!
  t.equal(lent.dataBytes!.toString('utf8'), answer(1).data, 'lent: the same bytes')
  t.equal(lent.data, answer(1).data, 'and its text while lent')
  t.equal(cache.stats().pinnedSegments, 1, 'its segment is pinned while lent')
  lent.release!()
  t.equal(cache.stats().pinnedSegments, 0, 'and free once released')
  const fresh = cache.set('k2', answer(2), true)!
  t.equal(fresh.dataBytes.toString('utf8'), answer(2).data, 'set lends the bytes it kept')
  fresh.release()
  const s = cache.stats()
  t.equal(s.hits, 2)
  t.equal(s.entries, 2)
})

t.test('lent bytes are never overwritten before they are released; released segments are reused', async (t) => {
  const cache = new ResponseCache(MB)
  cache.set('k1', answer(1), false)
  const lent = cache.get('k1', true)!
  // Fill the cache several times over: every segment but the pinned one is reused again and again.
  for (let i = 2; i < 800; i++) cache.set(`k${i}`, answer(i), false)
  t.equal(lent.dataBytes!.toString('utf8'), answer(1).data, 'the lent bytes are intact')
  t.equal(cache.get('k1', false)?.data, answer(1).data, 'and still held: the pinned segment was passed over')
  let s = cache.stats()
  t.ok(s.evictions > 0, `evictions counted (${s.evictions})`)
  t.ok(s.bytes <= s.maxBytes, `answers within the bound (${s.bytes} ≤ ${s.maxBytes})`)
  t.equal(s.segmentBytes, MB, 'segments allocated up to the bound, never past it')
  lent.release!()
  for (let i = 800; i < 1600; i++) cache.set(`k${i}`, answer(i), false)
  t.equal(cache.get('k1', false), undefined, 'released: its segment was reused')
  s = cache.stats()
  t.equal(s.segmentBytes, MB, 'still no segment past the bound')
  t.ok(s.entries > 100 && s.entries < 200, `about a megabyte of 6 KB answers held (${s.entries})`)
  for (let i = 1600 - s.entries + 20; i < 1600; i++) t.equal(cache.get(`k${i}`, false)?.data, answer(i).data, `k${i} held intact`)
})

t.test('every segment pinned: a new answer is not kept, nothing is overwritten', async (t) => {
  const cache = new ResponseCache(MB)
  const held: ReadResult[] = []
  for (let i = 0; ; i++) {
    const lent = cache.set(`k${i}`, answer(i), true)
    if (!lent) break
    held.push({ ...answer(i), ...lent })
  }
  t.equal(cache.stats().pinnedSegments, 16, 'all 16 segments pinned')
  t.equal(cache.set('more', answer(9999), true), undefined, 'a new answer is not kept')
  t.equal(cache.get('more', false), undefined)
  for (const [i, h] of held.entries()) if (h.dataBytes!.toString('utf8') !== answer(i).data) t.fail(`lent answer ${i} overwritten`)
  t.pass(`${held.length} lent answers intact`)
  for (const h of held) h.release!()
  t.ok(cache.set('more', answer(9999), true), 'released: kept again')
})

t.test('an answer read while the cache turns over stays; one never read goes', async (t) => {
  const cache = new ResponseCache(MB)
  cache.set('hot', answer(0), false)
  cache.set('cold', answer(1), false)
  for (let i = 2; i < 2000; i++) {
    cache.set(`k${i}`, answer(i), false)
    if (i % 50 === 0) {
      const hit = cache.get('hot', true)
      t.equal(hit?.dataBytes?.toString('utf8'), answer(0).data, `hot still held after ${i} answers`)
      hit?.release!()
    }
  }
  t.equal(cache.get('cold', false), undefined, 'cold was evicted')
  t.ok(cache.stats().segmentBytes <= MB, 'still within the bound')
})

t.test('sizes: too large for a segment is not kept, a disabled cache keeps nothing, clear forgets', async (t) => {
  const cache = new ResponseCache(MB)
  t.equal(cache.set('big', answer(1, 70 * 1024), true), undefined, 'an answer larger than a segment (64 KB here) is not kept')
  t.equal(cache.get('big', false), undefined)
  const off = new ResponseCache(0)
  t.equal(off.enabled, false)
  t.equal(off.set('k', answer(1), true), undefined)
  t.equal(off.get('k', true), undefined)
  t.equal(off.stats().segmentBytes, 0)
  cache.set('k', answer(2), false)
  t.ok(cache.get('k', false))
  cache.clear()
  t.equal(cache.get('k', false), undefined, 'cleared')
  t.equal(cache.stats().bytes, 0)
  cache.set('k', answer(3), false)
  t.equal(cache.get('k', false)?.data, answer(3).data, 'kept again after clear')
  // A key kept twice counts once.
  cache.set('k', answer(3), false)
  t.equal(cache.stats().entries, 1)
  t.equal(cache.stats().bytes, Buffer.byteLength(answer(3).data) + 2 + ENTRY_OVERHEAD)
})

t.test('the records are written one after the other: the index takes what the bound leaves of each segment', async (t) => {
  const cache = new ResponseCache(MB)
  // Small answers, so the index's share of the bound (the key and the per-entry overhead) is a large part of it.
  for (let i = 0; i < 4000; i++) cache.set(`key-${i}`, answer(i, 200), false)
  const s = cache.stats()
  t.equal(s.segmentBytes, MB, 'every segment allocated')
  t.ok(s.evictions > 0, `the cache turned over (${s.evictions} evictions)`)
  const records = [...Array(4000).keys()].filter((i) => cache.get(`key-${i}`, false) !== undefined).reduce((n, i) => n + Buffer.byteLength(answer(i, 200).data), 0)
  t.ok(records > 0, `answers held (${s.entries})`)
  // Only the records' bytes are written: the segments' written bytes are far under their size, and the records plus the
  // index's estimate stay within the bound.
  t.ok(s.segmentBytesWritten < MB * 0.45, `segments written ${s.segmentBytesWritten} of ${MB} bytes (records ${records})`)
  t.ok(s.segmentBytesWritten >= records, 'every held record written')
  t.ok(s.segmentBytesWritten + s.entries * ENTRY_OVERHEAD <= MB, 'written records plus the index estimate within the bound')
  for (let i = 3990; i < 4000; i++) t.equal(cache.get(`key-${i}`, false)?.data, answer(i, 200).data, `key-${i} intact`)
})

t.test('what the bound counts for the index of an answer covers what the index takes of the heap', async (t) => {
  const { registry } = await import('../../resources/index.ts')
  const { compileRegistry } = await import('../../runtime/core/registry.ts')
  const { planList } = await import('../../runtime/core/plan.ts')
  const { canonical } = await import('../../runtime/core/read.ts')
  const fields = compileRegistry(registry).find((r) => r.name === 'fields')!
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as () => void
  const heap = () => {
    gc()
    gc()
    return process.memoryUsage().heapUsed
  }
  const n = 10_000
  const cache = new ResponseCache(256 * MB)
  const records = '[' + '{"name":"Field__c"},'.repeat(40) + '{}]'
  const before = heap()
  // As a request keeps its answer: its plan, its key (the scan and the canonical form), its fields and its records.
  for (let i = 0; i < n; i++) {
    const plan = planList(fields, new Map([['limit', [String(50 + (i % 7))]], ['offset', [String(i)]]]), 'rest')
    const key = `${1000 + (i % 3)}\n${canonical(fields, plan)}`
    cache.set(key, { kind: 'list', data: records, count: 41, total: 20_000, hasMore: true, plan, unpaged: false, etag: `"${String(i).padStart(32, 'e')}"` }, false)
  }
  const perEntry = (heap() - before) / n
  const s = cache.stats()
  t.equal(s.entries, n, 'every answer kept')
  const counted = (s.bytes - n * Buffer.byteLength(records)) / n
  t.ok(perEntry <= counted, `the index takes ${Math.round(perEntry)} bytes of heap an answer; the bound counts ${Math.round(counted)}`)
})

t.test('the canonical form of a read: two plans share it exactly when they are the same plan', async (t) => {
  const { registry } = await import('../../resources/index.ts')
  const { compileRegistry } = await import('../../runtime/core/registry.ts')
  const { planList, planGet } = await import('../../runtime/core/plan.ts')
  const { parseQuery } = await import('../../runtime/surfaces/rest/query.ts')
  const { canonical } = await import('../../runtime/core/read.ts')
  const seen = new Map<string, string>()
  let plans = 0
  for (const c of compileRegistry(registry)) {
    const d = c.decl
    const queries: string[] = []
    if (d.operations.list) {
      const sort = d.sortable?.[0]
      const filter = d.filterable?.[0]
      for (const page of ['', 'limit=1', 'limit=50', 'limit=50&offset=10', 'offset=10', 'limit=100000']) {
        queries.push(page)
        if (sort) queries.push(`${page}&sort=${sort}`, `${page}&sort=-${sort}`)
        if (filter) queries.push(`${page}&filter=isNull(${filter})`, `${page}&filter=isNotNull(${filter})`)
        if (c.ops.list && c.ops.list.queryParams.some((p) => p.type === 'fields')) queries.push(`${page}&fields=${d.listFields?.[0] ?? 'id'}`)
      }
      for (const qs of queries) {
        for (const parent of d.parent ? ['1', '2'] : [undefined]) {
          let plan
          try {
            plan = planList(c, parseQuery(qs), 'rest', parent)
          } catch {
            continue
          }
          plans++
          const key = canonical(c, plan)
          const json = `${c.name}\n${JSON.stringify(plan)}`
          if (seen.has(key) && seen.get(key) !== json) t.fail(`${key} stands for two plans: ${seen.get(key)} and ${json}`)
          seen.set(key, json)
        }
      }
    }
    if (d.operations.get && d.id) {
      for (const id of ['1', '2', '42']) {
        let plan
        try {
          plan = planGet(c, parseQuery(''), id)
        } catch {
          continue
        }
        plans++
        const key = canonical(c, plan)
        const json = `${c.name}\n${JSON.stringify(plan)}`
        if (seen.has(key) && seen.get(key) !== json) t.fail(`${key} stands for two plans`)
        seen.set(key, json)
      }
    }
  }
  t.ok(plans > 200, `${plans} plans of every resource`)
  const distinctPlans = new Set(seen.values()).size
  t.equal(seen.size, distinctPlans, `${seen.size} keys for ${distinctPlans} distinct plans: one key per plan`)
})
