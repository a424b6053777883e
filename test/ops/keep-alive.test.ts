/**
 * Keep-alive (docs/operating.md "Health, request ids and stopping"): an idle keep-alive connection stays open for
 * ORGSCAN_KEEP_ALIVE_MS, longer than a load balancer keeps one (60 s), and says so in `Keep-Alive: timeout=N`; the
 * shorter ORGSCAN_IDLE_SOCKET_MS and Node's head and request timeouts do not cut it while it waits for its next request.
 * The default is shown through the header; the bound itself with a small configured value.
 */
import { t } from '../helpers/file-test.ts'
import { connect, type Socket } from 'node:net'
import { startTestService } from '../helpers/service.ts'
import { loadConfig } from '../../runtime/platform/config.ts'

/** A raw connection: send a request, read one whole answer's head; know when the server closed it. */
function rawConnection(url: string) {
  const u = new URL(url)
  const socket: Socket = connect({ host: u.hostname, port: Number(u.port) })
  let received = ''
  let closedAt: number | undefined
  const waiting = new Set<() => void>()
  socket.setEncoding('latin1')
  socket.on('data', (d: string) => {
    received += d
    waiting.forEach((f) => f())
  })
  socket.on('error', () => undefined)
  socket.on('close', () => {
    closedAt = Date.now()
    waiting.forEach((f) => f())
  })
  return {
    closedAt: () => closedAt,
    closed: () => new Promise<number>((resolve) => (closedAt !== undefined ? resolve(closedAt) : socket.once('close', () => resolve(closedAt!)))),
    /** Sends GET `path` and resolves with the answer's status and headers (lowercase names), or undefined if the connection closed first. */
    get(path: string) {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: ${u.host}\r\n\r\n`)
      return new Promise<{ status: number; headers: Record<string, string> } | undefined>((resolve) => {
        const look = () => {
          const end = received.indexOf('\r\n\r\n')
          const head = end < 0 ? '' : received.slice(0, end)
          const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? NaN)
          if (end >= 0 && received.length >= end + 4 + length) {
            received = received.slice(end + 4 + length)
            waiting.delete(look)
            const headers = Object.fromEntries(head.split('\r\n').slice(1).map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]))
            return resolve({ status: Number(head.slice(9, 12)), headers })
          }
          if (closedAt !== undefined) {
            waiting.delete(look)
            resolve(undefined)
          }
        }
        waiting.add(look)
        look()
      })
    },
    destroy: () => socket.destroy(),
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

t.test('ORGSCAN_KEEP_ALIVE_MS: 65 s by default (above a load balancer\'s 60 s), at least 1 s, and said in Keep-Alive', async (t) => {
  t.equal(loadConfig({}).keepAliveMs, 65_000)
  t.equal(loadConfig({ ORGSCAN_KEEP_ALIVE_MS: '120000' }).keepAliveMs, 120_000)
  t.throws(() => loadConfig({ ORGSCAN_KEEP_ALIVE_MS: '999' }), /ORGSCAN_KEEP_ALIVE_MS/, 'under a second is refused (the header counts whole seconds)')
  t.throws(() => loadConfig({ ORGSCAN_KEEP_ALIVE_MS: '65s' }), /ORGSCAN_KEEP_ALIVE_MS: must be a whole number/)
  const ts = await startTestService(t, { seed: false })
  const c = rawConnection(ts.url)
  t.teardown(() => c.destroy())
  const a = await c.get('/healthz')
  t.equal(a?.status, 200)
  t.equal(a?.headers.connection, 'keep-alive')
  const timeout = Number(/^timeout=(\d+)/.exec(a?.headers['keep-alive'] ?? '')?.[1])
  t.ok(timeout >= 60, `Keep-Alive: ${a?.headers['keep-alive']} (at least 60 s, so a load balancer closes an idle connection first)`)
})

t.test('an idle keep-alive connection outlives ORGSCAN_IDLE_SOCKET_MS and the request timeouts, and closes after ORGSCAN_KEEP_ALIVE_MS', async (t) => {
  // Keep-alive 2 s; a connection with nothing read or written is closed after 300 ms, and a request's head and body
  // have 1 s (checked every 250 ms).
  const ts = await startTestService(t, { seed: false, config: { keepAliveMs: 2000, idleSocketMs: 300, requestTimeoutMs: 1000 } })
  const c = rawConnection(ts.url)
  t.teardown(() => c.destroy())
  const first = await c.get('/healthz')
  t.equal(first?.status, 200)
  t.equal(first?.headers['keep-alive'], 'timeout=2', 'the configured time, in whole seconds')
  await sleep(1300)
  t.equal(c.closedAt(), undefined, 'still open after 1.3 s idle: more than the idle-socket bound and the request timeout')
  const second = await c.get('/healthz')
  t.equal(second?.status, 200, 'and a request on it is answered')
  const idleFrom = Date.now()
  const closedAt = await Promise.race([c.closed(), sleep(10_000).then(() => undefined)])
  t.ok(closedAt !== undefined, 'the server closes it once idle for the keep-alive time')
  const idle = closedAt! - idleFrom
  // Node closes it a second after the time it advertises, so that a client never sends on a connection being closed.
  t.ok(idle >= 1900 && idle < 6000, `closed after ${idle} ms idle (keep-alive 2000 ms; Node adds 1 s)`)
})

t.test('a connection that stops in the middle of its request is still closed after ORGSCAN_IDLE_SOCKET_MS', async (t) => {
  const ts = await startTestService(t, { seed: false, config: { keepAliveMs: 60_000, idleSocketMs: 300 } })
  const u = new URL(ts.url)
  const socket = connect({ host: u.hostname, port: Number(u.port) })
  t.teardown(() => socket.destroy())
  socket.on('error', () => undefined)
  await new Promise<void>((r) => socket.once('connect', () => r()))
  const t0 = Date.now()
  socket.write(`GET /healthz HTTP/1.1\r\nHost: ${u.host}\r\n`) // the head never ends
  await new Promise<void>((r) => socket.once('close', () => r()))
  const after = Date.now() - t0
  t.ok(after >= 250 && after < 5000, `closed after ${after} ms: the keep-alive time does not extend a stalled request`)
})
