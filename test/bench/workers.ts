/**
 * `npm run bench`, workers: `orgscan serve --workers 2` against one process on PostgreSQL, alternating in one run, for
 * the authenticated, quota-counted list GET /v1/orgs/{orgId}/fields with a distinct page every request (every
 * request misses the response cache and reads the database: the path that scales with processes), with how busy the
 * whole machine was meanwhile (what a second process can add is bounded by the CPU left), the resident memory of every
 * process under that load (the primary and each worker), and then the repeated request (cache hits, where Node alone
 * does the work). Called by run.ts with its own tools, so both measure alike.
 */
import { childPids } from '../helpers/proc.ts'
import { cpuTimes, median, type BenchTools, type PathStream } from './load.ts'

interface Measured {
  rps: number
  p50: number
  p99: number
  non2xx: number
  errors: number
}

/** `serveArgs`: the command's arguments before `--workers`. */
export interface WorkersBench extends BenchTools {
  /** One load of `seconds` against `url`, each request's path from `paths` (the URL's every time without). */
  measure(load: { url: string; headers: Record<string, string>; paths?: PathStream }, seconds: number): Promise<Measured>
  rssMb(pid: number | undefined): number | undefined
  /** A fresh stream of distinct pages of the fields list. */
  pages(): PathStream
  rounds: number
}

export interface WorkersResult {
  /** Misses; `machineBusy`: the share of the machine's CPU time in use during the load (all cores, all processes). */
  one: Measured & { rssPeakMb: number; machineBusy: number }
  two: Measured & { primaryRssPeakMb: number; workerRssPeakMb: number[]; machineBusy: number }
  /** Requests per second with two workers over one process (target ≥ 1.3 on 2 cores shared with PostgreSQL). */
  ratio: number
  /** The repeated request (cache hits) with one process and with two workers, and their ratio. */
  hits: { one: Measured; two: Measured; ratio: number }
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
  const hits: { one: Measured[]; two: Measured[] } = { one: [], two: [] }
  for (let round = 1; round <= b.rounds; round++) {
    for (const workers of [1, 2]) {
      const { child, url } = await b.start([...b.serveArgs, '--workers', String(workers)], {})
      try {
        const load = { url: url + b.path, headers: b.headers, paths: b.pages() }
        await b.measure(load, 2) // warm-up
        const mem = sampleTree(child.pid!, b.rssMb)
        const cpu0 = cpuTimes()
        const m = await b.measure({ ...load, paths: b.pages() }, b.seconds)
        const cpu1 = cpuTimes()
        const machineBusy = (cpu1.busy - cpu0.busy) / Math.max(1, cpu1.total - cpu0.total)
        const peak = mem.stop()
        if (workers === 1) runs.one.push({ ...m, rssPeakMb: peak.own, machineBusy })
        else runs.two.push({ ...m, primaryRssPeakMb: peak.own, workerRssPeakMb: peak.children, machineBusy })
        const rss = workers === 1 ? `rss peak ${peak.own.toFixed(0)} MB` : `rss peak primary ${peak.own.toFixed(0)} MB, workers ${peak.children.map((x) => x.toFixed(0)).join(' and ')} MB`
        b.log(`round ${round} workers-${workers} (misses) ${m.rps.toFixed(0).padStart(6)} req/s  p50 ${m.p50} ms  p99 ${m.p99} ms  non-2xx ${m.non2xx}  errors ${m.errors}  machine ${(machineBusy * 100).toFixed(0)} % busy  ${rss}`)
        // The repeated request: every worker's cache holds it after the warm-up, so Node alone does the work.
        const hit = { url: url + b.path, headers: b.headers }
        await b.measure(hit, 2)
        const h = await b.measure(hit, b.seconds)
        hits[workers === 1 ? 'one' : 'two'].push(h)
        b.log(`round ${round} workers-${workers} (hits)   ${h.rps.toFixed(0).padStart(6)} req/s  p50 ${h.p50} ms  p99 ${h.p99} ms  non-2xx ${h.non2xx}  errors ${h.errors}`)
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
  const one = { ...pick(runs.one), rssPeakMb: Math.max(...runs.one.map((m) => m.rssPeakMb)), machineBusy: median(runs.one.map((m) => m.machineBusy)) }
  const two = {
    ...pick(runs.two),
    primaryRssPeakMb: Math.max(...runs.two.map((m) => m.primaryRssPeakMb)),
    workerRssPeakMb: runs.two.map((m) => Math.max(...m.workerRssPeakMb)),
    machineBusy: median(runs.two.map((m) => m.machineBusy)),
  }
  const hitsOne = pick(hits.one)
  const hitsTwo = pick(hits.two)
  return { one, two, ratio: two.rps / one.rps, hits: { one: hitsOne, two: hitsTwo, ratio: hitsTwo.rps / hitsOne.rps } }
}
