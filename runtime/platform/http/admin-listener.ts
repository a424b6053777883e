/**
 * The admin listener: `GET /metrics` (Prometheus text format) and nothing else; never on the public port
 * (docs/operating.md "Metrics"). One process serves it: the service itself, or the primary of `--workers N`, which
 * gathers every worker's metrics into one scrape.
 */
import { createServer, type Server } from 'node:http'

export interface MetricsSource {
  /** The exposition text of one scrape. */
  text(): Promise<string>
  contentType: string
}

export function createAdminServer(source: MetricsSource): Server {
  return createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'text/plain' })
      return void res.end('Not found: the admin listener serves GET /metrics.\n')
    }
    source.text().then(
      (text) => {
        res.writeHead(200, { 'Content-Type': source.contentType })
        res.end(text)
      },
      () => {
        res.writeHead(500, { 'Content-Type': 'text/plain' })
        res.end('Metrics could not be collected.\n')
      },
    )
  })
}
