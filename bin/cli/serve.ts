/**
 * `orgscan serve`: starts the service, seeds demo data on an empty database, prints how to call it. With `--workers N`
 * (N > 1) this process is the primary of N worker processes (bin/cli/serve-cluster.ts); a worker runs the service.
 */
import cluster from 'node:cluster'
import { prompts, registry } from '../../resources/index.ts'
import type { Config } from '../../runtime/config.ts'
import { startService } from '../../runtime/service.ts'
import { createLogger } from '../../runtime/log.ts'
import { installProcessGuard } from '../../runtime/process-guard.ts'
import { accessLogger, demoFacts, drainOnSignals, portInUse, printBanner, seedOnFirstStart } from './serve-start.ts'
import { serveAsPrimary, serveAsWorker } from './serve-cluster.ts'

export { PortInUseError } from './serve-start.ts'

export async function serve(config: Config, opts: { json: boolean }): Promise<void> {
  if (cluster.isWorker) return serveAsWorker(config)
  if (config.workers > 1) return serveAsPrimary(config, opts)
  const log = createLogger()
  installProcessGuard(log)
  const access = accessLogger(config)
  const svc = await startService(config, {
    registry,
    prompts,
    log,
    accessLog: access?.line,
    onEmptyDatabase: seedOnFirstStart(config),
  }).catch(portInUse(config.host, config.port))
  printBanner({ url: svc.url, mcpUrl: svc.mcpUrl, database: svc.db.describe, adminUrl: svc.adminUrl }, await demoFacts(svc.db.sql, svc.pepper), opts.json)
  drainOnSignals(svc, { drainMs: config.drainMs, log, flush: access?.flush })
}
