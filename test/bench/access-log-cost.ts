/**
 * `npm run bench`, the access log's cost: two service processes at once, one writing the access log (to a file, as to
 * a log collector), one with `ORGSCAN_ACCESS_LOG=off`, loaded in turn with the repeated request (cache hits, where a
 * cost per request shows most) for `pairs` pairs of short turns, the order flipped every pair. Per pair: the ratio of
 * throughputs, and the ratio of the server's CPU time per request (/proc/<pid>/stat). Reported: the medians of the
 * pairs. Short alternating turns cancel the drift of a noisy machine that one long run after another does not (seen
 * here: 0.70 and 1.07 for the same code in two rounds of the main table). Called by run.ts with its own tools.
 */
import type { ChildProcess } from 'node:child_process'
import { alternatingPairs, median, processCpuUs as cpuUs, type BenchTools } from './load.ts'

interface Measured {
  rps: number
}

export interface AccessLogBench extends BenchTools {
  measure(load: { url: string; headers: Record<string, string> }, seconds: number): Promise<Measured>
  /** Pairs of turns, each turn `seconds` long. */
  pairs: number
}

export interface AccessLogResult {
  /** Median over the pairs of (requests/s with the log) / (without): target ≥ 0.95. */
  rpsRatio: number
  /** Median over the pairs of (server CPU per request without the log) / (with it): the same as a throughput ratio for a process that one core bounds. */
  cpuRatio: number
  /** Server CPU per request, µs: medians with and without the log. */
  cpuUsOn: number
  cpuUsOff: number
  pairs: Array<{ on: number; off: number; cpuUsOn: number; cpuUsOff: number }>
}

export async function benchAccessLog(d: AccessLogBench): Promise<AccessLogResult> {
  const on = await d.start(d.serveArgs, {})
  const off = await d.start(d.serveArgs, { ORGSCAN_ACCESS_LOG: 'off' })
  try {
    const turn = async (p: { child: ChildProcess; url: string }) => {
      const c0 = cpuUs(p.child.pid!)
      const m = await d.measure({ url: p.url + d.path, headers: d.headers }, d.seconds)
      return { rps: m.rps, cpuUs: (cpuUs(p.child.pid!) - c0) / Math.max(1, m.rps * d.seconds) }
    }
    for (const p of [on, off]) await d.measure({ url: p.url + d.path, headers: d.headers }, 2) // warm-up
    const pairs = (await alternatingPairs(d.pairs, () => turn(on), () => turn(off))).map(([a, b]) => ({ on: a.rps, off: b.rps, cpuUsOn: a.cpuUs, cpuUsOff: b.cpuUs }))
    return {
      rpsRatio: median(pairs.map((p) => p.on / p.off)),
      cpuRatio: median(pairs.map((p) => p.cpuUsOff / p.cpuUsOn)),
      cpuUsOn: median(pairs.map((p) => p.cpuUsOn)),
      cpuUsOff: median(pairs.map((p) => p.cpuUsOff)),
      pairs,
    }
  } finally {
    await d.stop(on.child)
    await d.stop(off.child)
  }
}
