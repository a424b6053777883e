/**
 * The primary's workers for `orgscan serve --workers N` (docs/operating.md "Several processes"): forks them (each
 * runs the ordinary service; node:cluster shares the listening ports and stderr), restarts a
 * worker that dies (runtime/platform/cluster/restart-policy.ts) and stops them all.
 */
import cluster, { type Worker } from 'node:cluster'
import type { Logger } from '../../core/log.ts'
import { isMessage, WORKER_ENV, type ReadyMessage, type WorkerAssignment } from './messages.ts'
import { decideRestart, RESTART_POLICY, type RestartPolicy } from './restart-policy.ts'

interface Slot {
  slot: number
  worker?: Worker
  /** When its current worker said it serves. */
  readyAt?: number
  /** Failed starts in a row. */
  failures: number
  /** The ports its current worker was told to listen on (none: the configured ones). */
  ports?: Omit<WorkerAssignment, 'slot'>
  restartTimer?: NodeJS.Timeout
}

export interface PoolOptions {
  count: number
  log: Logger
  /** A worker was forked to replace one that died. */
  onRestart(slot: number): void
  /** A slot failed to start too often in a row (the message says which and how): the service should stop. */
  onGiveUp(message: string): void
  policy?: RestartPolicy
}

export class WorkerPool {
  private readonly slots: Slot[]
  private phase: 'starting' | 'running' | 'stopping' = 'starting'
  /** The ports the workers listen on, from the last ready message. */
  private listening: Omit<WorkerAssignment, 'slot'> = {}
  private startup?: { ready(slot: number, m: ReadyMessage): void; failed(message: string): void }

  constructor(private readonly o: PoolOptions) {
    // stdin closed, stdout and stderr shared (a worker writes whole lines in atomic blocks: runtime/platform/http/access-sink.ts),
    // and the cluster's IPC channel.
    cluster.setupPrimary({ stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    this.slots = Array.from({ length: o.count }, (_, i) => ({ slot: i + 1, failures: 0 }))
  }

  /** Forks every worker; resolves with the first one's ready message once all serve, rejects if one fails first. */
  start(): Promise<ReadyMessage> {
    return new Promise((resolve, reject) => {
      const waiting = new Set(this.slots.map((s) => s.slot))
      let first: ReadyMessage | undefined
      this.startup = {
        ready: (slot, m) => {
          first ??= m
          waiting.delete(slot)
          if (waiting.size > 0) return
          this.phase = 'running'
          this.startup = undefined
          resolve(first)
        },
        failed: (message) => {
          this.startup = undefined
          reject(new Error(message))
        },
      }
      for (const s of this.slots) this.fork(s)
    })
  }

  /** The workers serving now (the ones to ask for metrics). */
  ready(): Worker[] {
    return this.slots.filter((s) => s.worker && s.readyAt !== undefined && s.worker.isConnected()).map((s) => s.worker!)
  }

  /**
   * SIGTERM to every worker (each drains as a single process does: ORGSCAN_DRAIN_MS), and SIGKILL to any still running
   * after `graceMs`. Resolves once all have exited: true when every one stopped cleanly.
   */
  async stop(graceMs: number): Promise<boolean> {
    this.phase = 'stopping'
    for (const s of this.slots) clearTimeout(s.restartTimer)
    const live = this.slots.flatMap((s) => (s.worker && s.worker.process.exitCode === null && s.worker.process.signalCode === null ? [s.worker] : []))
    const exits = live.map((w) => new Promise<boolean>((r) => w.once('exit', (code, signal) => r(code === 0 || signal === 'SIGTERM'))))
    for (const w of live) w.process.kill('SIGTERM')
    const kill = setTimeout(() => {
      for (const w of live) if (w.process.exitCode === null && w.process.signalCode === null) w.process.kill('SIGKILL')
    }, graceMs)
    const clean = await Promise.all(exits)
    clearTimeout(kill)
    return clean.every(Boolean)
  }

  /**
   * Which ports a new worker listens on. node:cluster shares a listener between workers that listen with the same
   * arguments, for as long as one of them lives: a replacement repeats what the living workers were told (with
   * `--port 0`, port 0, so it joins their listener rather than failing to bind the port they hold). When no worker
   * lives, it is told the ports they listened on, so that the service keeps its address even with `--port 0`.
   */
  private portsFor(s: Slot): Omit<WorkerAssignment, 'slot'> | undefined {
    const living = this.slots.find((o) => o !== s && o.worker)
    return living ? living.ports : this.listening.port === undefined ? undefined : this.listening
  }

  private fork(s: Slot): void {
    s.ports = this.portsFor(s)
    const assignment: WorkerAssignment = { slot: s.slot, ...s.ports }
    const w = cluster.fork({ [WORKER_ENV]: JSON.stringify(assignment) })
    s.worker = w
    s.readyAt = undefined
    w.on('message', (m: unknown) => {
      if (!isMessage<ReadyMessage>(m, 'ready') || s.worker !== w) return
      s.readyAt = Date.now()
      this.listening = { port: m.port, mcpPort: m.mcpPort }
      this.startup?.ready(s.slot, m)
    })
    w.on('exit', (code: number | null, signal: string | null) => this.exited(s, w, code, signal))
  }

  private exited(s: Slot, w: Worker, code: number | null, signal: string | null): void {
    if (s.worker !== w || this.phase === 'stopping') return
    s.worker = undefined
    const readyForMs = s.readyAt === undefined ? undefined : Date.now() - s.readyAt
    const how = signal ? `signal ${signal}` : `exit code ${code}`
    if (this.startup && readyForMs === undefined) {
      // The first start: like a single process that cannot start, the service does not start (its message is above).
      return this.startup.failed(`worker ${s.slot} of ${this.slots.length} failed to start (${how}); see its message above.`)
    }
    const d = decideRestart(s.failures, readyForMs, this.o.policy ?? RESTART_POLICY)
    s.failures = d.failures
    if ('giveUp' in d) {
      return this.o.onGiveUp(`worker ${s.slot} failed to start ${d.failures} times in a row (last: ${how}); see its messages above.`)
    }
    this.o.log.warn({ msg: 'worker exited; restarting it', worker: s.slot, pid: w.process.pid, code, signal, restartInMs: d.delayMs })
    s.restartTimer = setTimeout(() => {
      s.restartTimer = undefined
      if (this.phase === 'stopping') return
      this.fork(s)
      this.o.onRestart(s.slot)
    }, d.delayMs)
  }
}
