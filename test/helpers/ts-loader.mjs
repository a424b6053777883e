/**
 * `--import` of every test process (tap's `node-arg` in package.json): registers ts-hooks.mjs, which runs a test file
 * as its prebuilt bundle and compiles any other TypeScript. In a tap run (TAP_BEFORE is set) the run is the tap
 * runner's process id, as for the database templates (templates.ts).
 */
import { register } from 'node:module'

register('./ts-hooks.mjs', import.meta.url, { data: { run: process.env.TAP_BEFORE ? String(process.ppid) : undefined } })
