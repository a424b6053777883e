/**
 * Times the worst legal list requests (worst-filter-set.ts) against a running server with the response cache off, so
 * that every request reads the database: each shape `runs` times (median and slowest), the fields list at offset 20,000
 * under every sort the resource allows (each field, both directions), and a load of distinct pages at offsets 0–20,000.
 * Used by `npm run bench:filters` (worst-filters.ts) and `npm run bench` (run.ts).
 */
import { registry } from '../../resources/index.ts'
import { compileRegistry } from '../../runtime/core/registry.ts'
import { median, runLoad, type LoadResult, type PathStream } from './load.ts'
import { WORST_FILTERS } from './worst-filter-set.ts'

export interface ShapeTime {
  name: string
  status: number
  /** Milliseconds, as a client on the same machine sees them (request sent to last byte read). */
  medianMs: number
  maxMs: number
}

export interface WorstFilterTimes {
  shapes: ShapeTime[]
  /** `fields?limit=200&offset=20000&sort=…` for every sortable field and direction: the median and slowest of them. */
  deepSorts: { sorts: number; medianMs: number; maxMs: number; slowest: string }
  /** Distinct pages of the fields list (offsets 0–20,000, limits 50–200) under load. */
  deepLoad: LoadResult & { connections: number; seconds: number }
}

export interface WorstFilterOptions {
  /** The server's base URL and the path prefix of the org: `${url}/v1/orgs/${orgId}/`. */
  url: string
  orgId: string
  authorization: string
  runs?: number
  loadSeconds?: number
  connections?: number
  log?: (line: string) => void
}

/** The deep-page stream: offset `k·7919 mod 20,001` (every offset 0–20,000 once before any repeats), limit 50–200. */
export function deepPages(orgId: string): PathStream {
  let k = 0
  return {
    next: () => {
      const i = k++
      return `/v1/orgs/${orgId}/fields?limit=${50 + (i % 151)}&offset=${(i * 7919) % 20001}`
    },
    lua: `local k = 0
request = function()
  local path = string.format("/v1/orgs/${orgId}/fields?limit=%d&offset=%d", 50 + (k % 151), (k * 7919) % 20001)
  k = k + 1
  return wrk.format(nil, path)
end`,
  }
}

/** Every sort of the fields list: each sortable field, ascending and descending. */
export function fieldSorts(): string[] {
  const fields = compileRegistry(registry).find((c) => c.name === 'fields')!
  return (fields.decl.sortable ?? []).flatMap((f) => [f, `-${f}`])
}

async function time(url: string, authorization: string): Promise<{ ms: number; status: number }> {
  const t0 = performance.now()
  const r = await fetch(url, { headers: { authorization } })
  await r.arrayBuffer()
  return { ms: performance.now() - t0, status: r.status }
}

async function shape(name: string, url: string, authorization: string, runs: number): Promise<ShapeTime> {
  await time(url, authorization) // the first run prepares the statement
  const times: number[] = []
  let status = 0
  for (let i = 0; i < runs; i++) {
    const r = await time(url, authorization)
    times.push(r.ms)
    status = r.status
  }
  return { name, status, medianMs: median(times), maxMs: Math.max(...times) }
}

export async function timeWorstFilters(o: WorstFilterOptions): Promise<WorstFilterTimes> {
  const runs = o.runs ?? 5
  const log = o.log ?? (() => undefined)
  const base = `${o.url}/v1/orgs/${o.orgId}/`
  const shapes: ShapeTime[] = []
  for (const w of WORST_FILTERS) {
    const s = await shape(w.name, base + w.path, o.authorization, runs)
    log(`${s.medianMs.toFixed(0).padStart(6)} ms (slowest ${s.maxMs.toFixed(0).padStart(4)})  ${s.status}  ${w.name}`)
    shapes.push(s)
  }
  const sorts: ShapeTime[] = []
  for (const sort of fieldSorts()) sorts.push(await shape(sort, `${base}fields?limit=200&offset=20000&sort=${sort}`, o.authorization, 3))
  const slowest = sorts.reduce((a, b) => (b.medianMs > a.medianMs ? b : a))
  const deepSorts = { sorts: sorts.length, medianMs: median(sorts.map((s) => s.medianMs)), maxMs: Math.max(...sorts.map((s) => s.maxMs)), slowest: slowest.name }
  log(`${deepSorts.medianMs.toFixed(0).padStart(6)} ms (slowest ${deepSorts.maxMs.toFixed(0).padStart(4)})  offset 20,000 under each of the ${sorts.length} sorts (slowest median: sort=${slowest.name})`)
  const connections = o.connections ?? 32
  const seconds = o.loadSeconds ?? 10
  const load = await runLoad({ url: `${base}fields`, headers: { authorization: o.authorization }, paths: deepPages(o.orgId) }, connections, seconds)
  log(`${load.rps.toFixed(0).padStart(6)} req/s, p50 ${load.p50} ms, p99 ${load.p99} ms, non-2xx ${load.non2xx}: distinct pages at offsets 0-20,000 (${connections} connections, ${seconds} s)`)
  return { shapes, deepSorts, deepLoad: { ...load, connections, seconds } }
}
