/**
 * When a response is done with its connection. A response closes once its last byte was written or its connection
 * was lost, except one queued behind an earlier response on the same connection (HTTP/1.1 pipelining): when that
 * connection goes away first, the queued response never closes. So "done" is whichever closes first, the response or
 * its socket (a closed socket has dropped every pending write). Used for the count of requests in flight, which
 * shutdown waits for, and to give bytes lent by the response cache back (runtime/core/cache/response-cache.ts).
 */
import type { ServerResponse } from 'node:http'
import type { Socket } from 'node:net'

const waiting = Symbol('orgscan.responsesWaiting')
type Tracked = Socket & { [waiting]?: Set<() => void> }

/** Calls `fn` exactly once, when the response or its socket closes, whichever comes first. */
export function whenResponseDone(res: ServerResponse, fn: () => void): void {
  const socket = res.req.socket as Tracked
  if (socket.closed) return fn()
  let set = socket[waiting]
  if (!set) {
    // One listener per connection, however many of its responses wait.
    const own = (set = socket[waiting] = new Set())
    socket.once('close', () => {
      for (const f of own) f()
      own.clear()
    })
  }
  const pending = set
  const once = () => {
    if (pending.delete(once)) fn()
  }
  pending.add(once)
  res.once('close', once)
}

/**
 * Gives back bytes a response was written from, once the socket no longer needs them: at once when nothing of the
 * response waits to be written (the usual case), else when the response is done.
 */
export function releaseWhenWritten(res: ServerResponse, release: () => void): void {
  if (res.writableLength === 0 || res.destroyed) return release()
  whenResponseDone(res, release)
}
