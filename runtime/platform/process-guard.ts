/**
 * Process-level guard of the server. postgres.js 3.4 drops the promise of its per-connection type query
 * (`fetch_types`) when a connection is killed during start-up, and that rejection escapes as an unhandled
 * rejection that no caller can catch (porsager/postgres#1192, #1205, #1223, open). Node would exit. The
 * request it belonged to already failed on its own, so for exactly these database connection errors
 * (`isConnectionFailure`, runtime/core/db/errors.ts) the process logs and keeps serving; any other unhandled
 * rejection still ends the process.
 */
import type { Logger } from '../core/log.ts'
import { errorCode, isConnectionFailure } from '../core/db/errors.ts'

export function installProcessGuard(log: Logger): void {
  process.on('unhandledRejection', (reason) => {
    if (isConnectionFailure(reason)) {
      log.warn({ msg: 'database connection lost (driver-internal rejection); continuing', code: errorCode(reason) })
      return
    }
    log.error({ msg: 'unhandled rejection; exiting', err: reason })
    process.exit(1)
  })
}
