/**
 * The queues of postgres.js's pool (`queue.js`: its idle, busy and full connections, and the queries waiting for one),
 * as patches/postgres+3.4.9.patch patches them (patch d, patches/README.md). Unpatched, a queue dropped the slots it
 * had shifted only when it shifted its last element: a pool whose connections all stay busy shifts one from the busy
 * queue and pushes it back for every query, so the array grew by a slot a query for the life of the process, and every
 * query searched it from the start. Both copies of the module (ES module and CommonJS) are checked, for order and for memory.
 */
import { t } from '../helpers/file-test.ts'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

interface Queue<T> {
  readonly length: number
  push(x: T): T
  shift(): T | undefined
  remove(x: T): T | null
}
type MakeQueue = <T>(initial?: T[]) => Queue<T>

const require = createRequire(import.meta.url)
// `require` resolves postgres.js's CommonJS copy (cjs/src/index.js); the ES module copy is src/.
const cjsDir = dirname(require.resolve('postgres'))
const copies: Array<{ name: string; file: string; load: () => Promise<MakeQueue> }> = [
  { name: 'ES module', file: join(cjsDir, '../../src/queue.js'), load: async () => ((await import(pathToFileURL(join(cjsDir, '../../src/queue.js')).href)) as { default: MakeQueue }).default },
  { name: 'CommonJS', file: join(cjsDir, 'queue.js'), load: async () => require(join(cjsDir, 'queue.js')) as MakeQueue },
]

for (const copy of copies) {
  t.test(`${copy.name}: the installed postgres.js carries both queue patches`, async (t) => {
    const text = readFileSync(copy.file, 'utf8')
    t.ok(text.includes('/* orgscan: a queue searches only what it holds */'), 'remove() searches from the first element held')
    t.ok(text.includes('/* orgscan: a queue drops the slots it has shifted */'), 'shift() drops the shifted slots')
  })

  t.test(`${copy.name}: a queue keeps its order through pushes, shifts and removals (against a plain array)`, async (t) => {
    const Queue = await copy.load()
    const q = Queue<number>()
    const model: number[] = []
    // A fixed pseudo-random sequence (xorshift), so a failure repeats.
    let seed = 0x2545f491
    const rand = (n: number) => {
      seed ^= seed << 13
      seed ^= seed >>> 17
      seed ^= seed << 5
      return (seed >>> 0) % n
    }
    let next = 0
    const wrong: string[] = []
    for (let step = 0; step < 20_000 && wrong.length < 5; step++) {
      // Pushes outnumber shifts for the first half, so the queue grows to hundreds and drops shifted slots many times
      // while it holds elements; the second half drains it.
      const op = step < 10_000 ? rand(10) : 2 + rand(8)
      if (op < 4 || model.length === 0) {
        q.push(next)
        model.push(next++)
      } else if (op < 7) {
        const got = q.shift()
        const want = model.shift()
        if (got !== want) wrong.push(`step ${step}: shift gave ${got}, expected ${want}`)
      } else {
        // Remove one held (anywhere in the queue), or one already gone (the pool removes a connection it has shifted).
        const held = op !== 9
        const x = held ? model[rand(model.length)] : next - 1 - model.length - rand(50)
        const got = q.remove(x)
        const at = model.indexOf(x)
        if (at !== -1) model.splice(at, 1)
        const want = at === -1 ? null : x
        if (got !== want) wrong.push(`step ${step}: remove(${x}) gave ${got}, expected ${want}`)
      }
      if (q.length !== model.length) wrong.push(`step ${step}: length ${q.length}, expected ${model.length}`)
    }
    t.same(wrong, [], '20,000 operations, each as an array would answer')
    while (model.length) t.equal(q.shift(), model.shift())
    t.equal(q.length, 0, 'empty at the end')
  })

  t.test(`${copy.name}: a queue that never empties keeps no memory for what it has shifted`, async (t) => {
    const Queue = await copy.load()
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as () => void
    // Four connections, all busy: each query shifts one and pushes it back. (The pool also calls remove() before the
    // push, which the test above covers; unpatched, its search over the growing array would make this loop run for
    // hours instead of failing.)
    const connections = [{}, {}, {}, {}]
    const busy = Queue<object>(connections)
    const cycles = 2_000_000
    gc()
    const before = process.memoryUsage().heapUsed
    for (let i = 0; i < cycles; i++) {
      busy.push(busy.shift()!)
    }
    gc()
    const grown = process.memoryUsage().heapUsed - before
    t.equal(busy.length, 4, 'four held')
    // Unpatched: a slot per cycle, 8 bytes each, 16 MB for these cycles.
    t.ok(grown < 4 * 1024 * 1024, `${cycles.toLocaleString('en')} cycles kept ${(grown / 1024).toFixed(0)} KB (a slot a cycle would be ${(cycles * 8 / 1024 / 1024).toFixed(0)} MB)`)
    t.same(new Set([busy.shift(), busy.shift(), busy.shift(), busy.shift()]), new Set(connections), 'the same four, each once')
  })
}
