/**
 * The bench's load generator: wrk (C; Debian's `wrk`) when it is installed, else autocannon (Node). On these 2 cores
 * the load generator shares the CPU with the server it measures; wrk spends a fraction of autocannon's CPU per request,
 * so at cache-hit rates (20,000+ req/s) it measures the server rather than itself. Every row of one run uses the same
 * generator (printed in the report), so ratios are always like for like.
 *
 * A load's varying paths are a `PathStream`: `next()` for autocannon, and the same sequence as a Lua `request`
 * function for wrk (one wrk thread, so the sequence is not repeated by a second thread).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { importTool } from '../tools/install.mjs'

/** `npm start`'s words, read once: the leading `NAME=value` ones, and the command after them. */
const START = (() => {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: { start: string } }
  const words = pkg.scripts.start.trim().split(/\s+/)
  const n = words.findIndex((w) => !/^[A-Z_][A-Z0-9_]*=/.test(w))
  return { vars: words.slice(0, n), command: words.slice(n) }
})()

/**
 * The served command as `npm start` runs it — its Node flags, `bin/orgscan.js serve` — plus `--json` (the URL on
 * stdout), to be started with `SERVE_ENV` in its environment: the bench measures the service as it is deployed
 * (test/cli/serve-flags.test.ts keeps the command's shebang equal to them).
 */
export const SERVE_ARGS: string[] = [...startCommand().slice(1), '--json']
/** The variables `npm start` sets before `node` (its leading `NAME=value` words): the C allocator's tunables. */
export const SERVE_ENV: Record<string, string> = startEnv()

/**
 * Starts `node <args>` from the repository's root with `env` added to this process's environment and stderr on the
 * file descriptor `stderr`, from `cwd` (default: this checkout); resolves once the server prints its JSON banner line (`--json`) with the URL it listens on.
 */
export function spawnServer(args: string[], env: Record<string, string>, stderr: number, cwd?: string): Promise<{ child: ChildProcess; url: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: cwd ?? new URL('../../', import.meta.url).pathname, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', stderr] })
    let buf = ''
    child.stdout!.on('data', (d) => {
      buf += d
      const line = buf.split('\n').find((l) => l.startsWith('{'))
      if (line) resolve({ child, url: JSON.parse(line).url })
    })
    child.on('exit', (code) => reject(new Error(`${args.at(-1) === '--json' ? 'the service' : args.join(' ')} exited with ${code}`)))
  })
}

/** Stops a server started by `spawnServer`: SIGTERM (it drains), SIGKILL after 5 s. */
export async function stopServer(child: ChildProcess): Promise<void> {
  await new Promise<void>((r) => {
    child.removeAllListeners('exit')
    child.once('exit', () => r())
    child.kill('SIGTERM')
    setTimeout(() => child.kill('SIGKILL'), 5000).unref()
  })
}

/** `npm start`'s command line after its variables, split in words ('node', flags…, 'bin/orgscan.js', 'serve'). */
export function startCommand(): string[] {
  return [...START.command]
}

/** The variables `npm start` sets before its command. */
export function startEnv(): Record<string, string> {
  return Object.fromEntries(START.vars.map((w) => [w.slice(0, w.indexOf('=')), w.slice(w.indexOf('=') + 1)]))
}

export interface PathStream {
  next(): string
  /** A Lua chunk defining `request = function() … end` that returns `wrk.format(nil, <the next path>)`. */
  lua: string
}

export interface Load {
  url: string
  headers: Record<string, string>
  method?: 'GET' | 'POST'
  body?: string
  /** A path per request (each distinct: the cache-miss stream); default: `url`'s path every time. */
  paths?: PathStream
  /** The status every answer has (default 200). */
  expect?: number
}

export interface LoadResult { rps: number; p50: number; p99: number; non2xx: number; errors: number }

/** What run.ts lends the benches it calls (workers.ts, access-log-cost.ts, mcp-vs-rest.ts), so that they all start, load and stop alike. */
export interface BenchTools {
  /** Starts `node <args>` with the benchmark's environment plus `env`; its URL from the --json line. */
  start(args: string[], env: Record<string, string>): Promise<{ child: ChildProcess; url: string }>
  stop(child: ChildProcess): Promise<void>
  /** The fields list's URL path and the benchmark key's header. */
  path: string
  headers: Record<string, string>
  /** The command's arguments (as deployed). */
  serveArgs: string[]
  /** Seconds of one measured load. */
  seconds: number
  log(line: string): void
}

function hasWrk(): boolean {
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' })
    return true
  } catch (e) {
    // wrk --version exits 1 after printing its version.
    return (e as { status?: number }).status === 1
  }
}

export const generator: 'wrk' | 'autocannon' = process.env.BENCH_LOAD === 'autocannon' ? 'autocannon' : hasWrk() ? 'wrk' : 'autocannon'

/** Pages of the fields list that do not repeat within a load: offsets 0–999, then the limit moves on by one. */
export function distinctPages(orgId: string): PathStream {
  let k = 0
  return {
    next: () => {
      const i = k++
      return `/v1/orgs/${orgId}/fields?limit=${50 + (Math.floor(i / 1000) % 150)}&offset=${i % 1000}`
    },
    lua: `local k = 0
request = function()
  local path = string.format("/v1/orgs/${orgId}/fields?limit=%d&offset=%d", 50 + (math.floor(k / 1000) % 150), k % 1000)
  k = k + 1
  return wrk.format(nil, path)
end`,
  }
}

/**
 * First pages of the fields list under `count` distinct filters that all match every field (`ne(id,-k)`, k from
 * `from`), cycled: with a count beyond the totals cache every request counts its filter's total; with a few hundred
 * filters asked once before, none does (its total is known), as a list did before totals.
 */
export function distinctFilters(orgId: string, from: number, count: number): PathStream {
  let k = 0
  return {
    next: () => `/v1/orgs/${orgId}/fields?limit=50&filter=ne(id,-${from + (k++ % count)})`,
    lua: `local k = 0
request = function()
  local path = string.format("/v1/orgs/${orgId}/fields?limit=50&filter=ne(id,-%d)", ${from} + (k % ${count}))
  k = k + 1
  return wrk.format(nil, path)
end`,
  }
}

function ms(v: string): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(v)
  if (!m) return NaN
  const n = Number(m[1])
  return m[2] === 'us' ? n / 1000 : m[2] === 'ms' ? n : m[2] === 's' ? n * 1000 : n * 60_000
}

/** Lua long-bracket string: `[==[…]==]` with enough `=` that the text cannot close it. */
function luaString(s: string): string {
  let eq = ''
  while (s.includes(`]${eq}]`)) eq += '='
  return `[${eq}[${s}]${eq}]`
}

async function runWrk(load: Load, connections: number, seconds: number): Promise<LoadResult> {
  const dir = mkdtempSync(join(tmpdir(), 'orgscan-bench-'))
  try {
    const lua = [
      load.method && load.method !== 'GET' ? `wrk.method = "${load.method}"` : '',
      load.body !== undefined ? `wrk.body = ${luaString(load.body)}` : '',
      load.paths?.lua ?? '',
    ].join('\n')
    const script = join(dir, 'load.lua')
    writeFileSync(script, lua)
    const args = ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency', '-s', script]
    for (const [k, v] of Object.entries(load.headers)) args.push('-H', `${k}: ${v}`)
    args.push(load.url)
    const out = await new Promise<string>((resolve, reject) => {
      const p = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'inherit'] })
      let text = ''
      p.stdout.on('data', (d) => (text += d))
      p.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`wrk exited with ${code}: ${text}`))))
    })
    const num = (re: RegExp) => Number(re.exec(out)?.[1] ?? 0)
    const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out)
    return {
      rps: num(/Requests\/sec:\s+([\d.]+)/),
      p50: ms(/\n\s+50%\s+(\S+)/.exec(out)?.[1] ?? ''),
      p99: ms(/\n\s+99%\s+(\S+)/.exec(out)?.[1] ?? ''),
      non2xx: num(/Non-2xx or 3xx responses: (\d+)/),
      errors: sock ? sock.slice(1).reduce((a, b) => a + Number(b), 0) : 0,
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

async function runAutocannon(load: Load, connections: number, seconds: number): Promise<LoadResult> {
  const paths = load.paths
  const requests = paths ? [{ method: 'GET' as const, setupRequest: (req: Record<string, unknown>) => ({ ...req, path: paths.next() }) }] : undefined
  // Fixed-URL loads in two worker threads; a per-request path (a function) cannot cross into workers.
  // autocannon is a test tool (test/tools/install.mjs), installed on first need.
  const { default: autocannon } = (await importTool('autocannon')) as { default: typeof import('autocannon').default }
  const r = await autocannon({ url: load.url, connections, duration: seconds, headers: load.headers, method: load.method ?? 'GET', body: load.body, pipelining: 1, ...(requests ? { requests } : { workers: 2 }) })
  // Unlike wrk, autocannon counts a 304 as non-2xx.
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors + r.timeouts }
}

/** Runs one load for `seconds` with `connections` connections. */
export function runLoad(load: Load, connections: number, seconds: number): Promise<LoadResult> {
  return generator === 'wrk' ? runWrk(load, connections, seconds) : runAutocannon(load, connections, seconds)
}

/** The machine's CPU time so far, busy and in all (jiffies, all cores: /proc/stat). */
export function cpuTimes(): { busy: number; total: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number)
  const idle = f[3] + (f[4] ?? 0)
  const total = f.reduce((a, x) => a + x, 0)
  return { busy: total - idle, total }
}

/** CPU time of a process so far, µs (user + system; clock ticks of 10 ms). */
export function processCpuUs(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(f[11]) + Number(f[12])) * 10_000
}

/**
 * `pairs` pairs of turns of `a` and `b`, the order flipped every pair (a first, then b first, …): short alternating
 * turns cancel the drift of a noisy machine that one long run after another does not. Each pair as [a's, b's].
 */
export async function alternatingPairs<T>(pairs: number, a: () => Promise<T>, b: () => Promise<T>): Promise<Array<[T, T]>> {
  const out: Array<[T, T]> = []
  for (let i = 0; i < pairs; i++) {
    if (i % 2 === 0) {
      const x = await a()
      out.push([x, await b()])
    } else {
      const y = await b()
      out.push([await a(), y])
    }
  }
  return out
}

/** The median of the rounds' figures: the middle one, or the mean of the two middle ones (with two rounds, their mean). */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  const m = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2
}

/** An MCP session (2025-11-25) on the server and the load of `tools/call list_org_fields` with limit 50 in it. */
export async function mcpLoad(base: string, auth: Record<string, string>, orgId: string): Promise<Load> {
  const url = `${base}/v1/mcp`
  const headers = { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
  const init = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } }) })
  const sid = init.headers.get('mcp-session-id')
  if (init.status !== 200 || !sid) throw new Error(`MCP initialize answered ${init.status}`)
  const call = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_org_fields', arguments: { orgId, limit: 50 } } }
  const load: Load = { url, method: 'POST', headers: { ...headers, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' }, body: JSON.stringify(call) }
  const check = await fetch(url, { method: 'POST', headers: load.headers, body: load.body })
  const answer = (await check.json()) as { result?: { isError?: boolean; structuredContent?: { data: unknown[] } } }
  if (check.status !== 200 || answer.result?.isError || answer.result?.structuredContent?.data.length !== 50) throw new Error(`MCP tools/call answered ${check.status}: ${JSON.stringify(answer).slice(0, 300)}`)
  return load
}
