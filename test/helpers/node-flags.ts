/**
 * Node flags of every process the tests start (tap's `node-arg` in package.json passes the same to test files).
 *
 * `--liftoff-only`: V8 compiles WebAssembly with its baseline compiler only. The embedded database is PostgreSQL
 * compiled to WebAssembly, and a test process lives seconds: the optimizing tier spent more CPU compiling PGlite's
 * hot functions than it saved, and about 60 MB more memory per process (measured here: a PGlite open 1.9 → 0.9 s of CPU,
 * 197 → 135 MB; the CLI and filter-property tests about a fifth less CPU). Behaviour is the same; the served process
 * keeps V8's defaults (docs/adr/0018-v8-and-glibc-memory-flags.md).
 */
export const TEST_NODE_FLAGS: readonly string[] = ['--liftoff-only']
