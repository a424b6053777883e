/**
 * Prometheus metrics (docs/operating.md "Metrics"), served by the admin listener only (`ORGSCAN_ADMIN_PORT`, on
 * loopback unless `ORGSCAN_ADMIN_HOST` says otherwise), never on the public port: requests by route template and
 * status, request latency, quota admissions and rejections by window, MCP tool calls by tool and error code, the
 * response cache's hits, misses, evictions and size, and Node's own process metrics. A worker of `orgscan serve
 * --workers N` adds a few series labelled with its slot (`worker="1"`…), so that one scrape of the primary, which
 * sums every worker's metrics, still shows each process (docs/operating.md "Several processes").
 */
import client from 'prom-client'
import type { AccessLine } from './http/access-log.ts'
import type { ResponseCacheStats } from '../core/cache/response-cache.ts'
import type { ReplicaReadStats } from '../core/db/replica.ts'

export interface Metrics {
  readonly registry: client.Registry
  /** An answered request (from the access-log hook of the HTTP server). */
  request(line: AccessLine): void
  /** A quota decision on a counted read: admitted, or rejected with the blocking window. */
  quota(admitted: boolean, window: 'daily' | 'monthly' | undefined): void
  /** An MCP tool call and its error code (`ok` when it succeeded). */
  toolCall(tool: string, error: string | undefined): void
  /** A read statement starts; call the result when it has ended. */
  query(): () => void
}

export function createMetrics(o: { cacheStats: () => ResponseCacheStats; inFlight: () => number; readPoolSize: number; replicaStats?: () => ReplicaReadStats; worker?: number }): Metrics {
  const registry = new client.Registry()
  client.collectDefaultMetrics({ register: registry, prefix: 'orgscan_' })
  const requests = new client.Counter({ name: 'orgscan_http_requests_total', help: 'Answered HTTP requests by method, route template and status.', labelNames: ['method', 'route', 'status'], registers: [registry] })
  const latency = new client.Histogram({
    name: 'orgscan_http_request_duration_seconds',
    help: 'Time from the request to the end of its answer, by route template.',
    labelNames: ['route'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  })
  const quota = new client.Counter({ name: 'orgscan_quota_decisions_total', help: 'Quota decisions on counted reads: admitted, or rejected with the window that blocked.', labelNames: ['result', 'window'], registers: [registry] })
  const tools = new client.Counter({ name: 'orgscan_mcp_tool_calls_total', help: 'MCP tool calls by tool and error code (ok when it succeeded).', labelNames: ['tool', 'error'], registers: [registry] })
  // The cache keeps its own counts; these read them when scraped.
  const cacheCounter = (name: string, help: string, pick: (s: ResponseCacheStats) => number) =>
    new client.Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset()
        this.inc(pick(o.cacheStats()))
      },
    })
  cacheCounter('orgscan_response_cache_hits_total', 'Reads answered from the response cache.', (s) => s.hits)
  cacheCounter('orgscan_response_cache_misses_total', 'Cacheable reads that went to the database.', (s) => s.misses)
  cacheCounter('orgscan_response_cache_evictions_total', 'Answers evicted to stay within the bound.', (s) => s.evictions)
  new client.Gauge({
    name: 'orgscan_response_cache_bytes',
    help: 'Bytes held by the response cache (its bound: ORGSCAN_CACHE_MB).',
    registers: [registry],
    collect() {
      this.set(o.cacheStats().bytes)
    },
  })
  new client.Gauge({
    name: 'orgscan_response_cache_segment_bytes',
    help: 'Memory of the segments the response cache has allocated (at most its bound; allocated once, never freed).',
    registers: [registry],
    collect() {
      this.set(o.cacheStats().segmentBytes)
    },
  })
  new client.Gauge({
    name: 'orgscan_response_cache_segment_bytes_written',
    help: 'Bytes of its segments the response cache has written: their resident memory (the records only; the index of the entries is in the heap).',
    registers: [registry],
    collect() {
      this.set(o.cacheStats().segmentBytesWritten)
    },
  })
  new client.Gauge({
    name: 'orgscan_response_cache_entries',
    help: 'Answers the response cache holds.',
    registers: [registry],
    collect() {
      this.set(o.cacheStats().entries)
    },
  })
  new client.Gauge({
    name: 'orgscan_http_requests_in_flight',
    help: 'HTTP requests being answered now (shutdown waits for them, up to its grace period).',
    registers: [registry],
    collect() {
      this.set(o.inFlight())
    },
  })
  if (o.replicaStats) {
    const replicaStats = o.replicaStats
    new client.Counter({
      name: 'orgscan_db_replica_reads_total',
      help: 'Org-scoped read statements offered to the replica, by outcome: served by it, or sent to the primary because it was behind, failed, or was resting after a connection failure.',
      labelNames: ['outcome'],
      registers: [registry],
      collect() {
        this.reset()
        for (const [outcome, n] of Object.entries(replicaStats())) this.inc({ outcome }, n)
      },
    })
  }
  const queryTime = new client.Histogram({
    name: 'orgscan_db_read_query_duration_seconds',
    help: 'Time of request read statements on the read pool (cache misses; org checks excluded).',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  })
  const inFlight = new client.Gauge({ name: 'orgscan_db_read_queries_in_flight', help: 'Read statements running or waiting for a connection of the read pool.', registers: [registry] })
  new client.Gauge({ name: 'orgscan_db_read_pool_size', help: 'Connections of the read pool (ORGSCAN_POOL_SIZE).', registers: [registry] }).set(o.readPoolSize)
  const perWorker = o.worker === undefined ? undefined : workerSeries(registry, String(o.worker), o.cacheStats)
  return {
    registry,
    query() {
      inFlight.inc()
      const end = queryTime.startTimer()
      return () => {
        end()
        inFlight.dec()
      }
    },
    request(l) {
      requests.inc({ method: l.method, route: l.route, status: String(l.status) })
      latency.observe({ route: l.route }, l.durationMs / 1000)
      perWorker?.inc()
    },
    quota(admitted, window) {
      quota.inc({ result: admitted ? 'admitted' : 'rejected', window: window ?? 'none' })
    },
    toolCall(tool, error) {
      tools.inc({ tool, error: error ?? 'ok' })
    },
  }
}

/**
 * The series of one worker, labelled with its slot: what the sums across workers hide — how the connections spread
 * (answered requests), and what each process holds against its own bounds (resident memory; the response cache
 * against ORGSCAN_CACHE_MB, which bounds each process). Returns the request counter of this worker.
 */
function workerSeries(registry: client.Registry, worker: string, cacheStats: () => ResponseCacheStats): client.Counter.Internal {
  const requests = new client.Counter({ name: 'orgscan_worker_http_requests_total', help: 'Answered HTTP requests by worker of orgscan serve --workers N.', labelNames: ['worker'], registers: [registry] })
  new client.Gauge({
    name: 'orgscan_worker_resident_memory_bytes',
    help: 'Resident memory of each worker process.',
    labelNames: ['worker'],
    registers: [registry],
    collect() {
      this.set({ worker }, process.memoryUsage.rss())
    },
  })
  new client.Gauge({
    name: 'orgscan_worker_response_cache_bytes',
    help: 'Bytes held by the response cache of each worker (each is bounded by ORGSCAN_CACHE_MB).',
    labelNames: ['worker'],
    registers: [registry],
    collect() {
      this.set({ worker }, cacheStats().bytes)
    },
  })
  return requests.labels({ worker })
}
