/**
 * `npm run bench`, MCP against REST on one server: the tool call `tools/call list_org_fields {orgId, limit: 50}` and
 * the REST request it stands for (GET /v1/orgs/{orgId}/fields?limit=50), both answered from the response cache, loaded
 * in turn for `pairs` pairs of short turns, the order flipped every pair. Per pair: the ratio of throughputs (MCP over
 * REST; the contract's floor is one half), and the server's CPU time per request of each (/proc/<pid>/stat).
 * Reported: the medians of the pairs. The main table measures the two minutes apart, MCP after the stream of distinct
 * pages has filled the cache; there the ratio moved between 0.37 and 0.55 from one round to the next on one machine.
 * Called by run.ts with its own tools.
 */
import { alternatingPairs, median, processCpuUs, type BenchTools, type Load, type LoadResult } from './load.ts'

export interface McpVsRestBench extends BenchTools {
  measure(load: Load, seconds: number): Promise<LoadResult>
  /** The MCP load on the server at `url`: a session opened, the call checked (run.ts `mcpLoad`). */
  mcpLoad(url: string): Promise<Load>
  pairs: number
}

export interface McpVsRestResult {
  /** Median over the pairs of (MCP calls/s) / (REST requests/s): target ≥ 0.5. */
  rpsRatio: number
  /** Server CPU per request, µs: medians for MCP and REST. */
  cpuUsMcp: number
  cpuUsRest: number
  pairs: Array<{ mcp: number; rest: number; cpuUsMcp: number; cpuUsRest: number }>
}

export async function benchMcpVsRest(d: McpVsRestBench): Promise<McpVsRestResult> {
  const { child, url } = await d.start(d.serveArgs, {})
  try {
    const rest: Load = { url: url + d.path, headers: d.headers }
    const mcp = await d.mcpLoad(url)
    const turn = async (load: Load) => {
      const c0 = processCpuUs(child.pid!)
      const m = await d.measure(load, d.seconds)
      if (m.non2xx > 0 || m.errors > 0) throw new Error(`${load.url}: ${m.non2xx} answers not 2xx, ${m.errors} errors`)
      return { rps: m.rps, cpuUs: (processCpuUs(child.pid!) - c0) / Math.max(1, m.rps * d.seconds) }
    }
    for (const load of [rest, mcp]) await d.measure(load, 2) // warm-up
    const pairs = (await alternatingPairs(d.pairs, () => turn(mcp), () => turn(rest))).map(([m, r]) => ({ mcp: m.rps, rest: r.rps, cpuUsMcp: m.cpuUs, cpuUsRest: r.cpuUs }))
    return {
      rpsRatio: median(pairs.map((p) => p.mcp / p.rest)),
      cpuUsMcp: median(pairs.map((p) => p.cpuUsMcp)),
      cpuUsRest: median(pairs.map((p) => p.cpuUsRest)),
      pairs,
    }
  } finally {
    await d.stop(child)
  }
}
