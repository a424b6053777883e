/**
 * The answer to one 2025-era POST that may carry messages before its result (a tool call's log messages): plain JSON
 * while there are none, an event stream (`text/event-stream`, as Streamable HTTP allows) from the first one on, each
 * message an event, the answer the last, then the end. The SDK's handler shapes 2026-era answers the same way.
 */
import type { ServerResponse } from 'node:http'
import type { JSONRPCNotification } from '@modelcontextprotocol/server'
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

  /** Sends a message related to the request, opening the stream with the first one. */
  notify(message: JSONRPCNotification): void {
    const res = this.res
    if (res.writableEnded || res.destroyed) return
    if (!this.open) {
      res.writeHead(200, withRequestId(res, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store', ...this.headers }))
      this.open = true
    }
    res.write(event(JSON.stringify(message)))
  }

  /** Ends the stream with the answer (text, or byte parts of UTF-8 JSON). */
  end(body: Body): void {
    if (this.res.writableEnded) return
    this.res.end(event(typeof body === 'string' ? body : Buffer.concat(body).toString('utf8')))
  }
}
