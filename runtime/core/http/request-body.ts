/** Reading a request's body within a limit, for every surface that takes one (MCP, OAuth). */
import type { IncomingMessage } from 'node:http'
import { bodyCutBy } from './body-cut.ts'

/**
 * A body read, or why not: beyond the limit (the caller answers 413), or cut by bytes the HTTP parser could not read or
 * by the server's time limit for receiving a request (the caller answers 400 with `cut`, the sentence saying which).
 */
export type BodyResult = { ok: true; text: string } | { ok: false; tooLarge: true } | { ok: false; cut: string }

function cutResult(err: Error): BodyResult {
  const timeout = (err as NodeJS.ErrnoException).code === 'ERR_HTTP_REQUEST_TIMEOUT'
  return { ok: false, cut: timeout ? 'The request body did not arrive in time.' : 'The request body could not be read: its framing (chunked encoding) is malformed.' }
}

/**
 * Reads the request body, at most `max` bytes; beyond it, stops reading and reports it. A body the server found cut
 * (runtime/core/http/body-cut.ts) is reported at once, never waited for.
 */
export function readBody(req: IncomingMessage, max: number): Promise<BodyResult> {
  const declared = Number(req.headers['content-length'] ?? NaN)
  if (declared > max) return Promise.resolve({ ok: false, tooLarge: true })
  const cut = bodyCutBy(req)
  if (cut) return Promise.resolve(cutResult(cut))
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (c: Buffer) => {
      size += c.length
      if (size > max) {
        req.removeAllListeners('data')
        req.pause()
        resolve({ ok: false, tooLarge: true })
        return
      }
      chunks.push(c)
    })
    req.on('end', () => resolve({ ok: true, text: Buffer.concat(chunks, size).toString('utf8') }))
    req.on('error', (e: Error) => (bodyCutBy(req) === e ? resolve(cutResult(e)) : reject(e)))
  })
}
