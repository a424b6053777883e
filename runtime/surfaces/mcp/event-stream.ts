/**
 * The answer to one 2025-era POST that may carry messages before its result (a tool call's log messages, progress
 * notifications, and requests to the client: runtime/surfaces/mcp/client-requests.ts): plain JSON while there are
 * none, an event stream (`text/event-stream`, as Streamable HTTP allows) from the first one on, each message an
 * event, the answer the last, then the end. The SDK's handler shapes 2026-era answers the same way.
 */
import type { ServerResponse } from 'node:http'
import type { JSONRPCNotification, JSONRPCRequest } from '@modelcontextprotocol/server'
import type { Body } from '../../core/http/respond.ts'
import { withRequestId } from '../../core/http/response.ts'

/**
 * One event of JSON text. A raw line break in JSON is whitespace between tokens (strings escape theirs); the event
 * carries it as a further `data:` line, which the client joins back with a line break.
 */
function event(json: string): string {
  return `event: message\ndata: ${json.replace(/\r\n|\r|\n/g, '\ndata: ')}\n\n`
}

export class StreamedAnswer {
  private open = false

  constructor(
    private readonly res: ServerResponse,
    private readonly headers: Record<string, string>,
  ) {}

  /** Whether the stream was opened (a message was sent): the answer must then end it. */
  get started(): boolean {
    return this.open
  }

  /** Whether nothing more can reach the client: the answer was ended, or the connection is gone. */
  get closed(): boolean {
    return this.res.writableEnded || this.res.destroyed
  }

  /** The response, for whoever must know when the client goes away (a request waiting for the client's answer). */
  get response(): ServerResponse {
    return this.res
  }

  /** Sends a message related to the request (a notification, or a request to the client), opening the stream with the first one. */
  notify(message: JSONRPCNotification | JSONRPCRequest): void {
    if (this.closed) return
    this.start()
    this.res.write(event(JSON.stringify(message)))
  }

  /**
   * An SSE comment, which clients ignore: written while the call waits for the client, so that neither the idle-socket
   * timeout nor a proxy closes a stream on which nothing else moves.
   */
  keepAlive(): void {
    if (this.closed || !this.open) return
    this.res.write(': keep-alive\n\n')
  }

  private start(): void {
    if (this.open) return
    this.res.writeHead(200, withRequestId(this.res, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store', ...this.headers }))
    this.open = true
  }

  /** Ends the stream with the answer (text, or byte parts of UTF-8 JSON). */
  end(body: Body): void {
    if (this.closed) return
    this.res.end(event(typeof body === 'string' ? body : Buffer.concat(body).toString('utf8')))
  }
}
