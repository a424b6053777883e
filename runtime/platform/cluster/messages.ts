/**
 * What the primary of `orgscan serve --workers N` and its workers tell each other over the cluster's IPC channel,
 * and what the primary passes a worker it forks (docs/operating.md "Several processes").
 */
/** The environment variable carrying a worker's assignment (set by the primary only; not configuration). */
export const WORKER_ENV = 'ORGSCAN_WORKER'

/**
 * A worker's slot (1…N, kept by its replacements) and, once the first worker listened, the ports every worker
 * listens on: with `--port 0` the port is chosen once, and a replacement must not choose another.
 */
export interface WorkerAssignment {
  slot: number
  port?: number
  mcpPort?: number
}

/** Worker → primary: it listens and serves. */
export interface ReadyMessage {
  orgscan: 'ready'
  url: string
  mcpUrl: string
  port: number
  mcpPort: number
}

/** Primary → worker: send your metrics. Worker → primary: here they are (`registry.getMetricsAsJSON()`). */
export interface MetricsRequest {
  orgscan: 'metrics?'
  id: number
}
export interface MetricsAnswer {
  orgscan: 'metrics'
  id: number
  metrics: object[]
}

export function isMessage<T extends { orgscan: string }>(m: unknown, kind: T['orgscan']): m is T {
  return typeof m === 'object' && m !== null && (m as { orgscan?: unknown }).orgscan === kind
}
