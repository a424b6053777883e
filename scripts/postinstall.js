// After `npm install` / `npm ci` (package.json "postinstall"; what each patch fixes: patches/README.md):
// 0. Nothing when npm runs it for `npx orgscan`: npx links the project into its own cache to find the `orgscan` bin
//    and runs this script there once more, but the project's own install already did everything below
//    (docs/adr/0175-first-run-under-a-minute.md).
// 1. patch-package applies patches/ (a patch that does not apply fails the install).
// 2. The command is compiled (scripts/build.js: dist/orgscan.mjs, and dist/help.mjs for --help) unless its bundles are
//    current. The command never builds when it starts, so an install that cannot build it fails here.
// 3. node-tap is rebuilt for this project's plugin set (tsx instead of ts-node, see package.json "tap") when the plugins
//    it was built with are not those configured: tap rebuilds itself lazily on the first run after a plugin change and
//    that first run fails. Skipped when dev dependencies are absent.
import { existsSync } from 'node:fs'
import { spawnSync } from 'node:child_process'

if (process.env.npm_command === 'exec') process.exit(0)

const patched = spawnSync(process.execPath, [new URL('../node_modules/patch-package/index.js', import.meta.url).pathname, '--error-on-fail'], { stdio: 'inherit' })
if (patched.status !== 0) process.exit(patched.status ?? 1)

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
