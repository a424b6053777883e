// @ts-check
/**
 * Serves one PGlite over the PostgreSQL wire protocol, on a Unix socket or on loopback TCP, for the embedded-database
 * worker (embedded-worker.mjs). It replaces pglite-socket's server, for speed: pglite-socket hands PGlite one protocol
 * message at a time (Parse, Bind, Describe, Execute and Sync are five trips into the WASM backend, each with its own
 * socket write), where this hands it every complete message a read delivered, in one call, and answers with one
 * write. Measured here with postgres.js and one connection: 430 → 324 µs a query, and a third less CPU
 * (docs/adr/0008-embedded-database-pglite-worker.md).
 *
 * What it keeps from pglite-socket:
 * - one connection at a time (`net.Server.maxConnections = 1`): every connection is the same PGlite session, so two
 *   could interleave statements; a second connection is closed by Node at once;
 * - SSLRequest and GSSENCRequest are answered 'N' (no encryption: the socket is local);
 * - a CancelRequest is ignored (PGlite cannot interrupt a running statement);
 * - a connection that closes inside a transaction leaves none behind: the transaction is rolled back.
 */
import net from 'node:net'

const PROTOCOL_3 = 196608
const SSL_REQUEST = 80877103
const GSSENC_REQUEST = 80877104
const CANCEL_REQUEST = 80877102
const NO = Buffer.from('N')

/**
 * @typedef {import('@electric-sql/pglite').PGlite} PGlite
 * @typedef {{ path: string } | { host: string, port: number }} Listen
 */

export class WireServer {
  /** @type {net.Server | undefined} */
  #server
  /** @type {Set<net.Socket>} */
  #sockets = new Set()
  /** @type {PGlite} */
  #db
  /** Work on PGlite, in order: a connection's batches, and the rollback after a connection closed. */
  #queue = Promise.resolve()

  /** @param {PGlite} db */
  constructor(db) {
    this.#db = db
  }

  /**
   * Listens; resolves the address actually bound (the port the OS chose for TCP).
   * @param {Listen} where
   * @returns {Promise<Listen>}
   */
  listen(where) {
    const server = net.createServer((socket) => this.#serve(socket))
    server.maxConnections = 1
    this.#server = server
    return new Promise((resolve, reject) => {
      server.once('error', reject)
      const done = () => {
        server.off('error', reject)
        const a = server.address()
        resolve('path' in where ? where : { host: where.host, port: a !== null && typeof a === 'object' ? a.port : 0 })
      }
      if ('path' in where) server.listen(where.path, done)
      else server.listen(where.port, where.host, done)
    })
  }

  /** Stops listening, closes every connection, and waits for the work already handed to PGlite. */
  async stop() {
    const server = this.#server
    this.#server = undefined
    for (const s of this.#sockets) s.destroy()
    if (server) await new Promise((resolve) => server.close(() => resolve(undefined)))
    await this.#queue
  }

  /** @param {() => Promise<void>} job */
  #enqueue(job) {
    const run = this.#queue.then(job)
    this.#queue = run.catch(() => undefined)
    return run
  }

  /** @param {net.Socket} socket */
  #serve(socket) {
    this.#sockets.add(socket)
    socket.setNoDelay(true)
    /** Bytes received and not yet handed to PGlite (an incomplete message). */
    let pending = Buffer.alloc(0)
    /** Before the startup message, messages have no type byte. */
    let started = false
    let busy = false
    let closed = false

    const pump = async () => {
      if (busy) return
      busy = true
      try {
        while (!closed) {
          const end = started ? completeMessages(pending) : this.#startup(socket, pending)
          if (end === 0) break
          if (end < 0) {
            // A request answered here (SSL, GSSENC) or refused (cancel, unknown protocol): consumed, not forwarded.
            pending = pending.subarray(-end)
            continue
          }
          const batch = new Uint8Array(pending.subarray(0, end))
          pending = pending.subarray(end)
          started = true
          /** @type {Buffer[]} */
          const out = []
          await this.#enqueue(() =>
            this.#db.runExclusive(() =>
              this.#db.execProtocolRawStream(batch, { onRawData: (d) => void out.push(Buffer.from(d)) }),
            ),
          )
          if (out.length > 0 && !closed) socket.write(out.length === 1 ? out[0] : Buffer.concat(out))
        }
      } catch {
        // PGlite reports SQL errors on the wire; a throw here is a malformed message or a failed backend: drop the
        // connection.
        socket.destroy()
      } finally {
        busy = false
      }
    }

    socket.on('data', (chunk) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
      void pump()
    })
    socket.on('error', () => socket.destroy())
    socket.on('close', () => {
      closed = true
      this.#sockets.delete(socket)
      // The session outlives the connection: never leave it inside a transaction another connection would inherit.
      void this.#enqueue(async () => {
        if (!this.#db.closed && this.#db.isInTransaction()) await this.#db.exec('ROLLBACK')
      }).catch(() => undefined)
    })
  }

  /**
   * The first message of a connection (no type byte: length, then a code). Returns 0 while incomplete, the length of
   * a startup message to forward, or minus the length of a request handled here.
   * @param {net.Socket} socket
   * @param {Buffer} buf
   */
  #startup(socket, buf) {
    if (buf.length < 8) return 0
    const length = buf.readInt32BE(0)
    const code = buf.readInt32BE(4)
    if (length < 8 || length > 10_000) {
      socket.destroy()
      return 0
    }
    if (buf.length < length) return 0
    if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
      socket.write(NO)
      return -length
    }
    if (code === PROTOCOL_3) return length
    // A CancelRequest (PGlite cannot interrupt a statement) or a protocol this server does not speak.
    if (code !== CANCEL_REQUEST) socket.destroy()
    else socket.end()
    return 0
  }
}

/**
 * The length of the complete typed messages at the start of `buf` (type byte, then a length that counts itself),
 * 0 if not even the first is complete. Throws on a length no message can have.
 * @param {Buffer} buf
 */
export function completeMessages(buf) {
  let end = 0
  while (buf.length - end >= 5) {
    const length = buf.readInt32BE(end + 1)
    if (length < 4) throw new Error(`a message of length ${length}`)
    if (buf.length - end < 1 + length) break
    end += 1 + length
  }
  return end
}
