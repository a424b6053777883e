/**
 * Loaded first in every test process (tap's `node-arg` in package.json: `--require` runs before the `--import`s tap
 * adds): turns off tap's process-info instrumentation, which this project does not use (coverage is disabled, and
 * `tap --changed` is not used), and which cost about 0.5 s of CPU per test process and about 1 s per process a test
 * starts (docs/decisions.md "The test suite"). tap imports `@tapjs/processinfo` into every test process; that hook
 * sends each module loaded, with its text, to the main thread to be recorded, and injects itself into every child
 * process through NODE_OPTIONS.
 *
 * - `_TAPJS_PROCESSINFO_EXCLUDE_` is the hook's pattern of files not to record: everything.
 * - `process-on-spawn` (the package through which the hook reaches every child) keeps its state on a global; claimed
 *   first here, it never wraps child_process, so the hook's listener is never called.
 * - NODE_OPTIONS as inherited from tap names the hook: removed, so children start without it.
 */
'use strict'
process.env._TAPJS_PROCESSINFO_EXCLUDE_ = '/./'
const stateId = Symbol.for('process-on-spawn@*:singletonId')
if (!(stateId in globalThis)) {
  Object.defineProperty(globalThis, stateId, { writable: true, value: { version: 1, listeners: [], unwrap: () => {} } })
}
if (process.env.NODE_OPTIONS) {
  const kept = process.env.NODE_OPTIONS.split(/\s+/).filter((o) => o && !o.includes('@tapjs/processinfo'))
  if (kept.length) process.env.NODE_OPTIONS = kept.join(' ')
  else delete process.env.NODE_OPTIONS
}
