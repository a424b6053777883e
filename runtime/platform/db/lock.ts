/**
 * Data-folder lock for the embedded PGlite database.
 *
 * PGlite has no postmaster and no `postmaster.pid`: two processes opening the same folder would both
 * write the same data files and corrupt them. Before a folder-backed PGlite is opened, the process that
 * calls `openDatabase` creates `<dataDir>/orgscan.lock` atomically (`open(..., 'wx')`, mode 0600) with its pid
 * on the first line and, on Linux, who that process is: the boot it runs in (`boot <boot_id>`) and when it
 * started (`start <clock ticks since boot>`, from /proc/<pid>/stat).
 *
 * - The lock's process is alive and is the one that wrote it → a one-line, plain `Error` naming the lock
 *   file and telling the user what to do.
 * - The pid is dead (crash, SIGKILL) → the stale lock is taken over.
 * - The pid is alive but is another process: the machine rebooted since (another boot id), or the pid was
 *   reused (another start time) → stale as well. A lock written before the boot and start lines existed
 *   names only a pid: it is stale when that live process is not a Node.js or orgscan process (/proc/<pid>/cmdline).
 * - The pid is our own but this process does not hold the lock (a container restarted with the same
 *   pid, typically 1) → stale as well.
 *
 * Released by `release()` (called from `Database.close()`) and, best effort, on process exit. A lock
 * left behind by SIGKILL or a power loss is simply taken over by the next start. Without /proc (macOS) only
 * the pid is checked: a dead pid reused by a live process makes the lock look held, and the message names the
 * lock file, so the user can check the pid and delete the file.
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
  /** The pid of a lock left by a process that stopped without closing the folder (killed, crashed), taken over here. */
  readonly takenOver?: number
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
  const file = path.join(dir, LOCK_FILE_NAME)
  if (pid === process.pid) {
    return `The embedded database in ${dir} is already in use by this orgscan process (pid ${pid}, lock file ${file}). Close it first, or set DATABASE_URL to use a PostgreSQL server.`
  }
  return `The embedded database in ${dir} is in use by another orgscan process (pid ${pid}, lock file ${file}). Stop that process first (if no orgscan process is running, delete the lock file), or set DATABASE_URL to use a PostgreSQL server.`
}

/**
 * Creates the data folder if missing and takes its lock, or throws if another live process holds it.
 * Synchronous on purpose: check-and-create must not interleave with another `openDatabase` of this process.
 */
export function acquireDataDirLock(dataDir: string): DataDirLock {
  const dir = path.resolve(dataDir)
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  const file = path.join(dir, LOCK_FILE_NAME)
  if (held.has(file)) throw new DataDirInUseError(dir, process.pid)

  let takenOver: number | undefined
  for (let attempt = 0; attempt < 10; attempt++) {
    if (tryCreate(file)) return register(dir, file, takenOver)
    const content = readSettled(file)
    if (content === undefined) continue // removed meanwhile: try again
    const owner = parseLock(content)
    if (owner && owner.pid !== process.pid && holds(owner)) throw new DataDirInUseError(dir, owner.pid)
    // Stale: dead pid, a live pid of another process, our own pid left by an earlier incarnation (not in `held`), or garbage.
    removeStale(file, content)
    takenOver = owner?.pid
  }
  throw new Error(
    `Could not take the lock ${file}: it keeps changing, another orgscan process may be starting. Try again, or set DATABASE_URL to use a PostgreSQL server.`,
  )
}

function tryCreate(file: string): boolean {
  let fd: number
  try {
    fd = fs.openSync(file, 'wx', 0o600)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw err
  }
  try {
    fs.writeSync(fd, lockContent())
  } catch (err) {
    fs.closeSync(fd)
    fs.rmSync(file, { force: true })
    throw err
  }
  fs.closeSync(fd)
  return true
}

function register(dir: string, file: string, takenOver: number | undefined): DataDirLock {
  const lock: DataDirLock = {
    dir,
    file,
    takenOver,
    release() {
      if (held.get(file) !== lock) return
      held.delete(file)
      try {
        // Only delete it if it is still ours (never someone else's lock).
        if (parseLock(fs.readFileSync(file, 'utf8'))?.pid === process.pid) fs.unlinkSync(file)
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

/** What a lock file says about its owner: the pid, and on Linux its boot and start time. */
interface LockOwner {
  pid: number
  boot?: string
  start?: string
}

/** This process's lock file: its pid, and its identity where /proc gives one. */
function lockContent(): string {
  const boot = bootId()
  const start = startTicks(process.pid)
  return `${process.pid}\n${boot && start ? `boot ${boot}\nstart ${start}\n` : ''}`
}

function parseLock(content: string): LockOwner | undefined {
  const [first = '', ...rest] = content.split('\n')
  const m = /^\s*(\d+)\s*$/.exec(first)
  if (!m) return undefined
  const pid = Number(m[1])
  if (!Number.isSafeInteger(pid) || pid <= 0) return undefined
  const owner: LockOwner = { pid }
  for (const line of rest) {
    const [key, value] = line.trim().split(' ', 2)
    if ((key === 'boot' || key === 'start') && value) owner[key] = value
  }
  return owner
}

/** Whether the lock's owner still runs: its pid is alive and, where /proc tells, is the very process that wrote it. */
function holds(owner: LockOwner): boolean {
  if (!isAlive(owner.pid)) return false
  const boot = bootId()
  const start = startTicks(owner.pid)
  if (boot === undefined || start === undefined) return true // no /proc: the pid is all there is to go by
  if (owner.boot !== undefined && owner.start !== undefined) return owner.boot === boot && owner.start === start
  return mayBeOrgscan(owner.pid) // a lock of an older orgscan: its pid only
}

/** The kernel's id of this boot (Linux); undefined elsewhere. */
function bootId(): string | undefined {
  try {
    return fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || undefined
  } catch {
    return undefined
  }
}

/** When the process started, in clock ticks since boot (field 22 of /proc/<pid>/stat); undefined without /proc. */
function startTicks(pid: number): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The command name (field 2, in parentheses) may hold spaces: count from its closing parenthesis (field 3 is next).
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]
  } catch {
    return undefined
  }
}

/** A process that may hold a lock: Node.js (orgscan, or a program embedding it), or anything naming orgscan. */
function mayBeOrgscan(pid: number): boolean {
  let argv: string[]
  try {
    argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')
  } catch {
    return true // unreadable: assume it is
  }
  const program = path.basename(argv[0] ?? '')
  return /node/i.test(program) || argv.some((a) => a.includes('orgscan'))
}

/** Whether `pid` is a running process (a zombie, dead but not yet reaped by its parent, is not). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch (err) {
    // EPERM: it exists but belongs to another user — alive.
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2))
  } catch {
    return true // no /proc: the signal said it exists
  }
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
}
