/** Runs `orgscan serve --json` as its own process (as in production) and waits for its URL. */
import { spawn } from 'node:child_process'
import { closeSync, openSync, readFileSync } from 'node:fs'
import { TEST_NODE_FLAGS } from './node-flags.ts'

const bin = new URL('../../bin/orgscan.js', import.meta.url).pathname

export interface ServerProcess {
  url: string
  /** The process id (with --workers N, the primary's). */
  pid: number
  /** The JSON line `serve --json` printed ({url, database, demoKey}). */
  info: { url: string; mcpUrl: string; demoKey: { keyId: string; secret: string } | null; demoSignIn?: { email: string; password: string } | null; adminUrl?: string; workers?: number }
  /** Exit code once exited, else null. */
  exitCode(): number | null
  /** What it wrote on stderr so far (progress, logs, the access log). */
  stderr(): string
  /** What it wrote on stdout so far (the --json line). */
  stdout(): string
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code. */
  stop(graceMs?: number): Promise<number | null>
}

/**
 * `stderrFile`: stderr goes to this file (appended), as to a log file, instead of a pipe to this process. `umask`: the
 * server runs with this file-mode creation mask (through sh), e.g. 0o000 to see the modes it sets itself.
 */
export function spawnServer(env: Record<string, string | undefined>, opts: { stderrFile?: string; umask?: number } = {}): Promise<ServerProcess> {
  const clean = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)) as NodeJS.ProcessEnv
  const fd = opts.stderrFile ? openSync(opts.stderrFile, 'a') : undefined
  const argv = [...TEST_NODE_FLAGS, bin, 'serve', '--port', '0', '--json']
  const [command, args] = opts.umask === undefined ? [process.execPath, argv] : ['/bin/sh', ['-c', `umask ${opts.umask.toString(8).padStart(3, '0')} && exec "$@"`, 'sh', process.execPath, ...argv]]
  const child = spawn(command, args, { env: clean, stdio: ['ignore', 'pipe', fd ?? 'pipe'] })
  if (fd !== undefined) closeSync(fd)
  let exit: number | null = null
  let piped = ''
  child.stderr?.on('data', (d) => (piped += d))
  const stderrText = () => (opts.stderrFile ? readFileSync(opts.stderrFile, 'utf8') : piped)
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r((exit = code ?? -1))))
  return new Promise((resolve, reject) => {
    let out = ''
    child.stdout!.on('data', (d) => {
      out += d
      const line = out.split('\n').find((l) => l.startsWith('{'))
      if (!line) return
      const info = JSON.parse(line)
      resolve({
        url: info.url,
        pid: child.pid!,
        info,
        exitCode: () => exit,
        stderr: stderrText,
        stdout: () => out,
        async stop(graceMs = 15_000) {
          if (exit !== null) return exit
          const kill = setTimeout(() => child.kill('SIGKILL'), graceMs)
          child.kill('SIGTERM')
          const code = await exited
          clearTimeout(kill)
          return code
        },
      })
    })
    void exited.then(() => reject(new Error(`orgscan serve exited early: ${stderrText().trim().split('\n').at(-1) ?? ''}`)))
  })
}
