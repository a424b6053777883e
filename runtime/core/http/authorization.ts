/** The Authorization header of a request, as every surface reads it. */
import type { IncomingMessage } from 'node:http'

/** What `authorizationOf` gives for a request with more than one Authorization header. */
export const SEVERAL_AUTHORIZATIONS = '(several Authorization headers)'

/**
 * The Authorization header of a request. Node keeps the first of several and drops the others; a proxy in front may
 * keep the last, and the two would disagree on who is calling. So a request with several is refused as malformed
 * (401), on every surface.
 */
export function authorizationOf(req: IncomingMessage): string | undefined {
  const raw = req.rawHeaders
  let n = 0
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].length === 13 && raw[i].toLowerCase() === 'authorization' && ++n > 1) return SEVERAL_AUTHORIZATIONS
  }
  return req.headers.authorization
}
