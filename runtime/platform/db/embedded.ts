/**
 * Host of the embedded PGlite database, main-thread side.
 *
 * PGlite (Postgres compiled to WASM) runs in a `worker_threads` Worker that serves it over the
 * Postgres wire protocol (embedded-wire.mjs); the main thread talks to it with postgres.js like to
 * any server. Measured: ~1,700 req/s with PGlite on the HTTP thread vs ~2,900 with PGlite off it.
 *
 * Why a worker thread and not a child process: the worker dies with the process, so a crashed or
 * SIGKILLed orgscan can never leave an orphaned PGlite still writing to a folder whose lock (pid of the
 * dead parent) looks stale to the next start; the lock is simply the pid of the process that calls
 * `openDatabase`. Startup is also cheaper (no second Node process). A crash inside PGlite is still
 * isolated enough: it ends the worker, and pending work fails with a clear error (see `connect()`).
 *
 * The endpoint is a Unix socket `<dataDir>/.s.PGSQL.5432` (for 'memory://', in a private temp folder).
 * If that path is too long for a Unix socket (sun_path: 108 bytes on Linux, 104 on macOS), the server
 * falls back to TCP on 127.0.0.1 with an OS-chosen port. Caveat of that fallback: PGlite has no
 * authentication, so other local users could connect to that port while the pool's single connection
 * is not holding the server's only slot.
 */
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { Duplex } from 'node:stream'
import { Worker } from 'node:worker_threads'
import type { EmbeddedEndpoint, MainMessage, WorkerInput, WorkerMessage } from './embedded-protocol.ts'

export type { EmbeddedEndpoint } from './embedded-protocol.ts'

/** Longest Unix socket path used; longer ones fall back to TCP. */
const MAX_SOCKET_PATH_BYTES = 100
const SOCKET_FILE_NAME = '.s.PGSQL.5432'
/** How long close() waits for the worker to stop the server and close PGlite before terminating it. */
const CLOSE_TIMEOUT_MS = 30_000
/** After the server side closes a connection, how long to wait for the worker's exit to explain why. */
const DEATH_GRACE_MS = 1_000

export interface EmbeddedHost {
  readonly endpoint: EmbeddedEndpoint
  /** Milliseconds PGlite took to open inside the worker (includes initdb on a new folder). */
  readonly openMs: number
  /** The worker thread (diagnostics and tests). */
  readonly worker: Worker
  /** Set once the worker has died unexpectedly: the error every later connect() rejects with. */
  readonly failure: Error | undefined
  /**
   * postgres.js `socket` option: resolves a connected socket to the server. Once the worker has died
   * (or the host is stopped) it resolves a socket that fails with a clear error, and sockets open at the
   * time of an unexpected worker death fail with that same error: queries reject, never hang.
   */
  connect(): Promise<net.Socket>
  /**
   * Stops the socket server and closes PGlite (flushes data); then the worker is terminated, or, after a clean close,
   * kept for the next open in this process (`keptWorkers`). Idempotent.
   */
  stop(): Promise<void>
}

/**
 * Starts the worker for `dataDir` (absolute folder path, or 'memory://') and resolves once it listens.
 * The caller must hold the data-folder lock (lock.ts) for a folder. `onNoSpace`: a write to the folder failed for
 * want of disk space (at most once a second).
 */
export async function startEmbeddedHost(dataDir: string, hooks: { onNoSpace?: () => void } = {}): Promise<EmbeddedHost> {
  const memory = dataDir === 'memory://'
  let tempDir: string | undefined
  let socketPath: string | undefined
  if (memory) {
    tempDir = fs.mkdtempSync(path.join(os.tmpdir(), 'orgscan-pglite-'))
    socketPath = path.join(tempDir, SOCKET_FILE_NAME)
  } else {
    socketPath = path.join(dataDir, SOCKET_FILE_NAME)
  }
  if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH_BYTES) socketPath = undefined
  if (tempDir) trackTempDir(tempDir)
  const removeTempDir = () => {
    if (!tempDir) return
    fs.rmSync(tempDir, { recursive: true, force: true })
    tempDirs.delete(tempDir)
  }

  const input: WorkerInput = { dataDir, socketPath }
  // A thread kept from a database closed cleanly in this process, given this database; else a new one.
  const kept = keptWorkers.pop()
  const worker =
    kept?.take(input) ??
    new Worker(new URL('./embedded-worker.mjs', import.meta.url), {
      workerData: { input },
      // Nothing inherited from the parent: the worker is plain JavaScript, and copying process.execArgv verbatim
      // would throw ERR_WORKER_INVALID_EXEC_ARGV for per-process flags such as --max-old-space-size.
      execArgv: [],
    })

  let failure: Error | undefined // set once the worker is gone unexpectedly
  let stopping = false
  let exited = false
  let isReady = false
  let lastFatal: { message: string; stack?: string } | undefined
  let closedReply: ((msg: { error?: string }) => void) | undefined
  const exitWaiters: Array<() => void> = []
  const sockets = new Set<net.Socket>()
  /** Why a socket was killed by us; delivered to postgres.js when it closes (see connect()). */
  const socketErrors = new WeakMap<net.Socket, Error>()

  let onMessage: (msg: WorkerMessage) => void = () => {}
  const onError = (err: Error) => {
    lastFatal ??= err
  }
  let onExit: (code: number) => void = () => {}
  const ready = new Promise<{ endpoint: EmbeddedEndpoint; openMs: number }>((resolve, reject) => {
    onMessage = (msg) => {
      if (msg.type === 'ready') {
        isReady = true
        resolve(msg)
      } else if (msg.type === 'fatal') lastFatal = msg
      else if (msg.type === 'closed') closedReply?.(msg)
      else if (msg.type === 'noSpace') hooks.onNoSpace?.()
    }
    onExit = (code) => {
      exited = true
      for (const w of exitWaiters.splice(0)) w()
      if (stopping) return
      const what = `PGlite for ${memory ? 'memory://' : dataDir}`
      const reason = lastFatal ? `: ${firstLine(lastFatal.message)}` : ''
      failure = new Error(
        isReady
          ? `The embedded database worker (${what}) stopped unexpectedly (exit code ${code})${reason}`
          : `The embedded database (${what}) could not be started${reason || ` (worker exit code ${code})`}`,
      )
      // The worker's stack, for logs (error.workerStack).
      if (lastFatal?.stack) Object.assign(failure, { workerStack: lastFatal.stack })
      for (const s of sockets) kill(s, failure)
      removeTempDir()
      reject(failure)
    }
  })
  worker.on('message', onMessage)
  worker.on('error', onError)
  worker.on('exit', onExit)

  let started: { endpoint: EmbeddedEndpoint; openMs: number }
  try {
    started = await ready
  } catch (err) {
    removeTempDir()
    throw err
  }
  const { endpoint, openMs } = started

  const waitExit = (ms: number) =>
    new Promise<boolean>((resolve) => {
      if (exited) return resolve(true)
      const timer = setTimeout(() => resolve(false), ms)
      exitWaiters.push(() => {
        clearTimeout(timer)
        resolve(true)
      })
    })

  function connect(): Promise<net.Socket> {
    if (failure || stopping) return Promise.resolve(failedSocket(failure ?? new Error('The embedded database is closed')))
    return new Promise((resolve) => {
      // allowHalfOpen: when the server ends the connection we get 'end' first and decide what error
      // postgres.js sees (see onEnd), instead of an anonymous CONNECTION_CLOSED.
      const socket =
        'path' in endpoint
          ? net.connect({ path: endpoint.path, allowHalfOpen: true })
          : net.connect({ host: endpoint.host, port: endpoint.port, allowHalfOpen: true })
      const onConnectError = (err: Error) => resolve(failedSocket(failure ?? err))
      socket.once('error', onConnectError)
      socket.once('connect', () => {
        socket.off('error', onConnectError)
        if (failure) {
          socket.destroy()
          return resolve(failedSocket(failure))
        }
        sockets.add(socket)
        socket.once('end', () => void onEnd(socket))
        deliverErrorOnClose(socket, () => {
          sockets.delete(socket)
          if (socketErrors.has(socket)) return socketErrors.get(socket)
          if (socket.writableEnded || stopping) return undefined // normal close
          return failure ?? new Error('The embedded database connection was closed unexpectedly')
        })
        resolve(socket)
      })
    })
  }

  /**
   * How connection failures reach postgres.js. Two postgres.js 3.4 behaviours shape this:
   * - when the `socket` factory rejects, the connection stays in its "connecting" state and every later
   *   query waits forever; so connect() never rejects, it resolves a socket that fails (failedSocket);
   * - queries written between a socket 'error' and the following 'close' are forgotten (it only fails
   *   pending queries on a close *without* error), and net.Socket emits 'close' a loop turn after
   *   'error'; so sockets are destroyed without an error, and the error is emitted by a 'close'
   *   listener registered before postgres.js's own — it rejects every pending query, then postgres.js
   *   handles the close and later queries open a new connection (which fails the same way).
   */
  function deliverErrorOnClose(socket: Duplex, errorFor: () => Error | undefined): void {
    socket.once('close', () => {
      const err = errorFor()
      if (err && socket.listenerCount('error') > 0) socket.emit('error', err)
    })
  }

  /** A socket that fails with `err` as soon as postgres.js has attached its listeners. */
  function failedSocket(err: Error): net.Socket {
    const socket = new Duplex({
      read() {},
      write(_chunk, _encoding, callback) {
        callback()
      },
    })
    deliverErrorOnClose(socket, () => err)
    setImmediate(() => socket.destroy())
    return socket as unknown as net.Socket
  }

  function kill(socket: net.Socket, err: Error): void {
    if (!socketErrors.has(socket)) socketErrors.set(socket, err)
    socket.destroy()
  }

  /** The server closed a connection. Normal only while stopping; otherwise most likely the worker died. */
  async function onEnd(socket: net.Socket): Promise<void> {
    // We ended first (postgres.js sql.end(), idle close): the server's end just completes the close.
    if (socket.writableEnded || socket.destroyed) return
    if (stopping) return void socket.end()
    await waitExit(DEATH_GRACE_MS)
    kill(socket, failure ?? new Error('The embedded database server closed the connection unexpectedly'))
  }

  let stopped: Promise<void> | undefined
  function stop(): Promise<void> {
    stopped ??= (async () => {
      stopping = true
      let closeError: string | undefined
      if (!exited) {
        // The reply, or nothing once the worker exits or the time is up (the timer must not outlive the reply: the
        // worker no longer exits after a clean close, and a pending timer would hold the process open).
        const reply = new Promise<{ error?: string } | undefined>((resolve) => {
          const timer = setTimeout(() => resolve(undefined), CLOSE_TIMEOUT_MS)
          const settle = (msg: { error?: string } | undefined) => {
            clearTimeout(timer)
            resolve(msg)
          }
          closedReply = settle
          exitWaiters.push(() => settle(undefined))
        })
        worker.postMessage({ type: 'close' } satisfies MainMessage)
        const msg = await reply
        if (msg) closeError = msg.error
        else if (exited) closeError = 'the worker exited before PGlite was closed'
        else closeError = `the worker did not close PGlite within ${CLOSE_TIMEOUT_MS} ms`
      }
      for (const s of sockets) s.destroy()
      sockets.clear()
      worker.off('message', onMessage)
      worker.off('error', onError)
      worker.off('exit', onExit)
      // PGlite closed cleanly: the thread is kept for the next open in this process, if there is room.
      if (closeError || exited || !keep(worker)) await worker.terminate()
      removeTempDir()
      if (closeError) throw new Error(`Closing the embedded database failed: ${closeError}`)
    })()
    return stopped
  }

  return {
    endpoint,
    openMs,
    worker,
    get failure() {
      return failure
    },
    connect,
    stop,
  }
}

/**
 * Threads of embedded databases closed cleanly, kept for the next open in this process: a kept thread opens the next
 * database in about half the CPU of a new one (no thread and Node environment to start, PGlite's code loaded and its
 * WebAssembly compiled already; docs/adr/0044-test-databases-from-templates.md). A process opens its database once when
 * serving; the processes that open many one after the other (the tests, a command reopening its folder) are what this
 * is for. A kept thread holds no database and no folder, does not keep the process alive (`unref`), and at most
 * KEPT_WORKERS are kept (the rest are terminated).
 */
const KEPT_WORKERS = 2
const keptWorkers: Array<{ take(input: WorkerInput): Worker }> = []

/** Keeps `worker` (its PGlite closed cleanly) for the next open, if there is room; false when there is not. */
function keep(worker: Worker): boolean {
  if (keptWorkers.length >= KEPT_WORKERS) return false
  // A kept thread that dies (it should not: it runs nothing) leaves the list; 'error' needs a listener, or it throws.
  const drop = () => {
    const i = keptWorkers.indexOf(entry)
    if (i >= 0) keptWorkers.splice(i, 1)
  }
  const entry = {
    take(input: WorkerInput): Worker {
      worker.off('exit', drop)
      worker.off('error', drop)
      worker.ref()
      worker.postMessage({ type: 'open', input } satisfies MainMessage)
      return worker
    },
  }
  worker.on('exit', drop)
  worker.on('error', drop)
  worker.unref()
  keptWorkers.push(entry)
  return true
}

/** Socket folders of memory:// databases, removed on process exit if close() was never called. */
const tempDirs = new Set<string>()
let tempDirExitHook = false
function trackTempDir(dir: string): void {
  if (!tempDirExitHook) {
    tempDirExitHook = true
    process.on('exit', () => {
      for (const d of tempDirs) fs.rmSync(d, { recursive: true, force: true })
    })
  }
  tempDirs.add(dir)
}

function firstLine(s: string): string {
  return (s.split('\n', 1)[0] ?? s).trim()
}
