// @ts-check
/**
 * The embedded-database worker thread: owns the PGlite instance and serves it over the wire protocol
 * (embedded-wire.mjs), so the WASM Postgres runs off the HTTP thread. Started by embedded.ts; messages in
 * embedded-protocol.ts.
 *
 * Plain JavaScript on purpose: a TypeScript worker would need tsx registered inside the worker (a Worker does
 * not inherit it), which costs about 30 MB of resident memory per process
 * (docs/adr/0008-embedded-database-pglite-worker.md).
 */
import fs from 'node:fs'
import { parentPort, workerData } from 'node:worker_threads'
import { PGlite } from '@electric-sql/pglite'
import { WireServer } from './embedded-wire.mjs'
import { PrivateNodeFS } from './embedded-fs.mjs'

const SHARED_BUFFERS = '16MB'
/** How often at most a full disk is reported to the main thread (every failed write meets it). */
const NO_SPACE_EVERY_MS = 1000

if (!parentPort) throw new Error('embedded-worker.mjs must run in a worker thread (see runtime/platform/db/embedded.ts)')
const port = parentPort
/** @type {import('./embedded-protocol.ts').WorkerInput} */
const input = workerData.input

/** @type {PGlite | undefined} */
let db
/** @type {WireServer | undefined} */
let server
/** From a 'close' request until the next 'open': PGlite is being closed, or is closed. */
let closing = false
/** The open in progress or done (a 'close' waits for it). @type {Promise<void>} */
let opened = Promise.resolve()

/** @param {import('./embedded-protocol.ts').WorkerMessage} msg */
function post(msg) {
  port.postMessage(msg)
}

let noSpaceAt = 0
/** A write to the data folder met a full disk: told to the main thread, at most once a second. */
function onNoSpace() {
  const now = performance.now()
  if (noSpaceAt !== 0 && now - noSpaceAt < NO_SPACE_EVERY_MS) return
  noSpaceAt = now
  post({ type: 'noSpace' })
}

/** @param {unknown} err @returns {never} */
function fatal(err) {
  const e = err instanceof Error ? err : new Error(String(err))
  post({ type: 'fatal', message: e.message, stack: e.stack })
  process.exit(1) // in a worker: ends this thread only
}

process.on('unhandledRejection', (err) => {
  // While closing (and until the thread is given its next database), a late ROLLBACK of a connection's transaction on
  // a closed PGlite is expected noise. Anything else is a real crash.
  if (closing) return
  fatal(err)
})

/** Opens PGlite for `input` and serves it; posts 'ready'. @param {import('./embedded-protocol.ts').WorkerInput} input */
async function open(input) {
  const t0 = performance.now()
  const memory = input.dataDir === 'memory://'
  // shared_buffers 16 MB instead of PostgreSQL's 128 MB: the buffers live in this process's WASM memory, which
  // never shrinks, while NODEFS reads are served from the OS page cache anyway. Measured on the large demo org:
  // 140 MB less resident memory, no slower scans or pages (docs/adr/0008-embedded-database-pglite-worker.md).
  const startParams = [...PGlite.defaultStartParams, '-c', `shared_buffers=${SHARED_BUFFERS}`]
  // A folder is durable: PGlite starts PostgreSQL with fsync off (-F), which lets an OS crash or a power cut lose
  // committed data or corrupt the folder. fsync() reaches the disk through PrivateNodeFS (embedded-fs.mjs);
  // fdatasync() does not (a no-op in Emscripten), hence wal_sync_method=fsync (docs/adr/0125-embedded-first-start.md).
  const durable = ['-c', 'fsync=on', '-c', 'wal_sync_method=fsync']
  const dataFs = memory ? undefined : new PrivateNodeFS(input.dataDir, { onNoSpace })
  db = await PGlite.create({ fs: dataFs, startParams: memory ? startParams : [...startParams.filter((p) => p !== '-F'), ...durable] })
  // PGlite ignores startup parameters (TimeZone, application_name sent by postgres.js), and every
  // client connection is multiplexed onto this one PGlite session — so session settings are made here,
  // once, and stay for all connections.
  // plan_cache_mode: a prepared statement keeps one plan made without its values, as on PostgreSQL's read pools
  // (runtime/platform/db/connect.ts): left to the default, every page of a list was planned again for its LIMIT and OFFSET,
  // and planning in WebAssembly is slow. Here it reaches the control statements too (quota, keys, sessions), which
  // is safe: their tables are a laptop's few rows, and a plan never changes what a statement returns
  // (docs/adr/0007-prepared-statements-generic-plans.md).
  await db.exec(`SET TIME ZONE 'UTC'; SET application_name = 'orgscan'; SET plan_cache_mode = force_generic_plan`)
  const openMs = performance.now() - t0

  if (input.socketPath) {
    // A socket file left by a crashed process would make listen() fail with EADDRINUSE. We hold the
    // data-folder lock, so nobody else can be listening on it.
    fs.rmSync(input.socketPath, { force: true })
  }
  // One connection at a time (embedded-wire.mjs): the main thread uses a postgres.js pool of exactly one connection.
  server = new WireServer(db)
  /** @type {import('./embedded-protocol.ts').EmbeddedEndpoint} */
  const endpoint = await server.listen(input.socketPath ? { path: input.socketPath } : { host: '127.0.0.1', port: 0 })
  // The socket is created with the umask's mode; like everything in the data folder, it is the owner's alone.
  if (input.socketPath) fs.chmodSync(input.socketPath, 0o600)
  post({ type: 'ready', endpoint, openMs })
}

/** Opens the thread's next database; a failure to open ends the thread. @param {import('./embedded-protocol.ts').WorkerInput} next */
function begin(next) {
  closing = false
  opened = open(next)
  opened.catch(fatal)
}

begin(input)

port.on('message', (/** @type {import('./embedded-protocol.ts').MainMessage} */ msg) => {
  if (msg.type === 'open') {
    // A thread kept by embedded.ts after a clean close, given its next database.
    if (!closing) return fatal(new Error('open requested while a database is open'))
    return begin(msg.input)
  }
  if (msg.type !== 'close' || closing) return
  closing = true
  void (async () => {
    /** @type {string | undefined} */
    let error
    try {
      await opened.catch(() => {})
      await server?.stop()
      // Closing PGlite shuts Postgres down cleanly (checkpoint), so the folder reopens without recovery.
      if (db && !db.closed) await db.close()
    } catch (err) {
      error = err instanceof Error ? err.message : String(err)
    }
    server = undefined
    db = undefined
    // The thread stays: embedded.ts either gives it its next database ('open') or terminates it.
    post({ type: 'closed', error })
  })()
})
