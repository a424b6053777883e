/**
 * One scrape for the whole of `orgscan serve --workers N` (docs/operating.md "Metrics"): the primary asks every
 * worker that serves for its metrics, sums them with prom-client's `AggregatorRegistry.aggregate` (counters and
 * histograms add up; each metric's own aggregator otherwise, e.g. the process start time is left out), and adds its
 * own: worker restarts and the workers serving. A worker that does not answer within the timeout (one that is being
 * killed) is left out of that scrape rather than failing it; prom-client's `clusterMetrics()` would wait for every
 * connected worker, including one still starting that cannot answer yet, and fail the whole scrape after 5 s.
 */
import type { Worker } from 'node:cluster'
import client from 'prom-client'
import type { MetricsSource } from '../http/admin-listener.ts'
import { isMessage, type MetricsAnswer, type MetricsRequest } from './messages.ts'

export interface ClusterMetrics extends MetricsSource {
  /** A worker was restarted. */
  restarted(): void
}

export function createClusterMetrics(o: { workers: () => Worker[]; count: number; timeoutMs?: number }): ClusterMetrics {
  const own = new client.Registry()
  const restarts = new client.Counter({ name: 'orgscan_worker_restarts_total', help: 'Workers the primary restarted after they died.', registers: [own] })
  new client.Gauge({ name: 'orgscan_workers', help: 'Worker processes configured (--workers, ORGSCAN_WORKERS).', registers: [own] }).set(o.count)
  const serving = new client.Gauge({ name: 'orgscan_workers_serving', help: 'Workers serving at the time of the scrape (and so in its sums).', registers: [own] })
  let next = 0
  return {
    contentType: own.contentType,
    restarted: () => restarts.inc(),
    async text() {
      const id = next++
      const answers = await Promise.all(o.workers().map((w) => ask(w, id, o.timeoutMs ?? 2000)))
      const got = answers.filter((a): a is object[] => a !== undefined)
      serving.set(got.length)
      const sums = await client.AggregatorRegistry.aggregate(got).metrics()
      return sums + '\n' + (await own.metrics())
    },
  }
}

function ask(w: Worker, id: number, timeoutMs: number): Promise<object[] | undefined> {
  return new Promise((resolve) => {
    const done = (v: object[] | undefined) => {
      clearTimeout(timer)
      w.off('message', onMessage)
      w.off('exit', onExit)
      resolve(v)
    }
    const onMessage = (m: unknown) => {
      if (isMessage<MetricsAnswer>(m, 'metrics') && m.id === id) done(m.metrics)
    }
    const onExit = () => done(undefined)
    const timer = setTimeout(() => done(undefined), timeoutMs)
    w.on('message', onMessage)
    w.on('exit', onExit)
    try {
      w.send({ orgscan: 'metrics?', id } satisfies MetricsRequest)
    } catch {
      done(undefined)
    }
  })
}
