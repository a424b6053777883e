/**
 * orgscan runs postgres.js patched (patches/postgres+3.4.9.patch, applied by patch-package on `npm install`): unpatched,
 * a connection closed mid-query can leave queries waiting forever and a busy pool's queue grows without bound
 * (patches/README.md). An install that skipped the patch (`--ignore-scripts`, a copied node_modules) would fail that way
 * only under load, so opening a database refuses an unpatched driver first. The check reads the patches' markers in
 * the copy of the driver this process imports.
 */
import { readFileSync } from 'node:fs'

/** The files of postgres.js the patch changes, beside its entry point, and a marker each of its changes leaves. */
const MARKERS: Record<string, string[]> = {
  'connection.js': [
    '/* orgscan: a failed query is no longer current */',
    '/* orgscan: reset the write state of a closed connection */',
    '/* orgscan: a closed connection rejects what it holds */',
    '/* orgscan: a write without a socket fails what the connection holds */',
  ],
  'queue.js': ['/* orgscan: a queue searches only what it holds */', '/* orgscan: a queue drops the slots it has shifted */'],
}

/** What is missing from the driver whose entry point is `entry` (default: the one imported here), or undefined. */
export function driverPatchProblem(entry: string | URL = import.meta.resolve('postgres')): string | undefined {
  for (const [file, markers] of Object.entries(MARKERS)) {
    const url = new URL(file, entry)
    let text: string
    try {
      text = readFileSync(url, 'utf8')
    } catch {
      return `${url.pathname} is missing`
    }
    const missing = markers.find((m) => !text.includes(m))
    if (missing) return `${url.pathname} lacks ${missing}`
  }
  return undefined
}

let checked = false
/** Throws unless the driver this process imports is patched; checked once per process. */
export function assertDriverPatched(): void {
  if (checked) return
  const problem = driverPatchProblem()
  if (problem) throw new Error(`postgres.js is not patched: run npm install (${problem})`)
  checked = true
}
