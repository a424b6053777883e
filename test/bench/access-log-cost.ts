/**
 * `npm run bench`, the access log's cost: a process writing the access log (to a file, as to a log collector) against
 * one with `ORGSCAN_ACCESS_LOG=off`, loaded in turn with the repeated request (cache hits, where a cost per request
 * shows most), for `pairs` pairs of short turns, the order flipped every pair. Per pair: the ratio of throughputs, and
 * the ratio of the server's CPU time per request (/proc/<pid>/stat). Reported: the medians of the pairs.
 *
 * Every pair has two new processes. Before served processes ran with `--no-allocation-site-pretenuring`, one in
 * about four settled into a slower state for its life: its young-generation collections promoted over a hundred times
 * as much as usual, it ran a full collection every 150–250 ms instead of about every second, and served 12–15 % fewer
 * requests (docs/adr/0019-no-allocation-site-pretenuring.md). With one process of each kind for the whole run, that
 * state in either of them decided the result (0.77 and 1.17 for the same code). With new processes per pair, any state
 * a process settles into is one pair's outlier, in either direction, and the median passes over it. Short alternating
 * turns cancel the drift of a noisy machine that one long run after another does not. Called by run.ts with its own
 * tools.
 */
import { median, processCpuUs as cpuUs, type BenchTools } from './load.ts'

interface Measured {
  rps: number
}

export interface AccessLogBench extends BenchTools {
  measure(load: { url: string; headers: Record<string, string> }, seconds: number): Promise<Measured>
  /** Pairs of turns, each turn `seconds` long, each pair on two new processes. */
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
  const pairs: AccessLogResult['pairs'] = []
  for (let i = 0; i < d.pairs; i++) {
    const on = await d.start(d.serveArgs, {})
    const off = await d.start(d.serveArgs, { ORGSCAN_ACCESS_LOG: 'off' })
    try {
      const turn = async (p: typeof on) => {
        const c0 = cpuUs(p.child.pid!)
        const m = await d.measure({ url: p.url + d.path, headers: d.headers }, d.seconds)
        return { rps: m.rps, cpuUs: (cpuUs(p.child.pid!) - c0) / Math.max(1, m.rps * d.seconds) }
      }
      for (const p of [on, off]) await d.measure({ url: p.url + d.path, headers: d.headers }, 2) // warm-up
      // One pair of turns on these two processes, the order flipped every other pair.
      const first = i % 2 === 0 ? await turn(on) : undefined
      const b = await turn(off)
      const a = first ?? (await turn(on))
      pairs.push({ on: a.rps, off: b.rps, cpuUsOn: a.cpuUs, cpuUsOff: b.cpuUs })
      d.log(`access log pair ${i + 1}: on ${a.rps.toFixed(0)} off ${b.rps.toFixed(0)} req/s (${(a.rps / b.rps).toFixed(2)}), server CPU ${a.cpuUs.toFixed(0)} against ${b.cpuUs.toFixed(0)} µs per request`)
    } finally {
      await d.stop(on.child)
      await d.stop(off.child)
    }
  }
  return {
    rpsRatio: median(pairs.map((p) => p.on / p.off)),
    cpuRatio: median(pairs.map((p) => p.cpuUsOff / p.cpuUsOn)),
    cpuUsOn: median(pairs.map((p) => p.cpuUsOn)),
    cpuUsOff: median(pairs.map((p) => p.cpuUsOff)),
    pairs,
  }
}
