/**
 * A full disk under the embedded database. Every write PGlite makes to its folder goes through the worker's file
 * system (embedded-fs.mjs), which reports each ENOSPC; `DiskSpaceWatch` turns those reports into one warning, a reason
 * for /readyz to report the process not ready, and one line when space is back. Queries that fail meanwhile are
 * answered 503 (disk_full, runtime/core/db/errors.ts), and `collapseDiskFull` keeps the log from repeating them.
 */
import fs from 'node:fs'
import type { Logger } from '../../core/log.ts'
import { isDiskFull } from '../../core/db/errors.ts'

/**
 * How much more free space than at the failure makes writes likely to succeed again: a WAL segment, the largest
 * single file PostgreSQL creates in the course of writing.
 */
const FREED_BYTES = 16 * 1024 * 1024

function freeBytes(dir: string): number {
  try {
    const s = fs.statfsSync(dir)
    return s.bavail * s.bsize
  } catch {
    return 0
  }
}

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1)

export class DiskSpaceWatch {
  /** Free bytes when a write last failed; undefined while writes are not known to fail. */
  private freeAtFailure: number | undefined

  constructor(
    private readonly dir: string,
    private readonly log?: Logger,
  ) {}

  /** A write to the folder failed for want of space. */
  noteFull(): void {
    const free = freeBytes(this.dir)
    if (this.freeAtFailure === undefined) {
      this.log?.warn({ msg: `the disk holding ${this.dir} is full (${mb(free)} MB free): writes fail and requests that write are answered 503; /readyz reports not ready until space is freed` })
    }
    this.freeAtFailure = Math.min(this.freeAtFailure ?? free, free)
  }

  /** Why writes fail now (for /readyz), or undefined: a failure is over once enough space was freed. */
  problem(): string | undefined {
    if (this.freeAtFailure === undefined) return undefined
    const free = freeBytes(this.dir)
    if (free >= this.freeAtFailure + FREED_BYTES) {
      this.freeAtFailure = undefined
      this.log?.info({ msg: `the disk holding ${this.dir} has ${mb(free)} MB free again: writes are accepted` })
      return undefined
    }
    return `the disk holding the data folder is full (${mb(free)} MB free): writes fail`
  }
}

/** How long the lines of one kind that a full disk causes are left out after the first. */
const QUIET_MS = 5 * 60_000

/**
 * A logger that writes a failure caused by a full disk (SQLSTATE 53100, ENOSPC) once per kind (level and message),
 * without its stack, then leaves that kind out for QUIET_MS, saying how many were left out when it writes it again.
 * Everything else passes through. While the disk is full every request that writes fails the same way; one line says
 * it as well as a thousand.
 */
export function collapseDiskFull(log: Logger, clock: () => number = Date.now): Logger {
  const seen = new Map<string, { at: number; left: number }>()
  const pass = (level: keyof Logger) => (o: Record<string, unknown>) => {
    const err = o.err
    if (!isDiskFull(err)) return log[level](o)
    const kind = `${level}:${String(o.msg)}`
    const now = clock()
    const s = seen.get(kind)
    if (s && now - s.at < QUIET_MS) {
      s.left++
      return
    }
    seen.set(kind, { at: now, left: 0 })
    const e = err as { message?: unknown; code?: unknown }
    log[level]({ ...o, err: { message: String(e.message ?? ''), code: e.code }, note: `the disk is full: further lines like this are left out for ${QUIET_MS / 60_000} minutes`, ...(s?.left ? { leftOut: s.left } : {}) })
  }
  return { info: pass('info'), warn: pass('warn'), error: pass('error') }
}
