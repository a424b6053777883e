// @ts-check
/**
 * The file system PGlite writes the data folder through, inside the embedded-database worker: PGlite's own NodeFS
 * (Emscripten's NODEFS mounted on the folder), with three things changed where NODEFS decides them.
 *
 * - Modes. NODEFS creates files and folders with the mode PostgreSQL asks for and then sets it with chmod, which the
 *   umask does not limit, and PGlite's build asks for 0666: the folder held world-writable files. Every mode NODEFS
 *   creates or sets here loses its group and other bits, so the folder holds 0600 files and 0700 folders whatever
 *   the umask (data-folder.ts makes a folder written before this private on open).
 * - fsync. NODEFS has no fsync: PostgreSQL's fsync() reached nothing, and PGlite starts PostgreSQL with fsync off.
 *   Here fsync() syncs the file (fdatasync() is a no-op in Emscripten, so the worker sets wal_sync_method=fsync).
 * - A full disk. Each ENOSPC (or EDQUOT) a write meets is reported through `onNoSpace` before PostgreSQL sees it,
 *   so the service can say so once and report itself not ready (embedded.ts).
 */
import fs from 'node:fs'
import { NodeFS } from '@electric-sql/pglite/nodefs'

/** The group and other permission bits, never given to anything in the data folder. */
const GROUP_OTHER = 0o077

/** Node's error codes of a full disk or an exhausted quota. */
const NO_SPACE = new Set(['ENOSPC', 'EDQUOT'])

export class PrivateNodeFS extends NodeFS {
  /** @param {string} dataDir @param {{ onNoSpace(): void }} hooks */
  constructor(dataDir, hooks) {
    super(dataDir)
    this.hooks = hooks
  }

  /** @override @param {any} pg @param {any} opts */
  async init(pg, opts) {
    const { emscriptenOpts } = await super.init(pg, opts)
    const hooks = this.hooks
    // NODEFS is the module's one object for every NODEFS mount: changed before PGlite (or its initdb) touches a file.
    const preRun = [...(emscriptenOpts.preRun ?? []), (/** @type {any} */ mod) => harden(mod.FS.filesystems.NODEFS, hooks)]
    return { emscriptenOpts: { ...emscriptenOpts, preRun } }
  }
}

/**
 * Changes NODEFS's operations in place: nodes keep references to its `node_ops` and `stream_ops` objects, and it
 * calls `NODEFS.tryFSOperation` by name, so every later call goes through these.
 * @param {any} NODEFS @param {{ onNoSpace(): void }} hooks
 */
function harden(NODEFS, hooks) {
  const { node_ops: nodeOps, stream_ops: streamOps } = NODEFS
  const mknod = nodeOps.mknod
  nodeOps.mknod = (/** @type {any} */ parent, /** @type {string} */ name, /** @type {number} */ mode, /** @type {number} */ dev) =>
    mknod(parent, name, mode & ~GROUP_OTHER, dev)
  const nodeSetattr = nodeOps.setattr
  nodeOps.setattr = (/** @type {any} */ node, /** @type {any} */ attr) => nodeSetattr(node, privateAttr(attr))
  const streamSetattr = streamOps.setattr
  streamOps.setattr = (/** @type {any} */ stream, /** @type {any} */ attr) => streamSetattr(stream, privateAttr(attr))

  streamOps.fsync = (/** @type {any} */ stream) => {
    if (typeof stream.nfd === 'number') NODEFS.tryFSOperation(() => fs.fsyncSync(stream.nfd))
    return 0
  }

  const tryFSOperation = NODEFS.tryFSOperation
  NODEFS.tryFSOperation = (/** @type {() => unknown} */ f) =>
    tryFSOperation(() => {
      try {
        return f()
      } catch (e) {
        if (NO_SPACE.has(/** @type {NodeJS.ErrnoException} */ (e)?.code ?? '')) hooks.onNoSpace()
        throw e
      }
    })
}

/** @param {any} attr */
function privateAttr(attr) {
  return attr.mode === undefined || attr.mode === null ? attr : { ...attr, mode: attr.mode & ~GROUP_OTHER }
}
