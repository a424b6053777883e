/**
 * `npm run bench`, workers: `orgscan serve --workers 2` against one process on PostgreSQL, alternating in one run, for
 * the authenticated, quota-counted list GET /v1/orgs/{orgId}/fields with a distinct page every request (every
 * request misses the response cache and reads the database: the path that scales with processes), and the resident
 * memory of every process under that load (the primary and each worker). Called by run.ts with its own tools, so
 * both measure alike.
 */
import type { ChildProcess } from 'node:child_process'
import { childPids } from '../helpers/proc.ts'
import { median, type PathStream } from './load.ts'

interface Measured {
  rps: number
  p50: number
  p99: number
  non2xx: number
  errors: number
}

export interface WorkersBench {
  /** Starts `node <args>` with the benchmark's environment plus `env`; its URL from the --json line. */
  start(args: string[], env: Record<string, string>): Promise<{ child: ChildProcess; url: string }>
  stop(child: ChildProcess): Promise<void>
  /** One load of `seconds` against `url`, each request's path from `paths`. */
  measure(load: { url: string; headers: Record<string, string>; paths: PathStream }, seconds: number): Promise<Measured>
  rssMb(pid: number | undefined): number | undefined
  /** A fresh stream of distinct pages of the fields list. */
  pages(): PathStream
  /** The fields list's URL path and the benchmark key's header. */
  path: string
  headers: Record<string, string>
  /** The command's arguments (as deployed) before `--workers`. */
  serveArgs: string[]
  seconds: number
  rounds: number
  log(line: string): void
}

export interface WorkersResult {
  one: Measured & { rssPeakMb: number }
  two: Measured & { primaryRssPeakMb: number; workerRssPeakMb: number[] }
  /** Requests per second with two workers over one process (target ≥ 1.3 on 2 cores shared with PostgreSQL). */
  ratio: number
}

/** Samples the resident memory of `pid` and of its children every 250 ms; stop() gives the peak of each. */
function sampleTree(pid: number, rssMb: WorkersBench['rssMb']): { stop(): { own: number; children: number[] } } {
  let own = 0
  const children = new Map<number, number>()
  const timer = setInterval(() => {
    own = Math.max(own, rssMb(pid) ?? 0)
    for (const c of childPids(pid)) children.set(c, Math.max(children.get(c) ?? 0, rssMb(c) ?? 0))
  }, 250)
  return {
    stop() {
      clearInterval(timer)
      return { own, children: [...children.values()] }
    },
  }
}


export async function benchWorkers(b: WorkersBench): Promise<WorkersResult> {
  const runs: { one: WorkersResult['one'][]; two: WorkersResult['two'][] } = { one: [], two: [] }
  for (let round = 1; round <= b.rounds; round++) {
    for (const workers of [1, 2]) {
      const { child, url } = await b.start([...b.serveArgs, '--workers', String(workers)], {})
      try {
        const load = { url: url + b.path, headers: b.headers, paths: b.pages() }
        await b.measure(load, 2) // warm-up
        const mem = sampleTree(child.pid!, b.rssMb)
        const m = await b.measure({ ...load, paths: b.pages() }, b.seconds)
        const peak = mem.stop()
        if (workers === 1) runs.one.push({ ...m, rssPeakMb: peak.own })
        else runs.two.push({ ...m, primaryRssPeakMb: peak.own, workerRssPeakMb: peak.children })
        const rss = workers === 1 ? `rss peak ${peak.own.toFixed(0)} MB` : `rss peak primary ${peak.own.toFixed(0)} MB, workers ${peak.children.map((x) => x.toFixed(0)).join(' and ')} MB`
        b.log(`round ${round} workers-${workers} (misses) ${m.rps.toFixed(0).padStart(6)} req/s  p50 ${m.p50} ms  p99 ${m.p99} ms  non-2xx ${m.non2xx}  errors ${m.errors}  ${rss}`)
      } finally {
        await b.stop(child)
      }
    }
  }
  const pick = <T extends Measured>(ms: T[]): Measured => ({
    rps: median(ms.map((m) => m.rps)),
    p50: median(ms.map((m) => m.p50)),
    p99: median(ms.map((m) => m.p99)),
    non2xx: ms.reduce((a, m) => a + m.non2xx, 0),
    errors: ms.reduce((a, m) => a + m.errors, 0),
  })
  const one = { ...pick(runs.one), rssPeakMb: Math.max(...runs.one.map((m) => m.rssPeakMb)) }
  const two = {
    ...pick(runs.two),
    primaryRssPeakMb: Math.max(...runs.two.map((m) => m.primaryRssPeakMb)),
    workerRssPeakMb: runs.two.map((m) => Math.max(...m.workerRssPeakMb)),
  }
  return { one, two, ratio: two.rps / one.rps }
}
