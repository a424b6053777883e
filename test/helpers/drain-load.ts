/**
 * SIGTERM under keep-alive load, for the drain tests (test/processes/drain*.test.ts): a served process (`orgscan serve`)
 * answers 16 keep-alive connections sending requests back to back, plus a few keep-alive connections that wait, when
 * it gets SIGTERM; what every request got is checked against when the listener closed.
 *
 * When the listener closed: the service logs its "draining" line just before closing its listeners, so a request
 * whose write completed in an earlier millisecond than that line's time was written while the listener was open (with
 * workers, each logs one: the earliest counts), and one written in a later millisecond than the line (the latest, with
 * workers) was read by a draining process.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'
import { connect as netConnect, type Socket } from 'node:net'
import { connect as tlsConnect } from 'node:tls'
import { readFileSync, readlinkSync } from 'node:fs'
import type { Test } from 'tap'
import { basic } from './service.ts'
import { spawnServer, type ServerProcess } from './server-process.ts'
import { createTestDatabase } from './test-db.ts'
import { childPids } from './proc.ts'
import { DEMO_ORG_DEFS } from '../../demo/seed.ts'

export const CONNECTIONS = 16
/** How long each run sends requests before the SIGTERM. */
const LOAD_MS = 700

/** One request as the client saw it. */
export interface Sent {
  /** When its last byte was handed to the kernel (Date.now()); undefined: never written. */
  writtenAt?: number
  status?: number
  connection?: string
  /** The error code of an answer other than 200 (its body's error.code). */
  code?: string
  error?: string
  /** Sent on a connection that had carried an earlier request. */
  reused?: boolean
}

export interface Target {
  url: string
  path: string
  headers: Record<string, string>
}

/** A database of the test's own, and the environment of a server on it that seeds (and prints) a small demo on its first start. */
export async function serverEnv(t: Test, extra: Record<string, string> = {}): Promise<NodeJS.ProcessEnv> {
  const db = await createTestDatabase({ template: 'empty' })
  t.teardown(() => db.drop())
  return {
    ...process.env,
    DATABASE_URL: db.databaseUrl,
    ORGSCAN_DATA_DIR: db.dataDir,
    ORGSCAN_PEPPER: 'drain-pepper-0123456789abcdefghijklmnop',
    ORGSCAN_SEED_DEMO: 'true',
    ORGSCAN_SEED_SCALE: '0.01',
    ORGSCAN_ACCESS_LOG: 'off',
    // Every read goes to the database: the process is busy, as a loaded one is, when the signal comes.
    ORGSCAN_CACHE_MB: '0',
    ...extra,
  }
}

/**
 * Resolves once the server's demo is complete: a first start seeds the large org (HEAVY's) after its banner, and
 * /readyz lists it until then (docs/adr/0175-first-run-under-a-minute.md).
 */
async function demoComplete(url: string, ca?: Buffer): Promise<void> {
  const readyz = () =>
    new Promise<string>((resolve) => {
      const req = (ca ? httpsRequest : httpRequest)(`${url}/readyz`, ca ? { ca } : {}, (res: IncomingMessage) => {
        let body = ''
        res.on('data', (d) => (body += d))
        res.on('end', () => resolve(body))
        res.on('error', () => resolve(''))
      })
      req.on('error', () => resolve(''))
      req.end()
    })
  for (const end = Date.now() + 60_000; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) {
    const body = await readyz()
    if (body.includes('"status":"ready"') && !body.includes('"seeding"')) return
  }
  throw new Error(`the demo's large org was not seeded within 60 s (${url}/readyz)`)
}

/** What one run saw: every request, the times of the first and last "draining" lines, and the server's exit code. */
export interface Run {
  sent: Sent[]
  drainFirst: number
  drainLast: number
  exitCode: number | null
}

/**
 * One run: a server started with `env`; `CONNECTIONS` keep-alive connections spread over the targets `targetsOf` names,
 * each sending its next request as soon as the last is answered, and `IDLE_PER_TARGET` waiting ones per target; after
 * `LOAD_MS`, SIGTERM. Each loop ends at its first error (after the listener closed, a new connection is refused).
 */
export async function run(env: NodeJS.ProcessEnv, targetsOf: (info: { url: string; mcpUrl: string; auth: string }) => Target[], ca?: Buffer): Promise<Run> {
  const server = await spawnServer(env)
  let paused: number[] = []
  try {
    await demoComplete(server.url, ca)
    const demo = server.info.demoKey!
    const auth = basic(demo.keyId, demo.secret)
    const agent = ca ? new HttpsAgent({ keepAlive: true, maxSockets: CONNECTIONS, ca }) : new HttpAgent({ keepAlive: true, maxSockets: CONNECTIONS })
    const sent: Sent[] = []
    const once = (target: Target) =>
      new Promise<Sent>((resolve) => {
        const s: Sent = {}
        const send = ca ? httpsRequest : httpRequest
        const req = send(target.url + target.path, { agent, headers: target.headers }, (res: IncomingMessage) => {
          s.status = res.statusCode
          s.connection = res.headers.connection
          let body = ''
          if (res.statusCode === 200) res.resume()
          else res.on('data', (d: Buffer) => (body += d))
          res.on('end', () => {
            if (body) s.code = /"code":"([a-z_]+)"/.exec(body)?.[1]
            resolve(s)
          })
          res.on('error', (e: NodeJS.ErrnoException) => resolve(Object.assign(s, { error: e.code ?? e.message })))
        })
        req.on('socket', () => (s.reused = req.reusedSocket))
        req.on('finish', () => (s.writtenAt = Date.now()))
        req.on('error', (e: NodeJS.ErrnoException) => resolve(Object.assign(s, { error: e.code ?? e.message })))
        req.end()
      })
    const targets = targetsOf({ url: server.url, mcpUrl: server.info.mcpUrl, auth })
    const loops = Array.from({ length: CONNECTIONS }, async (_, i) => {
      const target = targets[i % targets.length]
      for (;;) {
        const s = await once(target)
        sent.push(s)
        if (s.error) return
      }
    })
    const idle = await Promise.all(targets.flatMap((target) => Array.from({ length: IDLE_PER_TARGET }, () => idleConnection(target, ca))))
    await new Promise((r) => setTimeout(r, LOAD_MS))
    // The process is paused (SIGSTOP) for a moment, as a busy machine pauses it, gets SIGTERM while paused, and
    // resumes: it then reads what was sent meanwhile in one batch, and Node acts on a signal only after the batch it
    // came with. Requests sent while that batch is handled arrive on connections that are idle to the server; so do the
    // requests then sent on the waiting connections, one every half millisecond.
    paused = servingPids(server)
    for (const pid of paused) process.kill(pid, 'SIGSTOP')
    await new Promise((r) => setTimeout(r, 30))
    process.kill(server.pid, 'SIGTERM')
    await awaitPending(paused)
    for (const pid of paused) process.kill(pid, 'SIGCONT')
    paused = []
    const raced = idle.map((c) => {
      spin(0.5)
      return c.send()
    })
    const exitCode = await server.stop(30_000)
    await Promise.all(loops)
    sent.push(...(await Promise.all(raced)))
    agent.destroy()
    const lines = server.stderr().split('\n').filter((l) => l.includes('"msg":"draining'))
    if (lines.length === 0) throw new Error(`no draining line; stderr ends: ${server.stderr().slice(-1000)}`)
    const times = lines.map((l) => Date.parse((JSON.parse(l) as { time: string }).time))
    return { sent, drainFirst: Math.min(...times), drainLast: Math.max(...times), exitCode }
  } finally {
    for (const pid of paused) process.kill(pid, 'SIGCONT')
    await server.stop(0)
  }
}

/** The processes that serve: the workers of a `--workers N` primary (its children running Node), else the process itself. */
function servingPids(server: ServerProcess): number[] {
  if (!server.info.workers) return [server.pid]
  const exe = (pid: number) => readlinkSync(`/proc/${pid}/exe`)
  return childPids(server.pid).filter((pid) => exe(pid) === exe(server.pid))
}

/**
 * Waits (at most 5 s) until SIGTERM is pending for each of `pids` (Linux: /proc/<pid>/status), which are paused: sent
 * to them directly, or by a primary passing it on to its workers.
 */
async function awaitPending(pids: number[]): Promise<void> {
  const SIGTERM_BIT = 1n << 14n
  const pending = (pid: number) => {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8')
      return [...status.matchAll(/^(?:SigPnd|ShdPnd):\s*([0-9a-f]+)$/gm)].some((m) => (BigInt('0x' + m[1]) & SIGTERM_BIT) !== 0n)
    } catch {
      return true // gone: nothing to wait for
    }
  }
  const until = Date.now() + 5000
  while (!pids.every(pending) && Date.now() < until) await new Promise((r) => setTimeout(r, 1))
}

/** Keep-alive connections per target left idle during the load, that send a request right after the SIGTERM. */
const IDLE_PER_TARGET = 4

/** Busy-waits `ms` milliseconds (a timer would be late by more than that). */
function spin(ms: number): void {
  const until = performance.now() + ms
  while (performance.now() < until);
}

/**
 * A keep-alive connection that has had one answer and then waits; `send()` writes one more request at once (raw, so the
 * write is not deferred) and resolves with what came back: an answer, or the connection's end without one.
 */
async function idleConnection(target: Target, ca?: Buffer): Promise<{ send(): Promise<Sent> }> {
  const u = new URL(target.url)
  const socket: Socket = ca ? tlsConnect({ host: u.hostname, port: Number(u.port), ca, servername: 'localhost' }) : netConnect({ host: u.hostname, port: Number(u.port) })
  const head = Object.entries({ host: u.host, ...target.headers }).map(([k, v]) => `${k}: ${v}\r\n`).join('')
  const request = `GET ${target.path} HTTP/1.1\r\n${head}\r\n`
  let received = Buffer.alloc(0)
  let error: string | undefined
  let ended = false
  const changed = new Set<() => void>()
  const notify = () => changed.forEach((f) => f())
  socket.on('data', (d: Buffer) => {
    received = Buffer.concat([received, d])
    notify()
  })
  socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code ?? e.message))
  socket.on('close', () => {
    ended = true
    notify()
  })
  /** The next whole answer, or undefined once the connection ended without one. */
  const answer = () =>
    new Promise<{ status: number; connection?: string } | undefined>((resolve) => {
      const look = () => {
        const end = received.indexOf('\r\n\r\n')
        const headText = end < 0 ? '' : received.subarray(0, end).toString('latin1')
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(headText)?.[1] ?? NaN)
        if (end >= 0 && received.length >= end + 4 + length) {
          received = received.subarray(end + 4 + length)
          changed.delete(look)
          return resolve({ status: Number(headText.slice(9, 12)), connection: /\r\nconnection: *([^\r]*)/i.exec(headText)?.[1]?.toLowerCase() })
        }
        if (ended) {
          changed.delete(look)
          resolve(undefined)
        }
      }
      changed.add(look)
      look()
    })
  // Its first request runs beside the load: on a busy machine its read may wait its account's turn past 1 s and be
  // refused with 429 and Retry-After: 1, which a client retries after that second.
  let first
  for (let attempt = 0; attempt < 5; attempt++) {
    socket.write(request)
    first = await answer()
    if (first?.status !== 429) break
    await new Promise((r) => setTimeout(r, 1000))
  }
  if (first?.status !== 200) throw new Error(`the idle connection's first request: ${first?.status ?? error}`)
  return {
    async send() {
      socket.write(request)
      const s: Sent = { writtenAt: Date.now(), reused: true }
      const a = await answer()
      socket.destroy()
      return a ? { ...s, status: a.status, connection: a.connection } : { ...s, error: error ?? 'closed without an answer' }
    },
  }
}

/** How late a client's own record of a write can be (its event loop, the TLS layer): see `keptAlive` below. */
const WRITE_CLOCK_SLACK_MS = 25

/** The run's findings, each a list that must be empty, and how many requests it had. */
function check(r: Run) {
  const { sent, drainFirst, drainLast } = r
  const line = (s: Sent) => `${s.error ?? s.status}${s.code ? ` ${s.code}` : ''} written ${s.writtenAt === undefined ? 'never' : `${s.writtenAt - drainFirst} ms after the (first) draining line`}${s.reused ? ' on a reused connection' : ' on a new connection'}`
  return {
    requests: sent.length,
    answeredAfter: sent.filter((s) => s.writtenAt !== undefined && s.writtenAt > drainLast && s.status !== undefined).length,
    // Written while the listener was open, and not answered.
    lost: sent.filter((s) => s.error !== undefined && s.writtenAt !== undefined && s.writtenAt < drainFirst).map(line),
    // Written after the drain began, answered, and still inviting the client to reuse the connection. A request's
    // `writtenAt` is taken when the client's write finished ('finish'), which on a busy client (and through TLS) can be
    // some milliseconds after the bytes went out: only one written clearly after the line counts.
    keptAlive: sent.filter((s) => s.status !== undefined && s.writtenAt !== undefined && s.writtenAt > drainLast + WRITE_CLOCK_SLACK_MS && s.connection !== 'close').map(line),
    // 503: the drain's own answer. 429 concurrency_limited: a read that waited for its account's turn past 1 s on a busy
    // machine, answered with Retry-After; an answer, not a loss.
    notOk: sent.filter((s) => s.status !== undefined && s.status !== 200 && s.status !== 503 && !(s.status === 429 && s.code === 'concurrency_limited')).map(line),
    // A refusal is only ever of a new connection (the listener closed).
    refusedReused: sent.filter((s) => s.error === 'ECONNREFUSED' && s.reused).map(line),
  }
}

export function assertRuns(t: Test, results: Run[]): void {
  let lostRuns = 0
  for (const [i, r] of results.entries()) {
    const c = check(r)
    t.ok(c.requests > CONNECTIONS * 5, `run ${i + 1}: ${c.requests} requests, ${c.answeredAfter} written after the draining line and answered`)
    t.equal(r.exitCode, 0, `run ${i + 1}: the server exited 0`)
    t.same(c.lost, [], `run ${i + 1}: every request written before the listener closed was answered`)
    t.same(c.keptAlive, [], `run ${i + 1}: every answer to a request written after the drain began says Connection: close`)
    t.same(c.notOk, [], `run ${i + 1}: answers are 200 (or 503, or 429 concurrency_limited)`)
    t.same(c.refusedReused, [], `run ${i + 1}: only new connections are refused`)
    if (c.lost.length) lostRuns++
  }
  t.equal(lostRuns, 0, `no run lost a request (${results.length} runs)`)
}

/** A page of the demo's large org's fields, read from the database each time (ORGSCAN_CACHE_MB=0). */
export const HEAVY = `/v1/orgs/${DEMO_ORG_DEFS.find((o) => o.large)!.salesforceId}/fields?limit=200`

/** The load of a run on one listener: the heavy read and /healthz, on half the connections each. */
export function onListener(url: string, auth: string): Target[] {
  return [
    { url, path: HEAVY, headers: { authorization: auth } },
    { url, path: '/healthz', headers: {} },
  ]
}
