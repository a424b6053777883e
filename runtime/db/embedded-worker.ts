/**
 * The embedded-database worker thread: owns the PGlite instance and serves it with PGLiteSocketServer,
 * so the WASM Postgres runs off the HTTP thread. Started by embedded.ts through embedded-worker-boot.mjs.
 *
 * Protocol with the main thread (postMessage):
 *   worker → main  { type: 'ready', endpoint, openMs }   listening; PGlite is open
 *                  { type: 'fatal', message, stack }     startup failed / crashed (the worker then exits)
 *                  { type: 'closed', error? }            after a 'close' request: server stopped, PGlite closed
 *   main → worker  { type: 'close' }
 */
import fs from 'node:fs'
import { parentPort, workerData } from 'node:worker_threads'
import { PGlite } from '@electric-sql/pglite'
import { PGLiteSocketServer } from '@electric-sql/pglite-socket'

export type EmbeddedEndpoint = { path: string } | { host: string; port: number }

export interface WorkerInput {
  /** Absolute folder path, or 'memory://'. */
  dataDir: string
  /** Unix socket path to listen on; without it: TCP on 127.0.0.1, port chosen by the OS. */
  socketPath?: string
}

export type WorkerMessage =
  | { type: 'ready'; endpoint: EmbeddedEndpoint; openMs: number }
  | { type: 'fatal'; message: string; stack?: string }
  | { type: 'closed'; error?: string }

export type MainMessage = { type: 'close' }

const port = parentPort
if (!port) throw new Error('embedded-worker.ts must run in a worker thread (see runtime/db/embedded.ts)')
const input = (workerData as { input: WorkerInput }).input

let db: PGlite | undefined
let server: PGLiteSocketServer | undefined
let closing = false

function post(msg: WorkerMessage): void {
  port!.postMessage(msg)
}

function fatal(err: unknown): never {
  const e = err instanceof Error ? err : new Error(String(err))
  post({ type: 'fatal', message: e.message, stack: e.stack })
  process.exit(1) // in a worker: ends this thread only
}

process.on('unhandledRejection', (err) => {
  // pglite-socket's stop() detaches handlers without awaiting them; a late ROLLBACK on a closed PGlite
  // is expected noise while closing. Anything else is a real crash.
  if (closing) return
  fatal(err)
})

async function start(): Promise<void> {
  const t0 = performance.now()
  db = await PGlite.create(input.dataDir === 'memory://' ? undefined : input.dataDir)
  // PGlite ignores startup parameters (TimeZone, application_name sent by postgres.js), and every
  // client connection is multiplexed onto this one PGlite session — so session settings are made here,
  // once, and stay for all connections.
  await db.exec(`SET TIME ZONE 'UTC'; SET application_name = 'orgscan'`)
  const openMs = performance.now() - t0

  if (input.socketPath) {
    // A socket file left by a crashed process would make listen() fail with EADDRINUSE. We hold the
    // data-folder lock, so nobody else can be listening on it.
    fs.rmSync(input.socketPath, { force: true })
  }
  // maxConnections 1: the server multiplexes every connection onto the single PGlite session, so two
  // clients could interleave extended-protocol messages and prepared statements. The main thread
  // uses a postgres.js pool of exactly one connection.
  server = input.socketPath
    ? new PGLiteSocketServer({ db, path: input.socketPath, maxConnections: 1 })
    : new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 1 })
  await server.start()

  let endpoint: EmbeddedEndpoint
  if (input.socketPath) {
    endpoint = { path: input.socketPath }
  } else {
    const conn = server.getServerConn() // "127.0.0.1:<port>"
    const at = conn.lastIndexOf(':')
    endpoint = { host: conn.slice(0, at), port: Number(conn.slice(at + 1)) }
  }
  post({ type: 'ready', endpoint, openMs })
}

const started = start()
started.catch(fatal)

port.on('message', (msg: MainMessage) => {
  if (msg.type !== 'close' || closing) return
  closing = true
  void (async () => {
    let error: string | undefined
    try {
      await started.catch(() => {})
      await server?.stop()
      // Closing PGlite shuts Postgres down cleanly (checkpoint), so the folder reopens without recovery.
      if (db && !db.closed) await db.close()
    } catch (err) {
      error = err instanceof Error ? err.message : String(err)
    }
    post({ type: 'closed', error })
    port.close()
  })()
})
