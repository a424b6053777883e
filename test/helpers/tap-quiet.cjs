/**
 * Loaded first in every test process (tap's `node-arg` in package.json: `--require` runs before the `--import`s tap
 * adds): turns off tap's process-info instrumentation, which this project does not use (coverage is disabled, and
 * `tap --changed` is not used), and which cost about 0.5 s of CPU per test process and about 1 s per process a test
 * starts (docs/adr/0045-test-processes-bundled-and-grouped.md). tap imports `@tapjs/processinfo` into every test
 * process; that hook sends each module loaded, with its text, to the main thread to be recorded, and injects itself
 * into every child process through NODE_OPTIONS.
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

/*
 * A test file runs as its bundle of this run (bundle-paths.cjs), without the module hooks the `--import`s would
 * register. Node starts the entry point through `Module.runMain` after the `--require`s and loads the `--import`s
 * inside it: replaced here for a bundled test file, it imports the bundle directly, so neither tap's process-info hook
 * (which records nothing here, see above) nor the TypeScript loader (ts-loader.mjs; a bundle holds no TypeScript) is
 * loaded, and no loader thread starts: about 0.25 s less CPU per test file
 * (docs/adr/0045-test-processes-bundled-and-grouped.md). Any other entry point (tap's before and after scripts, a file
 * without a bundle) starts as Node would start it.
 */
const Module = require('node:module')
const { resolve } = require('node:path')
const { pathToFileURL } = require('node:url')
const { bundleFor, currentRun } = require('./bundle-paths.cjs')

const runMain = Module.runMain
Module.runMain = function (main = process.argv[1], ...rest) {
  const bundle = main && bundleFor(currentRun(), resolve(main))
  if (!bundle) return runMain.call(this, main, ...rest)
  let settled = false
  // A rejection is left unhandled: Node prints it and exits with 1, as for an entry point that throws.
  import(pathToFileURL(bundle).href).finally(() => {
    settled = true
  })
  // As Node does for an entry point whose top-level await never settles (exit code 13), rather than a quiet 0: the
  // event loop ran dry with the import still pending. (An explicit process.exit() does not come here.)
  process.on('beforeExit', () => {
    if (!settled && !process.exitCode) {
      process.stderr.write(`${main}: its top-level await never settled\n`)
      process.exitCode = 13
    }
  })
}

/*
 * tap gives every test an `async-hook-domain`, so that a throw in a callback a test scheduled fails that test rather
 * than the file. The domains need an async hook with `init` and `destroy`, and a hook with `destroy` makes Node track
 * the end of every promise of the process: of the service under test as much as of the test. It cost 10–25 % of the
 * CPU of the test files that send many requests (docs/adr/0045-test-processes-bundled-and-grouped.md). The hook is not
 * enabled here: a stray throw or rejection then ends the file's process, which tap reports as the file failing, with
 * the error. Only the hook async-hook-domain asks for (recognised by the caller in its stack) is refused; any other is
 * made as Node makes it. The number refused is kept on a global for test/test-processes.test.ts.
 */
const asyncHooks = require('node:async_hooks')
const createHook = asyncHooks.createHook
const refused = Symbol.for('orgscan.tap-quiet.refusedDomainHooks')
globalThis[refused] = 0
asyncHooks.createHook = function (callbacks) {
  if (/[\\/]node_modules[\\/]async-hook-domain[\\/]/.test(new Error().stack ?? '')) {
    globalThis[refused]++
    return { enable() { return this }, disable() { return this } }
  }
  return createHook.call(this, callbacks)
}
// ES modules importing `createHook` (async-hook-domain does) see the replacement too.
Module.syncBuiltinESMExports()
