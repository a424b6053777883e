// @ts-check
/**
 * The test tools: packages only some tests (and the bench) need — the MCP conformance suite and the Node 22 it runs on,
 * oidc-provider, the v1 MCP SDK, autocannon — kept out of the project's dependencies so that a new
 * user's `npm install` does not unpack them (docs/adr/0175-first-run-under-a-minute.md). Their exact versions are
 * test/tools/package.json and package-lock.json; `npm ci` installs them, on first need, into a folder of the user's
 * cache named by the lock's hash (`~/.cache/orgscan-test-tools/<hash>/`, or ORGSCAN_TEST_TOOLS_DIR), shared by every
 * checkout with the same lock and left alone by the project's `npm ci`.
 *
 * An install is written beside its final place and renamed into it once complete, so processes that install at once
 * never see half of one: the first rename wins, the others discard theirs.
 * Plain JavaScript: tap's `before` script, the tests and the bench all use it.
 */
import { createHash } from 'node:crypto'
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

const HERE = new URL('./', import.meta.url)
const MANIFEST = ['package.json', 'package-lock.json']
/** Written last into a complete install. */
const COMPLETE = '.complete'
/** The longest an install may take (a slow network); it is then given up. */
const INSTALL_MS = 10 * 60_000

/** The folder every install lives under. */
export function toolsRoot() {
  if (process.env.ORGSCAN_TEST_TOOLS_DIR) return process.env.ORGSCAN_TEST_TOOLS_DIR
  return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'orgscan-test-tools')
}

/** The folder of the install of this lock (whether or not it exists yet). */
export function toolsDir() {
  const hash = createHash('sha256')
  for (const f of MANIFEST) hash.update(readFileSync(new URL(f, HERE)))
  return join(toolsRoot(), hash.digest('hex').slice(0, 16))
}

/** True when the tools of this lock are installed. */
export const toolsInstalled = () => existsSync(join(toolsDir(), COMPLETE))

/** The npm command: the one running this process's npm script when there is one, else `npm` on the PATH. */
function npmCommand() {
  const cli = process.env.npm_execpath
  return cli && /npm-cli\.js$/.test(cli) ? [process.execPath, cli] : ['npm']
}

/** @type {Promise<{ dir: string, installedMs?: number } | { error: string }> | undefined} */
let pending

/**
 * Installs the tools unless they are: resolves with their folder (and how long the install took, when this call
 * installed them), or with why they could not be installed (offline, a registry error). Never rejects.
 * @returns {Promise<{ dir: string, installedMs?: number } | { error: string }>}
 */
export function ensureTestTools() {
  if (toolsInstalled()) return Promise.resolve({ dir: toolsDir() })
  pending ??= install().finally(() => (pending = undefined))
  return pending
}

/** @returns {Promise<{ dir: string, installedMs?: number } | { error: string }>} */
async function install() {
  const t0 = Date.now()
  const dir = toolsDir()
  const tmp = `${dir}.${process.pid}.${Date.now()}.tmp`
  try {
    mkdirSync(tmp, { recursive: true })
    removeAbandoned(toolsRoot())
    for (const f of MANIFEST) writeFileSync(join(tmp, f), readFileSync(new URL(f, HERE)))
    // Exactly the locked versions, checked against the lock's hashes; none of these packages has an install script.
    const [cmd, ...pre] = npmCommand()
    const args = [...pre, 'ci', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error', '--fetch-retries=1', '--fetch-timeout=30000']
    const out = await run(cmd, args, tmp)
    if (out.code !== 0) return { error: `npm ci of the test tools failed (${out.code === null ? 'timed out' : `exit ${out.code}`}): ${lastLines(out.text)}` }
    // A loader inside the install: an import() from there resolves the tools' own names (with their export conditions).
    writeFileSync(join(tmp, 'load.mjs'), 'export default (name) => import(name)\n')
    writeFileSync(join(tmp, COMPLETE), '')
    // A folder without the mark is what a removal cut short left: replaced.
    if (existsSync(dir) && !existsSync(join(dir, COMPLETE))) rmSync(dir, { recursive: true, force: true })
    try {
      renameSync(tmp, dir)
    } catch (e) {
      // Another process completed the same install first.
      if (!existsSync(join(dir, COMPLETE))) throw e
    }
    return { dir, installedMs: Date.now() - t0 }
  } catch (e) {
    return { error: `the test tools could not be installed into ${dir}: ${e instanceof Error ? e.message : String(e)}` }
  } finally {
    rmSync(tmp, { recursive: true, force: true })
  }
}

/**
 * Runs a command, its output gathered; code null when it ran out of time.
 * @param {string} cmd @param {string[]} args @param {string} cwd
 * @returns {Promise<{ code: number | null, text: string }>}
 */
function run(cmd, args, cwd) {
  return new Promise((resolve) => {
    let text = ''
    const child = spawn(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_update_notifier: 'false' } })
    const timer = setTimeout(() => child.kill('SIGKILL'), INSTALL_MS)
    child.stdout.on('data', (d) => (text += d))
    child.stderr.on('data', (d) => (text += d))
    child.on('error', (e) => {
      clearTimeout(timer)
      resolve({ code: -1, text: e.message })
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code: signal ? null : code, text })
    })
  })
}

/** @param {string} text */
const lastLines = (text) => text.trim().split('\n').filter((l) => l.trim()).slice(-3).join(' | ') || '(no output)'

/** Removes half-done installs of processes that are gone (a test run killed during its install). @param {string} root */
function removeAbandoned(root) {
  for (const name of readdirSync(root)) {
    const m = /\.(\d+)\.\d+\.tmp$/.exec(name)
    if (!m || isAlive(Number(m[1]))) continue
    try {
      if (Date.now() - statSync(join(root, name)).mtimeMs > 60_000) rmSync(join(root, name), { recursive: true, force: true })
    } catch {
      // removed meanwhile
    }
  }
}

/** @param {number} pid */
function isAlive(pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return /** @type {NodeJS.ErrnoException} */ (e).code === 'EPERM'
  }
}

/**
 * Imports a tool by its package name (or a subpath, e.g. `@modelcontextprotocol/sdk/client/index.js`), installing
 * the tools first if needed; rejects with the reason when they cannot be installed.
 * @param {string} name
 * @returns {Promise<any>}
 */
export async function importTool(name) {
  const r = await ensureTestTools()
  if ('error' in r) throw new Error(r.error)
  const { default: load } = await import(pathToFileURL(join(r.dir, 'load.mjs')).href)
  return load(name)
}

// `node test/tools/install.mjs`: install now and say where.
if (process.argv[1] && new URL(import.meta.url).pathname === process.argv[1]) {
  const r = await ensureTestTools()
  if ('error' in r) {
    process.stderr.write(`${r.error}\n`)
    process.exit(1)
  }
  process.stdout.write(`test tools in ${r.dir}${r.installedMs !== undefined ? ` (installed in ${(r.installedMs / 1000).toFixed(1)} s)` : ''}\n`)
}
