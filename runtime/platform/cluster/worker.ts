/**
 * The worker side of `orgscan serve --workers N` (docs/operating.md "Several processes"): its assignment from the
 * primary, telling the primary it serves, handing it the metrics, and stopping when the primary is gone.
 */
import cluster from 'node:cluster'
import type { Metrics } from '../metrics.ts'
import { isMessage, WORKER_ENV, type MetricsAnswer, type MetricsRequest, type ReadyMessage, type WorkerAssignment } from './messages.ts'

/** This process's assignment when it is a worker of `orgscan serve --workers N`; undefined otherwise. */
export function workerAssignment(env: Record<string, string | undefined> = process.env): WorkerAssignment | undefined {
  if (!cluster.isWorker) return undefined
  const raw = env[WORKER_ENV]
  const a = raw ? (JSON.parse(raw) as WorkerAssignment) : undefined
  if (!a || !Number.isInteger(a.slot)) throw new Error(`A worker process needs ${WORKER_ENV} from its primary.`)
  return a
}

/** Tells the primary this worker listens (after startService resolved), and answers its requests for metrics. */
export function reportToPrimary(svc: { url: string; mcpUrl: string; port: number; metrics?: Metrics }, stop: (reason: string) => void): void {
  process.on('message', (m: unknown) => {
    if (!isMessage<MetricsRequest>(m, 'metrics?')) return
    const answer = (metrics: object[]) => process.send?.({ orgscan: 'metrics', id: m.id, metrics } satisfies MetricsAnswer)
    if (!svc.metrics) return answer([])
    svc.metrics.registry.getMetricsAsJSON().then(answer, () => answer([]))
  })
  // The primary is gone (killed, maybe while this worker was starting): nothing would stop this worker any more, so it
  // drains and stops itself.
  if (!process.connected) return stop('the primary exited')
  process.on('disconnect', () => stop('the primary exited'))
  const mcp = new URL(svc.mcpUrl)
  const ready: ReadyMessage = { orgscan: 'ready', url: svc.url, mcpUrl: svc.mcpUrl, port: svc.port, mcpPort: Number(mcp.port || (mcp.protocol === 'https:' ? 443 : 80)) }
  process.send?.(ready)
}
