// Entry point of the embedded-database worker thread (see embedded.ts). Plain JavaScript on purpose:
// a Worker does not get tsx from its parent. On Node 20, tsx's `--import tsx` entry registers its hooks
// on the main thread only (it checks isMainThread), so even an inherited `--import tsx` leaves a Worker
// unable to load .ts; and the parent may have registered tsx programmatically (no flag at all). So this
// file registers tsx itself, in the worker, then imports the TypeScript worker module.
import { workerData } from 'node:worker_threads'

const entry = workerData.entry
if (entry.endsWith('.ts')) {
  const { register } = await import('tsx/esm/api')
  register()
}
await import(entry)
