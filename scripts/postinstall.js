// Rebuilds node-tap for this project's plugin set (tsx instead of ts-node, see package.json "tap").
// tap rebuilds itself lazily on the first run after a plugin change and that first run fails,
// so a fresh `npm install` / `npm ci` does it once here. Skipped when dev dependencies are absent.
import { existsSync } from 'node:fs'
import { spawnSync } from 'node:child_process'

const tapBin = new URL('../node_modules/.bin/tap', import.meta.url).pathname
if (existsSync(tapBin)) {
  const r = spawnSync(tapBin, ['build'], { stdio: 'inherit' })
  process.exit(r.status ?? 1)
}
