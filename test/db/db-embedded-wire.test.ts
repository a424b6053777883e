/**
 * The embedded database's wire-protocol server (runtime/platform/db/embedded-wire.mjs), spoken to byte by byte with a raw
 * socket: messages split across reads and several in one read, the SSL request, one connection at a time, a
 * transaction left open by a closed connection, malformed and cancel requests. On the run on the embedded database only.
 */
import { t } from '../helpers/file-test.ts'
import fs from 'node:fs'
import net from 'node:net'
import { openDatabase, embeddedHostOf } from '../../runtime/platform/db/connect.ts'
import { completeMessages } from '../../runtime/platform/db/embedded-wire.mjs'
import { findTemplate } from '../helpers/templates.ts'
import { scratchFolderPrefix } from '../helpers/test-db.ts'
import { embeddedRunOnly } from '../helpers/runs.ts'

embeddedRunOnly(t, 'The embedded database’s wire server')

const dir = fs.mkdtempSync(scratchFolderPrefix())
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
const template = findTemplate('empty', false)
if (template) fs.cpSync(template.dir, dir, { recursive: true })
const db = await openDatabase({ dataDir: dir })
const endpoint = embeddedHostOf(db)!.endpoint
// The pool's one connection would hold the server's only slot: the raw sockets below take it instead.
await db.sql.end()
t.teardown(() => db.close())

interface Reply { type: string; body: Buffer }

/** A raw connection: what it received, parsed into messages as they complete. */
class Raw {
  socket: net.Socket
  replies: Reply[] = []
  bytes = Buffer.alloc(0)
  ended = false
  private waiters: Array<() => void> = []
  constructor() {
    this.socket = 'path' in endpoint ? net.connect(endpoint.path) : net.connect(endpoint.port, endpoint.host)
    this.socket.on('data', (d) => {
      this.bytes = Buffer.concat([this.bytes, d])
      this.wake()
    })
    this.socket.on('close', () => {
      this.ended = true
      this.wake()
    })
    this.socket.on('error', () => undefined)
  }
  private wake(): void {
    for (const w of this.waiters.splice(0)) w()
  }
  /** Takes typed messages out of the received bytes. */
  private parse(): void {
    while (this.bytes.length >= 5 && this.bytes.length >= 1 + this.bytes.readInt32BE(1)) {
      const len = this.bytes.readInt32BE(1)
      this.replies.push({ type: String.fromCharCode(this.bytes[0]!), body: this.bytes.subarray(5, 1 + len) })
      this.bytes = this.bytes.subarray(1 + len)
    }
  }
  /** Waits until `n` ReadyForQuery messages have arrived (or the connection closed); returns every message so far. */
  async untilReady(n = 1, timeoutMs = 10_000): Promise<Reply[]> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      this.parse()
      if (this.replies.filter((r) => r.type === 'Z').length >= n || this.ended) return this.replies
      if (Date.now() > deadline) throw new Error(`no ReadyForQuery ×${n} within ${timeoutMs} ms`)
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve)
        setTimeout(resolve, 100)
      })
    }
  }
  async closed(timeoutMs = 5_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs
    while (!this.ended && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    return this.ended
  }
  send(b: Buffer): void {
    this.socket.write(b)
  }
  end(): Promise<void> {
    return new Promise((resolve) => {
      if (this.ended) return resolve()
      this.socket.once('close', () => resolve())
      this.socket.destroy()
    })
  }
}

function startup(): Buffer {
  const params = Buffer.from('user\0postgres\0database\0postgres\0\0')
  const b = Buffer.alloc(8 + params.length)
  b.writeInt32BE(b.length, 0)
  b.writeInt32BE(196608, 4)
  params.copy(b, 8)
  return b
}
function query(sql: string): Buffer {
  const text = Buffer.from(sql + '\0')
  const b = Buffer.alloc(5 + text.length)
  b.write('Q', 0)
  b.writeInt32BE(4 + text.length, 1)
  text.copy(b, 5)
  return b
}
/** The text of each DataRow's first column. */
const values = (replies: Reply[]) => replies.filter((r) => r.type === 'D').map((r) => r.body.subarray(6, 6 + r.body.readInt32BE(2)).toString())
/** The transaction status of the last ReadyForQuery: I idle, T in a transaction, E in a failed one. */
const status = (replies: Reply[]) => String.fromCharCode(replies.filter((r) => r.type === 'Z').at(-1)!.body[0]!)

/** A connection past its startup (ReadyForQuery received). */
async function connected(): Promise<Raw> {
  const c = new Raw()
  c.send(startup())
  const r = await c.untilReady()
  if (!r.some((m) => m.type === 'R')) throw new Error('no AuthenticationOk')
  c.replies = []
  return c
}

/**
 * A connection past its startup once the server has seen the previous one close (it takes one at a time, and closes
 * a connection that arrives while another is open).
 */
async function connectedAfterClose(): Promise<Raw> {
  const deadline = Date.now() + 5_000
  for (;;) {
    const c = new Raw()
    c.send(startup())
    const r = await c.untilReady()
    if (r.some((m) => m.type === 'Z')) {
      c.replies = []
      return c
    }
    await c.end()
    if (Date.now() > deadline) throw new Error('the server did not take a new connection within 5 s')
  }
}

t.test('completeMessages: only whole messages, several at once', async (t) => {
  const two = Buffer.concat([query('select 1'), query('select 2')])
  t.equal(completeMessages(two), two.length)
  t.equal(completeMessages(two.subarray(0, two.length - 1)), query('select 1').length, 'the incomplete second waits')
  t.equal(completeMessages(two.subarray(0, 4)), 0, 'not even a header')
  const bad = Buffer.from([0x51, 0, 0, 0, 2])
  t.throws(() => completeMessages(bad), /length 2/, 'a length under 4 is refused')
})

t.test('a startup and a query sent one byte at a time get their answers', async (t) => {
  const c = new Raw()
  const bytes = Buffer.concat([startup(), query('select 40 + 2')])
  for (const b of bytes) {
    c.send(Buffer.from([b]))
    await new Promise((r) => setImmediate(r))
  }
  const r = await c.untilReady(2)
  t.same(values(r), ['42'])
  t.equal(status(r), 'I')
  await c.end()
})

t.test('an SSL request is answered N, and the startup that follows works', async (t) => {
  const c = new Raw()
  const ssl = Buffer.alloc(8)
  ssl.writeInt32BE(8, 0)
  ssl.writeInt32BE(80877103, 4)
  c.send(ssl)
  const deadline = Date.now() + 5_000
  while (c.bytes.length < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
  t.equal(c.bytes.subarray(0, 1).toString(), 'N')
  c.bytes = c.bytes.subarray(1)
  c.send(startup())
  await c.untilReady()
  c.replies = []
  c.send(query('select 7'))
  t.same(values(await c.untilReady()), ['7'])
  await c.end()
})

t.test('several queries in one write are answered in order', async (t) => {
  const c = await connected()
  c.send(Buffer.concat([query('select 1'), query('select 2'), query('select 3')]))
  const r = await c.untilReady(3)
  t.same(values(r), ['1', '2', '3'])
  await c.end()
})

t.test('one connection at a time: a second is closed while the first is open', async (t) => {
  const first = await connected()
  const second = new Raw()
  second.send(startup())
  t.ok(await second.closed(), 'the second connection is closed by the server')
  t.notOk(second.replies.length > 0 || second.bytes.length > 0, 'and got no answer')
  first.send(query('select 1'))
  t.same(values(await first.untilReady()), ['1'], 'the first still works')
  await first.end()
})

t.test('a connection closed inside a transaction leaves none behind', async (t) => {
  const a = await connected()
  a.send(query('BEGIN; CREATE TABLE wire_left_open (x int)'))
  t.equal(status(await a.untilReady()), 'T', 'in a transaction')
  await a.end()
  const b = await connectedAfterClose()
  b.send(query(`select count(*) from pg_tables where tablename = 'wire_left_open'`))
  const r = await b.untilReady()
  t.same(values(r), ['0'], 'the table of the abandoned transaction does not exist')
  t.equal(status(r), 'I', 'the session is idle, not inside the old transaction')
  await b.end()
})

t.test('a malformed message or a cancel request closes that connection only', async (t) => {
  const bad = await connected()
  bad.send(Buffer.from([0x51, 0, 0, 0, 1]))
  t.ok(await bad.closed(), 'a message length under 4 closes the connection')

  const cancel = new Raw()
  const req = Buffer.alloc(16)
  req.writeInt32BE(16, 0)
  req.writeInt32BE(80877102, 4)
  cancel.send(req)
  t.ok(await cancel.closed(), 'a cancel request is closed')

  const ok = await connectedAfterClose()
  ok.send(query('select 5'))
  t.same(values(await ok.untilReady()), ['5'], 'the server still serves')
  await ok.end()
})
