/**
 * `--import` of every test process (tap's `node-arg` in package.json) and of the processes tests start to run
 * TypeScript: registers ts-hooks.mjs, which compiles TypeScript. A test file tap starts with a bundle built for the run
 * never loads this (tap-quiet.cjs).
 */
import { register } from 'node:module'

register('./ts-hooks.mjs', import.meta.url)
