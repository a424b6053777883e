/**
 * The admin socket of a server on the embedded database: the embedded database belongs to one process, so while a
 * server runs, the `orgscan accounts|keys|import` commands send their operation (admin-ops.ts) to the server through
 * this Unix socket instead of opening the database. It lives in `<dataDir>/admin/` (a folder only the owner can
 * enter, so no other local user can connect; the data folder holds the API key pepper too) and is removed on close.
 *
 * Protocol: one request per connection, one JSON line each way:
 *   → {"op":"keys.create","args":{"account":"1"}}
 *   ← {"ok":true,"result":{…}} | {"ok":false,"error":"…","kind":"admin"|"import"|"internal"} (an invalid bundle's
 *     reply also carries its "problems" and the count of the "unlisted" ones)
 * A request with `"frames":true` is answered with frames instead (admin-frames.ts): an export streams its bundle, and
 * imports and exports send their progress, to the command.
 * Requests are validated (admin-ops.ts) and bounded in size; secrets are returned to the caller, never logged.
 */
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import type { Logger } from '../core/log.ts'
import { AdminError } from './admin.ts'
import { ImportError } from './import.ts'
import { runAdminOp, type AdminContext } from './admin-ops.ts'
import { AdminSocketLost, encodeFrame, type AdminReply } from './admin-frames.ts'
import { drained } from './write-drain.ts'

const MAX_REQUEST = 64 * 1024
/** Longest Unix socket path (sun_path is 108 bytes on Linux, 104 on macOS). */
const MAX_PATH = 100

/** Where the admin socket of a data folder lives; undefined when the path is too long for a Unix socket. */
export function adminSocketPath(dataDir: string): string | undefined {
  const p = path.join(path.resolve(dataDir), 'admin', 'orgscan.sock')
  return Buffer.byteLength(p) <= MAX_PATH && process.platform !== 'win32' ? p : undefined
}

export interface AdminSocket {
  path: string
  close(): Promise<void>
}

/** Listens on the data folder's admin socket; undefined (and a log line) when the platform or path allows none. */
export async function startAdminSocket(dataDir: string, ctx: AdminContext, log: Logger): Promise<AdminSocket | undefined> {
  const file = adminSocketPath(dataDir)
  if (!file) {
    log.warn({ msg: 'admin socket unavailable (path too long or no Unix sockets): stop the server to run orgscan accounts/keys/import' })
    return undefined
  }
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
  fs.chmodSync(path.dirname(file), 0o700)
  fs.rmSync(file, { force: true }) // left by a crashed server: we hold the data folder's lock
  const server = net.createServer((socket) => {
    let buf = ''
    socket.setEncoding('utf8')
    socket.setTimeout(600_000, () => socket.destroy())
    socket.on('error', () => socket.destroy())
    socket.on('data', (chunk: string) => {
      buf += chunk
      if (buf.length > MAX_REQUEST) return void socket.end(JSON.stringify({ ok: false, error: 'Request too large.', kind: 'admin' }) + '\n')
      const nl = buf.indexOf('\n')
      if (nl < 0) return
      socket.removeAllListeners('data')
      const line = buf.slice(0, nl)
      const framed = isFramed(line)
      void answer(line, framed ? framedContext(socket, ctx) : ctx).then((reply) =>
        socket.end(framed ? encodeFrame('R', JSON.stringify(reply)) : JSON.stringify(reply) + '\n'),
      )
    })
  })
  async function answer(line: string, opCtx: AdminContext): Promise<Record<string, unknown>> {
    let req: { op?: unknown; args?: unknown }
    try {
      req = JSON.parse(line)
    } catch {
      return { ok: false, error: 'Malformed request.', kind: 'admin' }
    }
    try {
      return { ok: true, result: await runAdminOp(opCtx, String(req.op), req.args ?? {}) }
    } catch (e) {
      if (e instanceof AdminError) return { ok: false, error: e.message, kind: 'admin' }
      if (e instanceof ImportError) return { ok: false, error: e.message, kind: 'import', ...(e.problems ? { problems: e.problems, unlisted: e.unlisted } : {}) }
      log.error({ msg: 'admin socket: operation failed', op: String(req.op).slice(0, 64), err: e })
      return { ok: false, error: 'The server failed to run the operation; see its log.', kind: 'internal' }
    }
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(file, () => resolve())
  })
  fs.chmodSync(file, 0o600)
  return {
    path: file,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        fs.rmSync(file, { force: true })
      }),
  }
}

function isFramed(line: string): boolean {
  try {
    return (JSON.parse(line) as { frames?: unknown })?.frames === true
  } catch {
    return false
  }
}

/** The context of a framed request: progress and output go to the command as frames (admin-frames.ts). */
function framedContext(socket: net.Socket, ctx: AdminContext): AdminContext {
  const gone = () => new Error('The command left the admin socket before the operation ended.')
  const send = (frame: Buffer): Promise<void> | void => {
    if (socket.destroyed || !socket.writable) throw gone()
    if (socket.write(frame)) return
    return drained(socket, 'close', gone)
  }
  return {
    ...ctx,
    events: (e) => {
      if (!socket.destroyed) socket.write(encodeFrame('P', JSON.stringify(e)))
    },
    output: (chunk) => send(encodeFrame('D', chunk)),
  }
}

/** Sends one operation to a server's admin socket; resolves with its reply. */
export function callAdminSocket(file: string, op: string, args: unknown): Promise<AdminReply> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(file)
    let buf = ''
    let connected = false
    socket.setEncoding('utf8')
    socket.on('connect', () => {
      connected = true
      socket.write(JSON.stringify({ op, args }) + '\n')
    })
    socket.on('data', (d: string) => (buf += d))
    socket.on('end', () => {
      try {
        resolve(JSON.parse(buf))
      } catch {
        reject(new AdminSocketLost())
      }
    })
    socket.on('error', (e) => reject(connected ? new AdminSocketLost() : e))
  })
}
