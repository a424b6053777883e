/**
 * Data-folder lock for the embedded PGlite database.
 *
 * PGlite has no postmaster and no `postmaster.pid`: two processes opening the same folder would both
 * write the same data files and corrupt them. Before a folder-backed PGlite is opened, the process that
 * calls `openDatabase` creates `<dataDir>/orgscan.lock` atomically (`open(..., 'wx')`) with its pid.
 *
 * - The lock exists and its pid is alive → a one-line, plain `Error` telling the user what to do.
 * - The pid is dead (crash, SIGKILL) → the stale lock is taken over.
 * - The pid is our own but this process does not hold the lock (a container restarted with the same
 *   pid, typically 1) → stale as well.
 *
 * Released by `release()` (called from `Database.close()`) and, best effort, on process exit. A lock
 * left behind by SIGKILL or a power loss is simply taken over by the next start. A dead pid reused by an
 * unrelated live process makes the lock look held; the message names the pid, so the user can check
 * it and delete the file.
 */
import fs from 'node:fs'
import path from 'node:path'
import { randomBytes } from 'node:crypto'

export const LOCK_FILE_NAME = 'orgscan.lock'

export interface DataDirLock {
  /** Absolute path of the data folder. */
  readonly dir: string
  /** Absolute path of the lock file. */
  readonly file: string
  /** Removes the lock file if it is still ours. Idempotent, never throws. */
  release(): void
}

/** Locks held by this process, by lock-file path. */
const held = new Map<string, DataDirLock>()
let exitHookInstalled = false

/**
 * The data folder is held by a live process (a running server, usually), or by an open Database of this very process
 * (a command run in process next to a service, as tests do): either way its admin socket may serve the command.
 */
export class DataDirInUseError extends Error {
  constructor(
    readonly dir: string,
    readonly pid: number,
  ) {
    super(lockInUseMessage(dir, pid))
    this.name = 'DataDirInUseError'
  }
}

export function lockInUseMessage(dir: string, pid: number): string {
  if (pid === process.pid) {
    return `The embedded database in ${dir} is already in use by this orgscan process (pid ${pid}). Close it first, or set DATABASE_URL to use a PostgreSQL server.`
  }
  return `The embedded database in ${dir} is in use by another orgscan process (pid ${pid}). Stop that process first, or set DATABASE_URL to use a PostgreSQL server.`
}

/**
 * Creates the data folder if missing and takes its lock, or throws if another live process holds it.
 * Synchronous on purpose: check-and-create must not interleave with another `openDatabase` of this process.
 */
export function acquireDataDirLock(dataDir: string): DataDirLock {
  const dir = path.resolve(dataDir)
  fs.mkdirSync(dir, { recursive: true })
  const file = path.join(dir, LOCK_FILE_NAME)
  if (held.has(file)) throw new DataDirInUseError(dir, process.pid)

  for (let attempt = 0; attempt < 10; attempt++) {
    if (tryCreate(file)) return register(dir, file)
    const content = readSettled(file)
    if (content === undefined) continue // removed meanwhile: try again
    const pid = parsePid(content)
    if (pid !== undefined && pid !== process.pid && isAlive(pid)) throw new DataDirInUseError(dir, pid)
    // Stale: dead pid, our own pid left by an earlier incarnation (not in `held`), or garbage.
    removeStale(file, content)
  }
  throw new Error(
    `Could not take the lock ${file}: it keeps changing, another orgscan process may be starting. Try again, or set DATABASE_URL to use a PostgreSQL server.`,
  )
}

function tryCreate(file: string): boolean {
  let fd: number
  try {
    fd = fs.openSync(file, 'wx', 0o644)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw err
  }
  try {
    fs.writeSync(fd, `${process.pid}\n`)
  } catch (err) {
    fs.closeSync(fd)
    fs.rmSync(file, { force: true })
    throw err
  }
  fs.closeSync(fd)
  return true
}

function register(dir: string, file: string): DataDirLock {
  const lock: DataDirLock = {
    dir,
    file,
    release() {
      if (held.get(file) !== lock) return
      held.delete(file)
      try {
        // Only delete it if it is still ours (never someone else's lock).
        if (parsePid(fs.readFileSync(file, 'utf8')) === process.pid) fs.unlinkSync(file)
      } catch {
        // best effort: a missing or unreadable lock file is not an error on release
      }
    },
  }
  held.set(file, lock)
  if (!exitHookInstalled) {
    exitHookInstalled = true
    // Runs on normal exit and process.exit(); not on SIGKILL or unhandled signals (the next start
    // then finds a dead pid and takes the lock over).
    process.on('exit', () => {
      for (const l of [...held.values()]) l.release()
    })
  }
  return lock
}

/**
 * Reads the lock file; `undefined` if it does not exist. The creator writes its pid right after
 * creating the file, so an empty file is re-read for up to ~1 s before it is judged stale
 * (a process that died between create and write).
 */
function readSettled(file: string): string | undefined {
  for (let i = 0; ; i++) {
    let content: string
    try {
      content = fs.readFileSync(file, 'utf8')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw err
    }
    if (content.trim() !== '' || i >= 20) return content
    sleepSync(50)
  }
}

/**
 * Removes a stale lock without racing another process doing the same: rename it to a unique name
 * (atomic, only one remover wins), then check that what we moved is what we judged stale. If a live
 * process re-created the lock in between and we moved its file, put it back with link() (which fails
 * rather than overwrite) so the next attempt sees it.
 */
function removeStale(file: string, staleContent: string): void {
  const aside = `${file}.stale-${process.pid}-${randomBytes(4).toString('hex')}`
  try {
    fs.renameSync(file, aside)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return
    throw err
  }
  try {
    if (fs.readFileSync(aside, 'utf8') !== staleContent) {
      try {
        fs.linkSync(aside, file)
      } catch {
        // someone created a new lock meanwhile: fine, the next attempt reads it
      }
    }
  } finally {
    fs.rmSync(aside, { force: true })
  }
}

function parsePid(content: string): number | undefined {
  const m = /^\s*(\d+)\s*$/.exec(content)
  if (!m) return undefined
  const pid = Number(m[1])
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    // EPERM: it exists but belongs to another user — alive.
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
}
