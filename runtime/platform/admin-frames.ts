/**
 * Framed replies of the admin socket (admin-socket.ts), for operations that stream: an export's bytes and the
 * progress of an import or export travel to the command as they happen. A request asking for frames
 * (`{"op":…,"args":…,"frames":true}`) is answered with frames — one byte of kind, four of length (big-endian), the
 * payload — instead of the one JSON line:
 *   D  bytes of the operation's output (an export's bundle)
 *   P  a progress event (JSON, runtime/platform/bundle/progress.ts)
 *   R  the reply, as the JSON line would have been, last.
 */
import net from 'node:net'
import type { Problem } from './bundle/problems.ts'
import type { ProgressEvent } from './bundle/progress.ts'

export type FrameKind = 'D' | 'P' | 'R'

export function encodeFrame(kind: FrameKind, payload: string | Buffer): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload
  const head = Buffer.alloc(5)
  head.write(kind, 0, 'latin1')
  head.writeUInt32BE(body.length, 1)
  return Buffer.concat([head, body])
}

/** Splits a byte stream into frames. */
export class FrameReader {
  private buf: Buffer = Buffer.alloc(0)

  /** The complete frames in `chunk` (and what came before it). */
  push(chunk: Buffer): Array<{ kind: string; payload: Buffer }> {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk
    const out: Array<{ kind: string; payload: Buffer }> = []
    while (this.buf.length >= 5) {
      const len = this.buf.readUInt32BE(1)
      if (this.buf.length < 5 + len) break
      out.push({ kind: this.buf.toString('latin1', 0, 1), payload: this.buf.subarray(5, 5 + len) })
      this.buf = this.buf.subarray(5 + len)
    }
    return out
  }

  /** Bytes of an unfinished frame. */
  get pending(): number {
    return this.buf.length
  }
}

/**
 * The server was reached, then the admin socket closed before its reply: the server stopped (or crashed) in the middle
 * of the operation, or hung up. Not for a server that could not be reached at all.
 */
export class AdminSocketLost extends Error {
  constructor() {
    super('The server closed the admin socket without an answer.')
    this.name = 'AdminSocketLost'
  }
}

export interface AdminReply {
  ok: boolean
  result?: unknown
  error?: string
  kind?: string
  /** An invalid bundle's problems (kind `import`), for the command's `--json`. */
  problems?: Problem[]
  unlisted?: number
}

/**
 * Sends one operation asking for framed replies; `onData` receives output bytes (the socket waits while a returned
 * promise is pending), `onProgress` the progress events. Resolves with the reply.
 */
export function callAdminSocketFramed(
  file: string,
  op: string,
  args: unknown,
  handlers: { onData?: (chunk: Buffer) => Promise<void> | void; onProgress?: (e: ProgressEvent) => void },
): Promise<AdminReply> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(file)
    const reader = new FrameReader()
    let reply: AdminReply | undefined
    let failed: Error | undefined
    let connected = false
    let chain = Promise.resolve()
    socket.on('connect', () => {
      connected = true
      socket.write(JSON.stringify({ op, args, frames: true }) + '\n')
    })
    socket.on('data', (chunk: Buffer) => {
      for (const f of reader.push(chunk)) {
        if (f.kind === 'D' && handlers.onData) {
          if (failed) break
          let wait
          try {
            wait = handlers.onData(f.payload)
          } catch (e) {
            failed = e as Error
            socket.destroy()
            break
          }
          if (wait) {
            socket.pause()
            chain = chain.then(() => wait).then(() => void socket.resume(), (e: Error) => {
              failed = e
              socket.destroy()
            })
          }
        } else if (f.kind === 'P') {
          try {
            handlers.onProgress?.(JSON.parse(f.payload.toString('utf8')) as ProgressEvent)
          } catch {
            // a progress event is only informative
          }
        } else if (f.kind === 'R') {
          try {
            reply = JSON.parse(f.payload.toString('utf8')) as AdminReply
          } catch {
            failed = new Error('The server sent a malformed answer on the admin socket.')
          }
        }
      }
    })
    socket.on('close', () => {
      void chain.then(() => {
        if (failed) reject(failed)
        else if (reply) resolve(reply)
        else reject(connected ? new AdminSocketLost() : (refused ?? new Error('The server closed the admin socket without an answer.')))
      })
    })
    let refused: Error | undefined
    socket.on('error', (e) => {
      // Before the connection: no server listens. After it: the socket broke, told as a lost server at the close.
      if (!connected) refused ??= e
    })
  })
}
