/**
 * Process-level guard of the server. postgres.js 3.4 drops the promise of its per-connection type query
 * (`fetch_types`) when a connection is killed during start-up, and that rejection escapes as an unhandled
 * rejection that no caller can catch (porsager/postgres#1192, #1205, #1223, open). Node would exit. The
 * request it belonged to already failed on its own, so for exactly these database connection errors the
 * process logs and keeps serving; any other unhandled rejection still ends the process.
 */
import type { Logger } from './log.ts'

const CONNECTION_CODES = new Set(['CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT', 'ECONNRESET', 'ECONNREFUSED', 'EPIPE'])

/** A database connection failure: SQLSTATE class 08 (connection) or 57 (operator intervention), or a socket error. */
export function isDbConnectionError(e: unknown): boolean {
  if (typeof e !== 'object' || e === null) return false
  const code = String((e as { code?: unknown }).code ?? '')
  return CONNECTION_CODES.has(code) || /^(08|57)[0-9A-Z]{3}$/.test(code)
}

export function installProcessGuard(log: Logger): void {
  process.on('unhandledRejection', (reason) => {
    if (isDbConnectionError(reason)) {
      log.warn({ msg: 'database connection lost (driver-internal rejection); continuing', code: (reason as { code?: unknown }).code })
      return
    }
    log.error({ msg: 'unhandled rejection; exiting', err: reason })
    process.exit(1)
  })
}
