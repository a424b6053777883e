/**
 * A copy of the checkout in a temporary folder, for tests that change what only an install or a build changes (a source
 * newer than its bundle, an unpatched driver) without touching the checkout that other tests run. The command —
 * bin/, scripts/, dist/, package.json — is copied with its files' times, so its bundles are as current there as here;
 * every other entry is a link to the checkout's. node_modules is a folder of links to the checkout's packages, but
 * for postgres.js, which is a copy of its own that a test may unpatch and patch again, and without tap's command.
 */
import type { Test } from 'tap'
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readlinkSync, realpathSync, rmSync, statSync, symlinkSync, utimesSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const ROOT = realpathSync(new URL('../../', import.meta.url).pathname)
const COPIED = new Set(['bin', 'scripts', 'dist', 'package.json'])
const SKIPPED = new Set(['.git', 'node_modules', 'data', '.tap'])

/** The copy's folder; removed when `t` ends. */
export function checkoutCopy(t: Test): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'orgscan-checkout-')))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  for (const entry of readdirSync(ROOT)) {
    if (SKIPPED.has(entry)) continue
    if (COPIED.has(entry)) copy(join(ROOT, entry), join(dir, entry))
    else symlinkSync(join(ROOT, entry), join(dir, entry))
  }
  mkdirSync(join(dir, 'node_modules'))
  for (const entry of readdirSync(join(ROOT, 'node_modules'))) {
    if (entry === 'postgres') copy(join(ROOT, 'node_modules', entry), join(dir, 'node_modules', entry))
    else if (entry !== '.bin') symlinkSync(join(ROOT, 'node_modules', entry), join(dir, 'node_modules', entry))
  }
  // The commands, linked as npm links them, but tap's: `npm run postinstall` there must never rebuild the checkout's tap.
  mkdirSync(join(dir, 'node_modules/.bin'))
  for (const bin of readdirSync(join(ROOT, 'node_modules/.bin')))
    if (bin !== 'tap') symlinkSync(readlinkSync(join(ROOT, 'node_modules/.bin', bin)), join(dir, 'node_modules/.bin', bin))
  return dir
}

/**
 * Copies `from` to `to` with each file's modification time to the millisecond, which is what a bundle's record
 * compares: cpSync's own `preserveTimestamps` goes through seconds as a float and may land a millisecond early.
 */
function copy(from: string, to: string) {
  cpSync(from, to, { recursive: true })
  const files = statSync(from).isDirectory() ? readdirSync(from, { recursive: true }).map(String) : ['']
  for (const rel of files) {
    const s = statSync(join(from, rel))
    if (s.isFile()) utimesSync(join(to, rel), s.atime, (Math.trunc(s.mtimeMs) + 0.5) / 1000)
  }
}
