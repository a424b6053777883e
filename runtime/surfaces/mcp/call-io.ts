/**
 * What a tool call may exchange with its caller besides the result, each present only when the caller can receive
 * it: log messages (logging.ts), progress notifications (the request carried `_meta.progressToken`) and requests to
 * the client (client-requests.ts). The endpoint builds it for a 2025-era call, the tools/call handler for a
 * 2026-era one; `dispatchTool` (server.ts) hands it to the tool as its ToolContext. A call with none of them has no
 * CallIo and runs the plain way.
 */
import type { ProgressToken } from '@modelcontextprotocol/server'
import { isJsonObject } from '../../core/json-object.ts'
import type { ClientAsker } from './client-requests.ts'
import type { CallLog } from './logging.ts'

/** Reports a call's progress: `progress` so far, of `total` when known, with an optional message for people. */
export type ProgressReport = (progress: number, total?: number, message?: string) => void

export interface CallIo {
  log?: CallLog
  progress?: ProgressReport
  asker?: ClientAsker
}

/** The params of a `notifications/progress`. */
export type ProgressParams = { progressToken: ProgressToken; progress: number; total?: number; message?: string }

/** The progress token a request's params carry (`_meta.progressToken`: a string or an integer), if any. */
export function progressTokenOf(params: unknown): ProgressToken | undefined {
  const meta = isJsonObject(params) ? params._meta : undefined
  const token = isJsonObject(meta) ? meta.progressToken : undefined
  return typeof token === 'string' || Number.isSafeInteger(token) ? (token as ProgressToken) : undefined
}

/**
 * The progress report of a request with `token`, sending each report through `send`. The specification asks the
 * progress of each notification to be greater than the one before: a report that is not (or is not a finite number)
 * is dropped.
 */
export function progressReport(token: ProgressToken, send: (params: ProgressParams) => void): ProgressReport {
  let last = -Infinity
  return (progress, total, message) => {
    if (!Number.isFinite(progress) || progress <= last) return
    last = progress
    const params: ProgressParams = { progressToken: token, progress }
    if (total !== undefined && Number.isFinite(total)) params.total = total
    if (message) params.message = message
    send(params)
  }
}
