/**
 * The embedded database's folder is private: it holds the data, the API key pepper and the admin socket, so nothing
 * in it is for the group or other users (0700 folders, 0600 files). The worker writes it that way whatever the umask
 * (embedded-fs.mjs); a folder written before (PGlite's own modes made most files world-writable), or copied with
 * other modes, is made private on open, once, by `makePrivate`.
 */
import fs from 'node:fs'
import path from 'node:path'

/** The group and other permission bits. */
const GROUP_OTHER = 0o077

/**
 * Takes the group and other bits off the folder and everything in it (symbolic links are left as they are, and not
 * followed); returns how many files and folders were changed.
 */
export function makePrivate(dir: string): number {
  let changed = 0
  const visit = (p: string, st: fs.Stats) => {
    if (st.isSymbolicLink()) return
    if ((st.mode & GROUP_OTHER) !== 0) {
      try {
        fs.chmodSync(p, st.mode & 0o7777 & ~GROUP_OTHER)
        changed++
      } catch (err) {
        // Another user's file in the folder: not ours to change (PGlite fails on it if it matters).
        if ((err as NodeJS.ErrnoException).code !== 'EPERM') throw err
      }
    }
    if (!st.isDirectory()) return
    for (const name of fs.readdirSync(p)) {
      const child = path.join(p, name)
      let cst: fs.Stats
      try {
        cst = fs.lstatSync(child)
      } catch {
        continue // removed meanwhile (a socket of a process that stopped)
      }
      visit(child, cst)
    }
  }
  visit(dir, fs.lstatSync(dir))
  return changed
}
