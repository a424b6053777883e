/**
 * Requests whose body was cut by bytes the HTTP parser could not read (a malformed chunk size, say). Node's parser
 * stops at such bytes and reports them on the server ('clientError'), not on the request: a handler reading the body
 * would wait for an end that never comes. The server marks the request here and emits the parser's error on it; a
 * reader of the body (`readBody`) then answers 400 at once, and the connection closes after that answer.
 */
import type { IncomingMessage } from 'node:http'

const cut = new WeakMap<IncomingMessage, Error>()

/** Marks `req`'s body as cut by `err`, and tells its readers (an 'error' on the request, when it has listeners). */
export function cutBody(req: IncomingMessage, err: Error): void {
  cut.set(req, err)
  if (req.listenerCount('error') > 0) req.emit('error', err)
}

/** The parser error that cut `req`'s body, if one did. */
export function bodyCutBy(req: IncomingMessage): Error | undefined {
  return cut.get(req)
}
