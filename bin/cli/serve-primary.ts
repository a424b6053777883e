/**
 * `orgscan serve --workers N`, the primary (docs/operating.md "Several processes"). It migrates the database and seeds a
 * first start once, before forking (workers neither migrate nor seed), serves the admin listener with every
 * worker's metrics in one scrape, forks N workers that share the listening ports (node:cluster), prints the banner
 * once all serve, restarts a worker that dies, and on SIGTERM/SIGINT drains them all and exits once all have exited.
 * Each worker is the ordinary service (bin/cli/serve.ts). Needs PostgreSQL: the embedded database belongs to one
 * process. The primary does not load the service's code (runtime/service/service.ts and what it needs): about 40 MB less.
 */
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { registry } from '../../resources/index.ts'
import type { Config } from '../../runtime/platform/config.ts'
import { openDatabase } from '../../runtime/platform/db/connect.ts'
import { migrate } from '../../runtime/platform/db/migrate.ts'
import { resolvePepper } from '../../runtime/platform/secrets.ts'
import { compileRegistry } from '../../runtime/core/registry.ts'
import { createLogger } from '../../runtime/core/log.ts'
import { installProcessGuard } from '../../runtime/platform/process-guard.ts'
import { createAdminServer } from '../../runtime/platform/http/admin-listener.ts'
import { WorkerPool } from '../../runtime/platform/cluster/pool.ts'
import { createClusterMetrics, type ClusterMetrics } from '../../runtime/platform/cluster/cluster-metrics.ts'
import { demoFacts, portInUse, printBanner, say, seedOnFirstStart, type DemoFacts } from './serve-start.ts'
import { deferredSeed, seedDeferred } from '../../demo/seed.ts'

/** The primary's own use of the database: migrations and a first start's seed, once, then the banner's facts. */
async function prepareDatabase(config: Config, log: ReturnType<typeof createLogger>): Promise<{ describe: string; facts: DemoFacts }> {
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 1, log })
  try {
    const pepper = await resolvePepper({ configured: config.pepper, dataDir: config.dataDir, embedded: db.kind === 'embedded', sql: db.sql, log })
    await migrate(db.sql, (line) => log.info({ msg: line }))
    const [{ n }] = await db.sql`SELECT count(*)::int AS n FROM accounts`
    const resources = compileRegistry(registry)
    if (n === 0) await seedOnFirstStart(config)({ db, pepper, resources })
    // What a first start of one process left for its background seed and did not finish: done here, before the
    // workers serve, since no worker writes it (docs/adr/0175-first-run-under-a-minute.md).
    const deferred = await deferredSeed(db.sql)
    if (deferred) {
      say(`Seeding the large demo org ${deferred.name} (${deferred.orgId}) that an earlier first start left…`)
      await seedDeferred(db.sql, resources, deferred, { progress: (l) => say(`  ${l}`) })
    }
    return { describe: db.describe, facts: await demoFacts(db.sql, pepper) }
  } finally {
    await db.close()
  }
}

function listen(server: Server, port: number, host: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve(server)
    })
  })
}

export async function serveAsPrimary(config: Config, opts: { json: boolean }): Promise<void> {
  const log = createLogger()
  installProcessGuard(log)
  const { describe, facts } = await prepareDatabase(config, log)
  const pool = new WorkerPool({
    count: config.workers,
    log,
    onRestart: () => metrics?.restarted(),
    onGiveUp: (message) => {
      log.error({ msg: `${message} Stopping the service.` })
      stop('a worker keeps failing', 1)
    },
  })
  let metrics: ClusterMetrics | undefined
  let admin: Server | undefined
  if (config.admin.port !== undefined) {
    metrics = createClusterMetrics({ workers: () => pool.ready(), count: config.workers })
    admin = await listen(createAdminServer(metrics), config.admin.port, config.admin.host).catch(portInUse(config.admin.host, config.admin.port))
  }
  const closeAdmin = () => {
    admin?.closeAllConnections()
    admin?.close()
  }
  // Installed before the workers start: a SIGTERM while they start stops them too.
  let stopping = false
  function stop(reason: string, code: number): void {
    if (stopping) return
    stopping = true
    say(`${reason}: draining ${config.workers} workers (answers in progress finish, up to ${config.drainMs} ms), then shutting down…`)
    // Each worker bounds its own drain; the margin covers its closing the pools after it.
    void pool.stop(config.drainMs + 5000).then((clean) => {
      closeAdmin()
      if (!clean) log.error({ msg: 'a worker did not stop cleanly' })
      process.exit(clean ? code : 1)
    })
  }
  process.on('SIGINT', () => stop('SIGINT received', 0))
  process.on('SIGTERM', () => stop('SIGTERM received', 0))
  const first = await pool.start().catch(async (e) => {
    if (stopping) return new Promise<never>(() => undefined) // stopping already: it exits
    stopping = true
    await pool.stop(2000)
    closeAdmin()
    throw e
  })
  const host = config.admin.host.includes(':') ? `[${config.admin.host}]` : config.admin.host
  const adminUrl = admin ? `http://${host}:${(admin.address() as AddressInfo).port}` : undefined
  printBanner({ url: first.url, mcpUrl: first.mcpUrl, database: describe, adminUrl, workers: config.workers }, facts, opts.json)
}
