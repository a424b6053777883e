/**
 * `orgscan serve`: starts the service, seeds demo data on an empty database, prints how to call it. With `--workers N`
 * (N > 1) this process is the primary of N worker processes (bin/cli/serve-primary.ts), each of which runs the
 * service here. The service's code is loaded only where it runs (not in the primary).
 */
import cluster from 'node:cluster'
import { prompts, registry } from '../../resources/index.ts'
import type { Config } from '../../runtime/platform/config.ts'
import { createLogger } from '../../runtime/core/log.ts'
import { installProcessGuard } from '../../runtime/platform/process-guard.ts'
import { reportToPrimary, workerAssignment } from '../../runtime/platform/cluster/worker.ts'
import { accessLogger, demoFacts, drainOnSignals, portInUse, printBanner, seedOnFirstStart, startDeferredSeed, warnIncompleteDemo } from './serve-start.ts'
import { PendingOrgs } from '../../runtime/core/pending-orgs.ts'
import { serveAsPrimary } from './serve-primary.ts'

export { PortInUseError } from './serve-start.ts'

export async function serve(config: Config, opts: { json: boolean }): Promise<void> {
  if (cluster.isWorker) return serveAsWorker(config)
  if (config.workers > 1) return serveAsPrimary(config, opts)
  const { startService } = await import('../../runtime/service/service.ts')
  const log = createLogger()
  installProcessGuard(log)
  const access = accessLogger(config)
  // The first start seeds the large demo org after the server started (one process: the pending org is this process's).
  const pendingOrgs = new PendingOrgs()
  const svc = await startService(config, {
    registry,
    prompts,
    log,
    accessLog: access?.line,
    onEmptyDatabase: seedOnFirstStart(config, { defer: true }),
    pendingOrgs,
  }).catch(portInUse(config.host, config.port))
  const later = await startDeferredSeed(svc, pendingOrgs, log)
  const facts = await demoFacts(svc.db.sql, svc.pepper)
  await warnIncompleteDemo(config, svc.db.sql, facts)
  printBanner({ url: svc.url, mcpUrl: svc.mcpUrl, database: svc.db.describe, adminUrl: svc.adminUrl }, facts, opts.json, later?.note)
  drainOnSignals(svc, { drainMs: config.drainMs, log, flush: access?.flush, before: later?.stop })
}

/** A worker of `--workers N`: the service on the ports the primary assigned, without migrations, seed or admin listener. */
async function serveAsWorker(config: Config): Promise<void> {
  const { startService } = await import('../../runtime/service/service.ts')
  const a = workerAssignment()!
  const log = createLogger()
  installProcessGuard(log)
  const access = accessLogger(config, a.slot)
  const port = a.port ?? config.port
  const mcp = config.mcp.port === undefined ? config.mcp : { ...config.mcp, port: a.mcpPort ?? config.mcp.port }
  const svc = await startService({ ...config, port, mcp }, { registry, prompts, log, accessLog: access?.line, worker: { slot: a.slot } }).catch(portInUse(config.host, port))
  // The primary announces the drain once; each worker drains quietly.
  const stop = drainOnSignals(svc, { drainMs: config.drainMs, log, flush: access?.flush, quiet: true })
  reportToPrimary(svc, stop)
}
