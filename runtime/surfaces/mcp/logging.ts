/**
 * MCP logging (the `logging` capability): `notifications/message` about the caller's own tool calls, sent during the
 * call that they are about, at or above the level the caller asked for. A 2025-era session asks with
 * `logging/setLevel` (kept with the session in the database: runtime/surfaces/mcp/sessions.ts); a 2026-07-28 request carries
 * the level in `_meta["io.modelcontextprotocol/logLevel"]`, for that request only. No level, no messages, and no cost.
 *
 * One line per tool call, at the level of its outcome: `info` for an answer (records, duration, quota left), `warning`
 * for a refusal (a rejected argument, an unknown record, a missing scope, a rate limit), `error` for a server fault.
 * A line says what the caller's own result says, never more: no cause, no SQL, nothing of another caller.
 * docs/adr/0150-mcp-logging.md.
 */
import type { CallToolResult, LoggingLevel } from '@modelcontextprotocol/server'
import type { RateInfo } from '../../core/pipeline.ts'

/** The `logger` of every message. */
export const LOGGER = 'orgscan'

/** RFC 5424's severities, least severe first, as MCP names them. */
const SEVERITY: Readonly<Record<LoggingLevel, number>> = { debug: 0, info: 1, notice: 2, warning: 3, error: 4, critical: 5, alert: 6, emergency: 7 }

export function isLoggingLevel(v: unknown): v is LoggingLevel {
  return typeof v === 'string' && Object.hasOwn(SEVERITY, v)
}

/** The params of a `notifications/message`. */
export type LogMessage = { level: LoggingLevel; logger: string; data: unknown }

/** The log of one request: messages at or above `threshold` are sent, the others dropped. */
export class CallLog {
  constructor(
    readonly threshold: LoggingLevel,
    private readonly send: (message: LogMessage) => void,
  ) {}

  log(level: LoggingLevel, data: unknown): void {
    if (SEVERITY[level] >= SEVERITY[this.threshold]) this.send({ level, logger: LOGGER, data })
  }
}

/** What the pipeline told a logged call: the records it answered and the quota window it was charged to. */
export interface CallNote {
  records?: number
  rate?: RateInfo
}

/** The one line of a finished tool call: its level, and data made only of what the caller's result already says. */
export function callLine(tool: string, result: CallToolResult, note: CallNote, ms: number): { level: LoggingLevel; data: Record<string, unknown> } {
  const durationMs = Math.round(ms * 10) / 10
  if (!result.isError) {
    const w = note.rate?.window
    const records = note.records === undefined ? '' : ` ${note.records} record${note.records === 1 ? '' : 's'}`
    const quota = w ? `; ${w.remaining} of the ${w.name} quota left` : ''
    const data: Record<string, unknown> = { message: `${tool} answered${records} in ${durationMs} ms${quota}.`, tool, durationMs }
    if (note.records !== undefined) data.records = note.records
    if (w) Object.assign(data, { quotaRemaining: w.remaining, quotaWindow: w.name })
    return { level: 'info', data }
  }
  const sc = (result.structuredContent ?? {}) as { error?: unknown; reason?: unknown; message?: unknown; parameter?: unknown; retryAfterSeconds?: unknown }
  const error = typeof sc.error === 'string' ? sc.error : 'error'
  const fault = error === 'server_error'
  const data: Record<string, unknown> = {
    message: `${tool} ${fault ? 'failed' : 'was refused'}: ${typeof sc.message === 'string' ? sc.message : ''}`.trimEnd(),
    tool,
    error,
    durationMs,
  }
  if (typeof sc.reason === 'string') data.reason = sc.reason
  if (typeof sc.parameter === 'string') data.parameter = sc.parameter
  if (typeof sc.retryAfterSeconds === 'number') data.retryAfterSeconds = sc.retryAfterSeconds
  return { level: fault ? 'error' : 'warning', data }
}
