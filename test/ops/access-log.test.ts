/**
 * The access log (docs/operating.md "Logs"): one line per answered request with the method, the route template,
 * the status, the duration, the request id the client saw, and who called — never the concrete path, the query
 * string (filter values), a secret or a token; `orgscan serve` writes it as JSON lines on stderr (pino).
 */
import { t } from '../helpers/file-test.ts'
import { startTestService, basic, type GetInit } from '../helpers/service.ts'
import { spawnServer } from '../helpers/server-process.ts'
import { createTestDatabase } from '../helpers/test-db.ts'
import { mcpClient } from '../helpers/mcp.ts'
import { createKey } from '../../runtime/platform/admin.ts'
import type { AccessLine } from '../../runtime/platform/http/access-log.ts'
import { formatAccessLine } from '../../runtime/platform/http/access-log.ts'
import { ATOMIC_WRITE_BYTES, BATCH_LINES, createAccessSink } from '../../runtime/platform/http/access-sink.ts'
import pino from 'pino'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

t.test('one line per request, with the route template and the caller, nothing secret', async (t) => {
  const lines: AccessLine[] = []
  const ts = await startTestService(t, { accessLog: (l) => lines.push(l) })
  const org = ts.seed.orgs.find((o) => o.large)!
  const key = await createKey(ts.svc.db.sql, ts.svc.pepper, org.accountId)
  const auth = basic(key.keyId, key.secret)
  const secretFilter = 'eq(apiName,Very_Private_Value__c)'
  const lastFor = async (path: string, a: string | null, init?: GetInit) => {
    const r = await ts.get(path, a, init)
    await new Promise((res) => setImmediate(res)) // the line is written when the answer closes
    return { r, line: lines.at(-1)! }
  }
  const list = await lastFor(`/v1/orgs/${org.salesforceId}/fields?filter=${encodeURIComponent(secretFilter)}&limit=2`, auth)
  t.match(list.line, { msg: 'request', method: 'GET', route: '/v1/orgs/:orgId/fields', status: 200, accountId: org.accountId, keyId: key.keyId })
  t.equal(list.line.requestId, list.r.headers.get('x-request-id'), 'the request id the client saw')
  t.type(list.line.durationMs, 'number')
  const id = list.r.body.data[0]?.id ?? 1
  const one = await lastFor(`/v1/orgs/${org.salesforceId}/fields/${id}`, auth, { headers: { 'x-request-id': 'trace-42' } })
  t.match(one.line, { route: '/v1/orgs/:orgId/fields/:fieldId', status: 200, requestId: 'trace-42' })
  t.match((await lastFor('/v1/orgs', null)).line, { route: '/v1/orgs', status: 401 }, 'a 401, without a caller')
  t.notOk((await lastFor('/v1/orgs', null)).line.accountId)
  t.match((await lastFor(`/v1/no/such/${'x'.repeat(10)}`, auth)).line, { route: '(unmatched)', status: 404 })
  t.match((await lastFor('/healthz', null)).line, { route: '/healthz', status: 200 })
  const { client } = await mcpClient(t, ts.svc.mcpUrl, auth)
  await client.callTool({ name: 'list_org_objects', arguments: { orgId: org.salesforceId, limit: 1 } })
  t.ok(lines.some((l) => l.route === '/v1/mcp' && l.method === 'POST' && l.keyId === key.keyId && l.status === 200), 'MCP requests too, with the caller')
  const text = JSON.stringify(lines)
  t.notOk(text.includes(key.secret), 'no secret')
  t.notOk(text.includes('Very_Private_Value__c'), 'no filter value')
  t.notOk(text.includes(org.salesforceId), 'no concrete path')
  t.notOk(/authorization|Basic /i.test(text), 'no header')
})

t.test('orgscan serve writes the access log as JSON lines on stderr (and none with ORGSCAN_ACCESS_LOG=off)', async (t) => {
  const db = await createTestDatabase({ template: 'seeded' })
  t.teardown(() => db.drop())
  const env = { ...process.env, DATABASE_URL: db.databaseUrl, ORGSCAN_DATA_DIR: db.dataDir, ORGSCAN_PEPPER: 'access-log-pepper-0123456789abcdefghij', ORGSCAN_SEED_DEMO: 'false' }
  for (const mode of ['on', 'off'] as const) {
    const server = await spawnServer({ ...env, ORGSCAN_ACCESS_LOG: mode })
    t.equal((await fetch(`${server.url}/healthz`, { headers: { 'x-request-id': `probe-${mode}` } })).status, 200)
    if (mode === 'on') {
      // Lines are written in blocks, but a lone line still appears within a moment, while the server runs.
      const until = Date.now() + 10_000
      while (!server.stderr().includes('probe-on') && Date.now() < until) await new Promise((r) => setTimeout(r, 50))
      t.ok(server.stderr().includes('probe-on'), 'written while the server runs, not only at exit')
    }
    await server.stop()
    const found = server.stderr().split('\n').filter((l) => l.includes(`probe-${mode}`))
    if (mode === 'off') {
      t.same(found, [], 'off: no access log')
      continue
    }
    t.equal(found.length, 1, 'one line for the request')
    t.match(JSON.parse(found[0]), { level: 30, time: Number, msg: 'request', method: 'GET', route: '/healthz', status: 200, requestId: 'probe-on' })
  }
})

t.test('each line is the JSON line pino writes for the same facts, byte for byte', async (t) => {
  const time = 1_795_000_000_123
  const asPino = (l: AccessLine, worker?: number): string => {
    let out = ''
    pino({ base: worker === undefined ? undefined : { worker }, timestamp: () => `,"time":${time}` }, { write: (s: string) => void (out = s) }).info(l)
    return out
  }
  const odd = ['a"b', 'back\\slash', 'tab\tand\nnewline', '\u0001control', 'é ü 漢字 😀', 'x'.repeat(300), '']
  const lines: AccessLine[] = [
    { msg: 'request', method: 'GET', route: '/v1/orgs/:orgId/fields', status: 200, durationMs: 1.25, requestId: '0d1f9a5e-7c1b-4f7e-9a43-2c5b3e1f8d90', accountId: '12', keyId: 'osk_0123456789abcdef' },
    { msg: 'request', method: 'POST', route: '/v1/mcp', status: 200, durationMs: 0, requestId: 'trace-42', accountId: '7', keyId: 'osc_agent', userId: '99' },
    { msg: 'request', method: 'GET', route: '(unmatched)', status: 404, durationMs: 1234.5, requestId: 'r' },
    { msg: 'request', method: 'GET', route: '/v1/orgs', status: 401, durationMs: 0.01, requestId: 'r', aborted: true },
    // The longest numbers there are, with every optional field: the line's room (maxLineBytes) still holds it.
    { msg: 'request', method: 'GET', route: '/', status: -1.2345678901234567e-300, durationMs: -2.2250738585072014e-308, requestId: '\u0000', accountId: '\u0001', keyId: 'é', userId: '"', aborted: true },
    ...odd.map((v, i): AccessLine => ({ msg: 'request', method: 'GET', route: v, status: 400 + i, durationMs: i / 3, requestId: v, accountId: v, keyId: v, userId: v })),
  ]
  // One difference from pino, on purpose: a lone surrogate is escaped (`\ud800`, as JSON.stringify does) where pino
  // writes it raw, to become U+FFFD in the UTF-8 it writes; escaped, the line is valid UTF-8 and keeps the value.
  const lone = formatAccessLine({ ...lines[0], keyId: 'a\ud800b' }, time)
  t.ok(lone.includes('"keyId":"a\\ud800b"'), 'a lone surrogate is escaped')
  t.equal(JSON.parse(lone).keyId, 'a\ud800b', 'and parses back to itself')
  for (const l of lines) {
    for (const worker of [undefined, 1, 12]) {
      const mine = formatAccessLine(l, time, worker)
      t.equal(mine, asPino(l, worker), `${l.route.slice(0, 30)} (worker ${worker})`)
      t.same(JSON.parse(mine), { level: 30, time, ...(worker === undefined ? {} : { worker }), ...l }, 'and it parses back to the facts')
    }
  }
})

t.test('numbers are written as JSON.stringify writes them (durations in hundredths, epoch times, statuses, worker slots)', async (t) => {
  const numbers = [0, -0, 1, 9, 10, 99, 100, 999_999_999, 1_000_000_000, 1_000_000_001, 1_795_000_000_123, Number.MAX_SAFE_INTEGER, 0.01, 0.1, 0.5, 0.99, 1.05, 12.3, 1234.56, 999_999_999.99, 1e12 + 0.5, 1e-7, -1.25, 2 ** 60, 1.005, 0.125]
  // Durations as the server rounds them: hundredths of a millisecond, from sub-millisecond to hours.
  let seed = 7
  const random = () => ((seed = (seed * 48271) % 2147483647) / 2147483647)
  for (let i = 0; i < 3000; i++) numbers.push(Math.round(random() * 10 ** (i % 8) * 100) / 100)
  const base: AccessLine = { msg: 'request', method: 'GET', route: '/v1/orgs', status: 200, durationMs: 0, requestId: 'r' }
  const wrong: string[] = []
  for (const n of numbers) {
    const line = formatAccessLine({ ...base, durationMs: n, status: Number.isInteger(n) && n >= 0 ? n : 200 }, Number.isInteger(n) && n >= 0 ? n : 1, 3)
    const expected = `{"level":30,"time":${JSON.stringify(Number.isInteger(n) && n >= 0 ? n : 1)},"worker":3,"msg":"request","method":"GET","route":"/v1/orgs","status":${JSON.stringify(Number.isInteger(n) && n >= 0 ? n : 200)},"durationMs":${JSON.stringify(n)},"requestId":"r"}\n`
    if (line !== expected) wrong.push(`${n}: ${line}`)
  }
  t.same(wrong, [], `${numbers.length} numbers, each as JSON.stringify writes it`)
})

t.test('the sink encodes access lines straight into its blocks: the same bytes as the formatted lines, whole lines per block', async (t) => {
  const blocks: Buffer[] = []
  const sink = createAccessSink((b) => blocks.push(b), { maxDelayMs: 10_000, blockBytes: 1024 })
  const lines: AccessLine[] = Array.from({ length: 60 }, (_, i) => ({ msg: 'request', method: i % 2 ? 'POST' : 'GET', route: i % 7 ? '/v1/orgs/:orgId/fields' : 'odd "route" é', status: 200 + i, durationMs: i / 4, requestId: `req-${i}`, accountId: String(i), keyId: i % 3 ? `osk_${i}` : undefined, userId: i % 5 ? undefined : 'ü' }))
  const huge: AccessLine = { ...lines[0], requestId: 'x'.repeat(1500) }
  const expected: string[] = []
  for (const [i, l] of lines.entries()) {
    sink.line(l, 1_795_000_000_000 + i, i % 2 ? 2 : undefined)
    expected.push(formatAccessLine(l, 1_795_000_000_000 + i, i % 2 ? 2 : undefined))
    if (i === 30) {
      sink.line(huge, 5)
      expected.push(formatAccessLine(huge, 5))
    }
  }
  sink.flush()
  t.equal(Buffer.concat(blocks).toString('utf8'), expected.join(''), 'every line once, in order, byte for byte')
  t.ok(blocks.length > 3, `${blocks.length} blocks`)
  for (const b of blocks) {
    t.ok(b.length <= 1024 || b.toString('utf8') === formatAccessLine(huge, 5), `a block of ${b.length} bytes (a line longer than a block alone)`)
    t.equal(b.at(-1), 0x0a, 'ends on a line end')
  }
})

t.test('the sink writes whole lines in blocks of at most 4 KB (atomic on a pipe shared by workers)', async (t) => {
  const blocks: string[] = []
  const sink = createAccessSink((b) => blocks.push(b.toString('utf8')), { maxDelayMs: 20 })
  const lines = Array.from({ length: 300 }, (_, i) => `{"i":${i},"route":"/v1/orgs/:orgId/fields","pad":"${'é'.repeat(i % 40)}"}\n`)
  for (const l of lines) sink.write(l)
  t.ok(blocks.length > 1, `${blocks.length} blocks written before the flush`)
  await new Promise((r) => setTimeout(r, 60))
  t.same(blocks.join(''), lines.join(''), 'every line once, in order (the last block after a moment, without a flush)')
  for (const b of blocks) {
    t.ok(Buffer.byteLength(b) <= ATOMIC_WRITE_BYTES, `a block of ${Buffer.byteLength(b)} bytes`)
    t.ok(b.endsWith('\n'), 'ends on a line end')
  }
  t.ok(blocks.slice(0, -1).every((b) => Buffer.byteLength(b) > ATOMIC_WRITE_BYTES - 200), 'blocks are filled before they are written')
  sink.write(lines[0])
  sink.flush()
  t.equal(blocks.at(-1), lines[0], 'flush writes what is gathered at once')
})

t.test('a block handed over is never written again by the sink; a line longer than a block is a block of its own', async (t) => {
  const blocks: Buffer[] = []
  const sink = createAccessSink((b) => blocks.push(b), { maxDelayMs: 10_000, blockBytes: 1024 })
  const line = (i: number, pad = 100) => `{"i":${i},"pad":"${'ü'.repeat(pad)}"}\n`
  const sent: string[] = []
  for (let i = 0; i < 40; i++) {
    sent.push(line(i))
    sink.write(line(i))
  }
  const copies = blocks.map((b) => b.toString('utf8'))
  sent.push(line(99, 2000))
  sink.write(line(99, 2000))
  for (let i = 100; i < 140; i++) {
    sent.push(line(i))
    sink.write(line(i))
  }
  sink.flush()
  t.same(blocks.slice(0, copies.length).map((b) => b.toString('utf8')), copies, 'blocks handed over earlier are unchanged')
  t.equal(blocks.map((b) => b.toString('utf8')).join(''), sent.join(''), 'every line once, in order')
  t.ok(blocks.some((b) => b.toString('utf8') === line(99, 2000)), 'the long line alone in its block')
  for (const b of blocks) if (b.toString('utf8') !== line(99, 2000)) t.ok(b.length <= 1024, `a block of ${b.length} bytes`)
})

/** A sink whose writer keeps each block's text and releases the block at once. */
function collectingSink(opts: { maxDelayMs: number; blockBytes: number }): { blocks: string[]; sink: ReturnType<typeof createAccessSink> } {
  const blocks: string[] = []
  const sink = createAccessSink((b, release) => {
    blocks.push(b.toString('utf8'))
    release()
  }, opts)
  return { blocks, sink }
}

t.test('without a flush, each line is written within the delay, again after the timer has fired once', async (t) => {
  const { blocks, sink } = collectingSink({ maxDelayMs: 20, blockBytes: 1024 })
  const expected: string[] = []
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < 12; i++) {
      const l: AccessLine = { msg: 'request', method: 'GET', route: '/v1/orgs/:orgId/fields', status: 200, durationMs: i / 8, requestId: `req-${round}-${i}`, accountId: '7' }
      sink.line(l, 1_795_000_000_000 + i, 1)
      expected.push(formatAccessLine(l, 1_795_000_000_000 + i, 1))
      if (i === 5) {
        sink.write(`{"text":${round}}\n`)
        expected.push(`{"text":${round}}\n`)
      }
    }
    await new Promise((r) => setTimeout(r, 80))
    t.equal(blocks.join(''), expected.join(''), `round ${round + 1}: every line so far written, in the order given`)
  }
})

t.test('access lines are encoded in batches: none before a batch is full, the whole batch when it is, the rest at a flush, in order with text lines', async (t) => {
  const { blocks, sink } = collectingSink({ maxDelayMs: 10_000, blockBytes: 1024 })
  const expected: string[] = []
  const give = (i: number) => {
    const l: AccessLine = { msg: 'request', method: 'GET', route: '/v1/orgs/:orgId/fields', status: 200, durationMs: i / 8, requestId: `req-${i}`, accountId: '7', keyId: 'osk_a' }
    sink.line(l, 1_795_000_000_000 + i, undefined)
    expected.push(formatAccessLine(l, 1_795_000_000_000 + i))
  }
  for (let i = 0; i < BATCH_LINES - 1; i++) give(i)
  t.equal(blocks.length, 0, `${BATCH_LINES - 1} lines queued, none encoded yet`)
  give(BATCH_LINES - 1)
  t.ok(blocks.length >= 10, `the full batch encoded into blocks at once (${blocks.length} handed over)`)
  const written = blocks.join('')
  t.ok(written.length > 0 && expected.join('').startsWith(written), 'the blocks handed over hold the first lines, whole and in order')
  give(BATCH_LINES)
  sink.write('{"text":1}\n')
  expected.push('{"text":1}\n')
  give(BATCH_LINES + 1)
  sink.flush()
  t.equal(blocks.join(''), expected.join(''), 'after the flush: every line once, a text line after the access lines given before it')
})

t.test('a released block is filled again instead of a new one: two blocks serve a writer that releases at once', async (t) => {
  const written: string[] = []
  const memory = new Set<ArrayBufferLike>()
  const sink = createAccessSink((b, release) => {
    written.push(b.toString('utf8'))
    memory.add(b.buffer)
    release()
    release() // a second release is ignored: the block is not handed out twice
  }, { maxDelayMs: 10_000, blockBytes: 512 })
  const line = (i: number) => `{"i":${i},"pad":"${'x'.repeat(i % 90)}"}\n`
  const sent: string[] = []
  for (let i = 0; i < 2000; i++) {
    sent.push(line(i))
    sink.write(line(i))
  }
  sink.flush()
  t.ok(written.length > 100, `${written.length} blocks written`)
  t.equal(written.join(''), sent.join(''), 'every line once, in order')
  t.ok(memory.size <= 2, `the blocks came from ${memory.size} pieces of memory`)
})

t.test('a block is not filled again until its writer releases it', async (t) => {
  const held: Array<{ block: Buffer; bytes: string; release: () => void }> = []
  const sink = createAccessSink((block, release) => void held.push({ block, bytes: block.toString('latin1'), release }), { maxDelayMs: 10_000, blockBytes: 256 })
  const line = (i: number) => `{"i":${i},"pad":"${'y'.repeat(40)}"}\n`
  for (let i = 0; i < 100; i++) sink.write(line(i))
  sink.flush()
  t.ok(held.length > 10, `${held.length} blocks held by the writer`)
  t.same(held.map((h) => h.block.toString('latin1')), held.map((h) => h.bytes), 'no block held by the writer was written to')
  const before = held.length
  for (const h of held) h.release()
  for (let i = 100; i < 200; i++) sink.write(line(i))
  sink.flush()
  const later = held.slice(before)
  t.same(later.map((h) => h.block.toString('latin1')).join(''), Array.from({ length: 100 }, (_, i) => line(100 + i)).join(''), 'lines written after the release are whole')
  t.ok(later.some((h) => held.slice(0, before).some((e) => e.block.buffer === h.block.buffer)), 'released memory is used again')
})

t.test('a block the destination fails to take is dropped, never thrown at the writer', async (t) => {
  const taken: string[] = []
  let failing = true
  const sink = createAccessSink((b) => {
    if (failing) throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' })
    taken.push(b.toString('utf8'))
  }, { maxDelayMs: 10_000, blockBytes: 256 })
  const line = (i: number) => `{"i":${i},"pad":"${'x'.repeat(60)}"}\n`
  t.doesNotThrow(() => {
    for (let i = 0; i < 20; i++) sink.write(line(i))
    sink.write(`{"long":"${'y'.repeat(400)}"}\n`)
    sink.flush()
  }, 'lines and flushes go on while the destination fails')
  t.same(taken, [], 'nothing taken while it failed')
  failing = false
  sink.write(line(99))
  sink.flush()
  t.same(taken, [line(99)], 'the next block is written once the destination takes it again')
})

t.test('orgscan serve with stderr in a file: every request has its line, the last ones written before exit', async (t) => {
  const db = await createTestDatabase({ template: 'seeded' })
  t.teardown(() => db.drop())
  const dir = mkdtempSync(join(tmpdir(), 'orgscan-access-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'stderr.log')
  const env = { ...process.env, DATABASE_URL: db.databaseUrl, ORGSCAN_DATA_DIR: db.dataDir, ORGSCAN_PEPPER: 'access-log-pepper-0123456789abcdefghij', ORGSCAN_SEED_DEMO: 'false', ORGSCAN_ACCESS_LOG: 'on' }
  const server = await spawnServer(env, { stderrFile: file })
  const ids = Array.from({ length: 400 }, (_, i) => `file-probe-${i}`)
  for (let i = 0; i < ids.length; i += 50) {
    const statuses = await Promise.all(ids.slice(i, i + 50).map(async (id) => (await fetch(`${server.url}/healthz`, { headers: { 'x-request-id': id } })).status))
    t.ok(statuses.every((s) => s === 200), `requests ${i}–${i + 49} answered`)
  }
  t.equal(await server.stop(), 0, 'exits 0 on SIGTERM')
  const lines = readFileSync(file, 'utf8').split('\n').filter((l) => l.includes('"file-probe-'))
  const seen = lines.map((l) => (JSON.parse(l) as AccessLine).requestId)
  t.equal(seen.length, ids.length, 'one line per request, none lost at exit')
  t.same(new Set(seen), new Set(ids), 'each request\'s own line')
})
