/**
 * Assembles the service: database (embedded PGlite or PostgreSQL), migrations, pepper, optional demo seed,
 * registry, authentication, quota, REST router and HTTP listener.
 */
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Resource } from './define.ts'
import type { Clock, Config } from './config.ts'
import { compileRegistry } from './registry.ts'
import { openDatabase, type Database } from './db/connect.ts'
import { migrate } from './db/migrate.ts'
import { resolvePepper } from './secrets.ts'
import { ApiKeyAuthenticator, parseBasic } from './auth/api-keys.ts'
import { unauthorized } from './errors.ts'
import { createLogger, type Logger } from './log.ts'
import type { ServiceContext } from './service-context.ts'
import { buildRestRouter, VERSION_HEADER } from './http/rest.ts'
import { createHttpServer } from './http/server.ts'
import { quotaFactory, type QuotaFactory } from './quota/factory.ts'
import { BurstGuard, sendBare429 } from './quota/burst-guard.ts'
import type { QuotaService } from './quota/types.ts'
import type { Principal } from './auth/principal.ts'
import { createPipeline } from './pipeline/pipeline.ts'
import { FairShare } from './pipeline/fair-share.ts'
import { PreparedShapes } from './db/prepared-shapes.ts'

/** Connections of the control pool (quota leases and returns, key lookups, lastUsedAt, administration). */
const CONTROL_POOL_SIZE = 2

/**
 * Requests of one account reading at once: one less than the read pool, so no account can hold all of it;
 * 1 on the embedded database (one connection: there only the cost bounds of a request protect the others).
 */
function defaultPerAccount(db: Database): number {
  return db.kind === 'embedded' ? 1 : Math.max(1, (db.read.options.max ?? 1) - 1)
}

export interface ServiceOptions {
  clock?: Clock
  log?: Logger
  /** The resource registry (resources/index.ts); passed in so the runtime never imports a resource. */
  registry: readonly Resource[]
  /** Called after migrations on a fresh database (demo seed). */
  onEmptyDatabase?: (ctx: { db: Database; pepper: string; resources: ServiceContext['resources'] }) => Promise<void>
  /** The quota engine; default: the leasing PostgreSQL engine (runtime/quota/factory.ts). */
  quota?: QuotaFactory
}

export interface RunningService {
  url: string
  port: number
  server: Server
  ctx: ServiceContext
  db: Database
  pepper: string
  close(): Promise<void>
}

export async function startService(config: Config, opts: ServiceOptions): Promise<RunningService> {
  const clock = opts.clock ?? Date.now
  const log = opts.log ?? createLogger()
  const resources = compileRegistry(opts.registry)
  // Two pools on PostgreSQL: request reads (with a statement timeout), and control (quota, keys, administration),
  // so the quota never waits behind data queries.
  const db = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: CONTROL_POOL_SIZE,
    readPool: { size: config.poolSize, statementTimeoutMs: config.statementTimeoutMs },
  })
  let auth: ApiKeyAuthenticator | undefined
  let quota: QuotaService | undefined
  try {
    await migrate(db.sql, (line) => log.info({ msg: line }))
    const pepper = await resolvePepper({ configured: config.pepper, dataDir: config.dataDir, embedded: db.kind === 'embedded', sql: db.sql, log })
    if (opts.onEmptyDatabase) {
      const [{ n }] = await db.sql`SELECT count(*)::int AS n FROM accounts`
      if (n === 0) await opts.onEmptyDatabase({ db, pepper, resources })
    }
    auth = new ApiKeyAuthenticator(db.sql, pepper, config.authCacheMs, clock)
    const a = auth
    quota = (opts.quota ?? quotaFactory())({ sql: db.sql, clock, log, embedded: db.kind === 'embedded' })
    const fairShare = new FairShare({
      perAccount: config.fairShare.perAccount === 'auto' ? defaultPerAccount(db) : config.fairShare.perAccount,
      queueDepth: config.fairShare.queueDepth,
      maxWaitMs: config.fairShare.maxWaitMs,
    })
    const pipeline = createPipeline({
      read: { sql: db.read, shapes: new PreparedShapes() },
      quota,
      fairShare,
      log,
      async authenticate(header): Promise<Principal> {
        const creds = parseBasic(header)
        if (!creds) throw unauthorized('Authentication required: send HTTP Basic credentials (API key id and secret).')
        return a.authenticate(creds)
      },
    })
    const ctx: ServiceContext = { config, clock, resources, log, quota, pipeline }
    const guard = new BurstGuard({ ...config.burstGuard, clock })
    const server = createHttpServer([buildRestRouter(ctx)], {
      // §9: every response under /v1 carries the version that handled it, errors included.
      headersFor: (path): Record<string, string> => (path === '/v1' || path.startsWith('/v1/') ? { [VERSION_HEADER]: '1' } : {}),
      // Edge shedding before anything else: a bare 429, no body, no X-RateLimit-* (contract §7, form 2).
      onRequest: config.burstGuard.enabled
        ? (req, res) => {
            if (guard.allow(req.socket.remoteAddress)) return true
            sendBare429(res)
            return false
          }
        : undefined,
    })
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(config.port, config.host, () => resolve())
    })
    const port = (server.address() as AddressInfo).port
    const host = config.host.includes(':') ? `[${config.host}]` : config.host
    let closed = false
    return {
      url: `http://${host}:${port}`,
      port,
      server,
      ctx,
      db,
      pepper,
      async close() {
        if (closed) return
        closed = true
        server.closeAllConnections()
        await new Promise<void>((r) => server.close(() => r()))
        await a.close()
        await quota!.close()
        await db.close()
      },
    }
  } catch (e) {
    await auth?.close().catch(() => undefined)
    await quota?.close().catch(() => undefined)
    await db.close().catch(() => undefined)
    throw e
  }
}
