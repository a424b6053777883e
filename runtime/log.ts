/** Minimal structured logger: one JSON line per event on stderr. Never pass secrets to it. */
export interface Logger {
  info(o: Record<string, unknown>): void
  warn(o: Record<string, unknown>): void
  error(o: Record<string, unknown>): void
}

function line(level: string, o: Record<string, unknown>): string {
  const err = o.err
  const rec: Record<string, unknown> = { time: new Date().toISOString(), level, ...o }
  if (err instanceof Error) rec.err = { name: err.name, message: err.message, code: (err as { code?: unknown }).code, stack: err.stack }
  return JSON.stringify(rec) + '\n'
}

export function createLogger(write: (s: string) => void = (s) => process.stderr.write(s), quiet = false): Logger {
  return {
    info: (o) => { if (!quiet) write(line('info', o)) },
    warn: (o) => write(line('warn', o)),
    error: (o) => write(line('error', o)),
  }
}
