/**
 * Minimal structured logger: one JSON line per event on stderr. Never pass secrets to it.
 *
 * A warning or error that repeats — the same level, message, code and error (its code and text) — is written at most
 * once per `REPEAT_MS`; the next line written for it counts the ones left out (`repeated`). A database that
 * blinks fails every request for a moment, and its cause is worth one line, not one per request
 * (docs/adr/0110-database-errors.md). An unreachable database's error carries no stack: where the driver noticed
 * the closed socket says nothing about the request.
 */
import { isUnavailable } from './db/errors.ts'

export interface Logger {
  info(o: Record<string, unknown>): void
  warn(o: Record<string, unknown>): void
  error(o: Record<string, unknown>): void
}

/** How long an identical failure is not written again. */
export const REPEAT_MS = 5000
/** Kinds of failure remembered at most; past it, the memory starts over (a line more, never one lost for good). */
const MAX_KINDS = 1000

function line(level: string, o: Record<string, unknown>): string {
  const err = o.err
  const rec: Record<string, unknown> = { time: new Date().toISOString(), level, ...o }
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code
    rec.err = isUnavailable(err) ? { name: err.name, message: err.message, code } : { name: err.name, message: err.message, code, stack: err.stack }
  }
  return JSON.stringify(rec) + '\n'
}

/** What makes two events the same: level, message, code, and the error's code and text. */
function kindOf(level: string, o: Record<string, unknown>): string {
  const err = o.err as { code?: unknown; message?: unknown } | string | undefined
  const detail = typeof err === 'object' && err !== null ? `${String(err.code ?? '')}\u0000${String(err.message ?? '')}` : String(err)
  return `${level}\u0000${String(o.msg)}\u0000${String(o.code ?? '')}\u0000${detail}`
}

export function createLogger(write: (s: string) => void = (s) => process.stderr.write(s), quiet = false, clock: () => number = Date.now): Logger {
  /** Each failure kind: when it was last written, and how many of it were left out since. */
  const seen = new Map<string, { at: number; left: number }>()
  const failure = (level: string, o: Record<string, unknown>) => {
    const kind = kindOf(level, o)
    const now = clock()
    const last = seen.get(kind)
    if (last && now - last.at < REPEAT_MS) {
      last.left++
      return
    }
    if (seen.size >= MAX_KINDS) seen.clear()
    seen.set(kind, { at: now, left: 0 })
    write(line(level, last?.left ? { ...o, repeated: last.left } : o))
  }
  return {
    info: (o) => { if (!quiet) write(line('info', o)) },
    warn: (o) => failure('warn', o),
    error: (o) => failure('error', o),
  }
}
