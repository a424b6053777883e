/**
 * Assembles the service: database (embedded PGlite or PostgreSQL), migrations, pepper, optional demo seed,
 * registry, authentication, quota, REST router and HTTP listener.
 */
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Config } from '../core/config-types.ts'
import { compileRegistry } from '../core/registry.ts'
import { orgListOperation } from '../core/operations.ts'
import { MEMORY_DATA_DIR, openDatabase, type Database } from '../platform/db/connect.ts'
import { startAdminSocket, type AdminSocket } from '../platform/admin-socket.ts'
import { migrate } from '../platform/db/migrate.ts'
import { resolvePepper } from '../platform/secrets.ts'
import { ApiKeyAuthenticator } from '../platform/auth/api-keys.ts'
import { createAuthenticate } from '../platform/auth/authenticate.ts'
import { createLogger, type Logger } from '../core/log.ts'
import { collapseDiskFull } from '../platform/db/disk-space.ts'
import type { ServiceContext } from '../core/service-context.ts'
import { buildDiscoveryRoutes, buildRestRouter, restVersionHeaders } from '../surfaces/rest/rest.ts'
import { afterPoll, createHttpServer, type HttpServerOptions } from '../platform/http/server.ts'
import { buildReferenceRoutes } from '../surfaces/rest/reference-page.ts'
import { buildCatalog } from '../surfaces/mcp/server.ts'
import { buildMcpRouter } from '../surfaces/mcp/endpoint.ts'
import { McpSessions, SESSION_LEVEL_NOTICE, SESSION_NOTICE } from '../surfaces/mcp/sessions.ts'
import { quotaFactory } from '../platform/quota/factory.ts'
import { BurstGuard, sendBare429 } from '../platform/quota/burst-guard.ts'
import type { QuotaService } from '../core/quota-types.ts'
import { createPipeline } from '../platform/pipeline/pipeline.ts'
import { FairShare } from '../platform/pipeline/fair-share.ts'
import { PreparedShapes } from '../core/db/prepared-shapes.ts'
import { createOAuthServer, type OAuthServer } from '../platform/oauth/server.ts'
import { keepReferencePageClient, REFERENCE_PAGE_CLIENT_ID } from '../platform/oauth/clients.ts'
import { buildFaviconRoutes } from '../platform/http/favicon.ts'
import { ResponseCache } from '../core/cache/response-cache.ts'
import { TotalCache } from '../core/cache/totals.ts'
import { applyCacheNotification, CACHE_CHANNEL, OrgStateCache } from '../core/cache/org-state.ts'
import { QUERY_DEADLINE_MS } from '../core/db/deadline.ts'
import { LimitListener } from '../platform/quota/limit-listener.ts'
import { buildHealthRoutes } from '../platform/http/health.ts'
import type { AccessLine, AccessLog } from '../platform/http/access-log.ts'
import { createMetrics, type Metrics } from '../platform/metrics.ts'
import { scheduleRetention } from '../platform/retention.ts'
import { ReplicaReads, replicaStatus } from '../core/db/replica.ts'
import { LiveVersions } from '../platform/versions/live.ts'
import { VersionUsage } from '../platform/versions/usage.ts'
import { adoptFirstStartVersions } from '../platform/versions/adopt.ts'
import { createAdminServer } from '../platform/http/admin-listener.ts'
import type { RunningService, ServiceOptions } from './service-api.ts'

export type { RunningService, ServiceOptions } from './service-api.ts'

/** The HTTP server's hook for answered requests: metrics and the access log, whichever are on. */
function answered(metrics: Metrics | undefined, log: AccessLog | undefined): AccessLog | undefined {
  if (!metrics) return log
  if (!log) return (l: AccessLine) => metrics.request(l)
  return (l: AccessLine) => {
    metrics.request(l)
    log(l)
  }
}

function listen(server: Server, port: number, host: string): Promise<Server> {
  return new Promise<Server>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve(server)
    })
  })
}

/**
 * A 401's detail as RFC 6750's `error_description`: its quoted string allows printable ASCII but the double quote and
 * the backslash, which become a single quote and a slash.
 */
function errorDescription(detail: string): string {
  return detail.replace(/"/g, "'").replace(/\\/g, '/').replace(/[^\x20-\x7e]/g, '?').slice(0, 500)
}

/** Connections of the control pool (quota leases and returns, key lookups, lastUsedAt, administration). */
const CONTROL_POOL_SIZE = 2

/**
 * Reads of one account pipelined on a connection it holds, while no other account waits for one (PostgreSQL; the
 * embedded database's one connection runs one read at a time): docs/adr/0197-pipelining-within-an-account.md.
 */
const PIPELINE_DEPTH = 3

/** Says at start where reads go; a replica that is down or not a standby is a warning, not a failure (reads fall back). */
async function announceReplica(db: Database, log: Logger): Promise<void> {
  const s = await replicaStatus(db.sql, db.replica!.sql, 5_000)
  const at = db.replica!.describe
  if (!s.reachable) log.warn({ msg: `replica: ${at} is unreachable; reads go to the primary until it answers` })
  else if (!s.standby) log.warn({ msg: `replica: ${at} is not a standby (not in recovery); reads go to it, but nothing is taken off the primary` })
  else log.info({ msg: `replica: records of completed scans are read at ${at}`, lagBytes: s.lagBytes })
}

export async function startService(config: Config, opts: ServiceOptions): Promise<RunningService> {
  const clock = opts.clock ?? Date.now
  // A full disk fails every write the same way: said once per kind, not once per request (runtime/platform/db/disk-space.ts).
  const log = collapseDiskFull(opts.log ?? createLogger(), clock)
  const resources = compileRegistry(opts.registry)
  // Two pools on PostgreSQL: request reads (with a statement timeout), and control (quota, keys, administration),
  // so the quota never waits behind data queries.
  const db = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: CONTROL_POOL_SIZE,
    readPool: { size: config.poolSize, statementTimeoutMs: config.statementTimeoutMs },
    replicaUrl: config.replicaUrl,
    log,
  })
  let auth: ApiKeyAuthenticator | undefined
  let quota: QuotaService | undefined
  let sessions: McpSessions | undefined
  let closeMcp: (() => Promise<void>) | undefined
  let adminSocket: AdminSocket | undefined
  let oauth: OAuthServer | undefined
  const lifecycle = { inFlight: 0, draining: false }
  let metrics: Metrics | undefined
  let retention: { close(): Promise<void> } | undefined
  let adminServer: Server | undefined
  let hot: { responses: ResponseCache; orgs: OrgStateCache } | undefined
  let cacheListener: LimitListener | undefined
  let versions: LiveVersions | undefined
  let usage: VersionUsage | undefined
  const servers: Server[] = []
  try {
    // The pepper first: a start refused for want of one leaves the database as it was.
    const pepper = await resolvePepper({ configured: config.pepper, dataDir: config.dataDir, embedded: db.kind === 'embedded', sql: db.sql, log })
    if (!opts.worker) await migrate(db.sql, (line) => log.info({ msg: line }))
    if (opts.onEmptyDatabase) {
      const [{ n }] = await db.sql`SELECT count(*)::int AS n FROM accounts`
      if (n === 0) await opts.onEmptyDatabase({ db, pepper, resources })
    }
    // The version table: ORGSCAN_VERSIONS adopted on a database whose table was never set, then read and kept fresh.
    await adoptFirstStartVersions(db.sql, { rest: config.versions, mcp: config.mcp.versions }, new Date(clock()), log)
    versions = await LiveVersions.start(db.sql, log, { listen: db.kind !== 'embedded' })
    const vt = versions
    usage = new VersionUsage(db.sql, clock, log)
    const vu = usage
    auth = new ApiKeyAuthenticator(db.sql, pepper, config.authCacheMs, clock)
    const a = auth
    oauth = createOAuthServer({ sql: db.sql, pepper, clock, log, config: config.oauth, cacheMs: config.authCacheMs })
    const o = oauth
    quota = (opts.quota ?? quotaFactory())({ sql: db.sql, clock, log, embedded: db.kind === 'embedded' })
    // One account's share is below the pool (FairShare holds it to slots − 1); `auto` is exactly that.
    const slots = db.reads.length
    const fairShare = new FairShare({
      slots,
      depth: db.kind === 'embedded' ? 1 : PIPELINE_DEPTH,
      perAccount: config.fairShare.perAccount === 'auto' ? slots : config.fairShare.perAccount,
      queueDepth: config.fairShare.queueDepth,
      maxWaitMs: config.fairShare.maxWaitMs,
    })
    // Hot reads: the response cache, and the org-state cache kept fresh by migration 006's notifications (PostgreSQL;
    // on the embedded database every change is made in this process and reported through adminChanged). Its lookups
    // run on the control pool, like the key and quota lookups every request needs: never behind data reads.
    // On the embedded database an entry past its lifetime is served while its refresh waits for the one connection
    // (at most the lookup's deadline): every change there is made in this process and invalidates at once.
    const grace = db.kind === 'embedded' ? QUERY_DEADLINE_MS : 0
    hot = { responses: new ResponseCache(config.cache.maxBytes), orgs: new OrgStateCache(db.sql, clock, config.cache.orgStateMs, config.authCacheMs, QUERY_DEADLINE_MS, grace) }
    const h = hot
    const notified = (payload?: string) => {
      if (payload?.startsWith('key:')) a.forget(payload.slice(4))
      else if (payload?.startsWith(SESSION_NOTICE)) sessions?.forget(payload.slice(SESSION_NOTICE.length))
      else if (payload?.startsWith(SESSION_LEVEL_NOTICE)) sessions?.levelChanged(payload.slice(SESSION_LEVEL_NOTICE.length))
      else {
        // Anything else, a (re)LISTEN included, may mean notices were lost: remembered sessions are asked again too.
        if (payload === undefined) sessions?.forget()
        applyCacheNotification(h.orgs, payload)
      }
    }
    if (db.kind !== 'embedded') cacheListener = new LimitListener(db.sql, log, notified, CACHE_CHANNEL, 'hot reads: LISTEN failed; org and grant changes apply within ORGSCAN_ORG_CACHE_MS and ORGSCAN_AUTH_CACHE_MS')
    // A replica serves the records of completed scans; access and the latest scan come from the primary (the org-state
    // cache above), so answers never depend on its lag (docs/adr/0037-read-replica-for-completed-scans.md).
    const replica = db.replica ? new ReplicaReads(db.replica.sql, log, clock) : undefined
    if (db.replica) await announceReplica(db, log)
    metrics = config.admin.port !== undefined ? createMetrics({ cacheStats: () => h.responses.stats(), inFlight: () => lifecycle.inFlight, readPoolSize: config.poolSize, replicaStats: replica && (() => replica.stats()), worker: opts.worker?.slot }) : undefined
    const m = metrics
    const orgList = orgListOperation(resources)
    const pipeline = createPipeline({
      read: { sql: db.reads[0], reads: db.reads, replica, shapes: new PreparedShapes(), hot, totals: new TotalCache(), onQuery: m ? () => m.query() : undefined },
      metrics,
      quota,
      fairShare,
      log,
      usage: vu,
      orgList: orgList && { tool: orgList.tool, path: orgList.path },
      pending: opts.pendingOrgs,
      authenticate: createAuthenticate({
        keys: a,
        bearer: o.bearer,
        failures: config.authFailures.ratePerSecond > 0 ? new BurstGuard({ enabled: true, ratePerSecond: config.authFailures.ratePerSecond, burst: config.authFailures.burst, clock }) : undefined,
      }),
    })
    const challenge = (surface: 'rest' | 'mcp', authorization?: string, error: 'invalid_token' | 'insufficient_scope' = 'invalid_token', description?: string) => {
      const { issuer } = o.urls()
      // A Bearer token was presented and refused: say so, as RFC 6750 asks, so a client refreshes rather than signs in
      // (invalid_token, with why as error_description: a token for another resource, say), or asks for the scope
      // (insufficient_scope, with scope="mcp:read").
      const why = description === undefined ? '' : `, error_description="${errorDescription(description)}"`
      const refused = error === 'insufficient_scope'
        ? `, error="insufficient_scope"${surface === 'rest' ? ', scope="mcp:read"' : ''}`
        : authorization !== undefined && /^bearer /i.test(authorization) ? `, error="invalid_token"${why}` : ''
      const bearer = surface === 'mcp'
        ? `Bearer resource_metadata="${issuer}/.well-known/oauth-protected-resource/v1/mcp", scope="mcp:read"${refused}`
        : `Bearer realm="orgscan", resource_metadata="${issuer}/.well-known/oauth-protected-resource/v1"${refused}`
      // A 403 for a token's scope challenges that token only; a 401 offers both ways in.
      if (error === 'insufficient_scope') return bearer
      const basic = 'Basic realm="orgscan", charset="UTF-8"'
      return surface === 'mcp' ? `${bearer}, ${basic}` : `${basic}, ${bearer}`
    }
    const ctx: ServiceContext = { config, clock, resources, log, quota, pipeline, challenge, versions: vt }
    const restVersion = restVersionHeaders(ctx)
    const catalog = buildCatalog({ resources, prompts: opts.prompts ?? [], versions: vt, clock, extraTools: opts.mcpExtraTools, extraPrompts: opts.mcpExtraPrompts, extraResources: opts.mcpExtraResources })
    sessions = new McpSessions(db.sql, { idleMs: config.mcp.sessionIdleMs, maxPerAccount: config.mcp.sessionsPerAccount, maxPerCredential: config.mcp.sessionsPerCredential, confirmMs: config.authCacheMs }, clock, log)
    const mcp = buildMcpRouter({ ctx, catalog, sessions, metrics })
    closeMcp = mcp.close
    const guard = new BurstGuard({ ...config.burstGuard, clock })
    const options: HttpServerOptions = {
      tls: config.tls,
      lifecycle,
      idleSocketMs: config.idleSocketMs,
      keepAliveMs: config.keepAliveMs,
      requestTimeoutMs: config.requestTimeoutMs,
      accessLog: answered(metrics, opts.accessLog),
      // Every REST response under /v1 carries the version that handled it (and its deprecation, or is its 410),
      // errors included; MCP responses do not.
      headersFor: (path) => ((path === '/v1' || path.startsWith('/v1/')) && path !== '/v1/mcp' && path !== '/v1/mcp/' ? restVersion() : {}),
      // A browser on an origin MCP accepts can read every answer of the MCP endpoint, the refusals before it included.
      beforeAnswer: mcp.corsOf,
      // Edge shedding before anything else: a bare 429, no body, no X-RateLimit-*.
      onRequest: config.burstGuard.enabled
        ? (req, res) => {
            if (guard.allow(req.socket.remoteAddress)) return true
            sendBare429(res)
            return false
          }
        : undefined,
    }
    const pendingOrgs = opts.pendingOrgs
    const health = buildHealthRoutes({
      sql: db.sql,
      draining: () => lifecycle.draining,
      writes: db.writeProblem,
      replica: db.replica && ((ms) => replicaStatus(db.sql, db.replica!.sql, ms)),
      seeding: pendingOrgs && (() => pendingOrgs.describe()),
    })
    // Routers are asked in order until one has the path (no path is in two of them): the busiest first.
    const separateMcp = config.mcp.port !== undefined
    const restRoutes = buildRestRouter(ctx)
    // The reference page signs in through the service's own client; it is told the issuer when "Authorize" must go
    // to another origin than its own (a separate MCP listener without a public URL).
    const referenceOAuth = () => {
      let issuer: string | undefined
      try {
        const u = o.urls()
        if (u.issuer !== u.restResource.replace(/\/v1$/, '')) issuer = u.issuer
      } catch {
        // Asked in the instant between listening and knowing the addresses: the page's own origin.
      }
      return { clientId: REFERENCE_PAGE_CLIENT_ID, issuer }
    }
    const favicon = buildFaviconRoutes()
    const others = [buildDiscoveryRoutes(vt, 'rest', clock), health, buildReferenceRoutes(referenceOAuth), favicon]
    const server = await listen(createHttpServer(separateMcp ? [restRoutes, ...others] : [restRoutes, mcp.routes, ...others, o.routes], options), config.port, config.host)
    servers.push(server)
    // The MCP listener serves no REST path: its answers carry no REST version header.
    if (separateMcp) servers.push(await listen(createHttpServer([mcp.routes, buildDiscoveryRoutes(vt, 'mcp', clock), health, o.routes, favicon], { ...options, headersFor: undefined }), config.mcp.port!, config.host))
    if (metrics && !opts.worker) {
      const registry = metrics.registry
      adminServer = await listen(createAdminServer({ text: () => registry.metrics(), contentType: registry.contentType }), config.admin.port!, config.admin.host)
    }
    if (config.retention.keepScans > 0) retention = scheduleRetention(db.sql, config.retention.keepScans, config.retention.everyMs, log)
    const address = (s: Server) => `${config.tls ? 'https' : 'http'}://${config.host.includes(':') ? `[${config.host}]` : config.host}:${(s.address() as AddressInfo).port}`
    const publicUrl = config.oauth.publicUrl
    o.setUrls({
      issuer: publicUrl ?? address(servers.at(-1)!),
      restResource: `${publicUrl ?? address(server)}/v1`,
      mcpResource: `${publicUrl ?? address(servers.at(-1)!)}/v1/mcp`,
    })
    await keepReferencePageClient(db.sql, publicUrl ?? address(server), new Date(clock()))
    const adminChanged = (c: { account?: string; key?: string; oauth?: boolean }) => {
      // Orgs, scans and grants may have changed (an import, accounts or users commands): drop what may be stale.
      h.orgs.invalidate()
      if (c.account) {
        quota!.invalidate?.(c.account)
        a.forgetAccount(c.account)
        o.forgetAll()
      }
      if (c.key) a.forget(c.key)
      if (c.oauth) o.forgetAll()
    }
    // The CLI's accounts/keys/import reach a server on the embedded database through its admin socket.
    if (db.kind === 'embedded' && config.dataDir !== MEMORY_DATA_DIR) {
      adminSocket = await startAdminSocket(config.dataDir, {
        sql: db.sql,
        pepper,
        resources,
        defaults: { dailyLimit: config.defaultDailyLimit, monthlyLimit: config.defaultMonthlyLimit },
        dbKind: db.kind,
        onChange: adminChanged,
        clock,
        versionsChanged: () => vt.reload(),
        flushUsage: () => vu.flush(),
      }, log)
    }
    let closed = false
    return {
      url: address(server),
      mcpUrl: `${address(servers.at(-1)!)}/v1/mcp`,
      port: (server.address() as AddressInfo).port,
      server,
      ctx,
      db,
      pepper,
      auth: a,
      oauth: o,
      adminChanged,
      versions: vt,
      usage: vu,
      hot: h,
      fairShare,
      inFlight: () => lifecycle.inFlight,
      mcpClientRequestsWaiting: mcp.clientRequestsWaiting,
      replica,
      metrics: m,
      adminUrl: adminServer ? `http://${config.admin.host.includes(':') ? `[${config.admin.host}]` : config.admin.host}:${(adminServer.address() as AddressInfo).port}` : undefined,
      async close(graceMs = 10_000) {
        if (closed) return
        closed = true
        // Drain: /readyz turns 503, every answer from now on says Connection: close, no new connections, idle
        // keep-alive connections closed once what clients sent on them was read (runtime/platform/http/server.ts), answers in
        // progress finish for up to graceMs; then whatever is left is cut.
        lifecycle.draining = true
        // Logged before the listeners close: the line's time is no later than theirs.
        log.info({ msg: 'draining: no new connections; answers in progress finish with Connection: close', inFlight: lifecycle.inFlight, graceMs })
        const stopped = Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))))
        const until = Date.now() + graceMs
        // That nothing is in progress is decided only after a poll for I/O: a request a client had sent on an open
        // connection is read (and counted) first, so it is answered rather than cut with its connection.
        do {
          while (lifecycle.inFlight > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20))
          await afterPoll()
        } while (lifecycle.inFlight > 0 && Date.now() < until)
        for (const s of servers) s.closeAllConnections()
        // Requests cut here may still be reading: let them finish (a little longer) before the pool closes under them,
        // so that none fails for the pool's sake and none gives back a unit to a quota already closed.
        const settled = Date.now() + 2000
        while (!fairShare.idle && Date.now() < settled) await new Promise((r) => setTimeout(r, 20))
        await stopped
        if (adminServer) {
          adminServer.closeAllConnections()
          await new Promise<void>((r) => adminServer!.close(() => r()))
        }
        await adminSocket?.close()
        await retention?.close()
        await closeMcp?.()
        o.close()
        sessions?.close()
        await a.close()
        await vu.close()
        await vt.close()
        await cacheListener?.close()
        await quota!.close()
        await db.close()
      },
    }
  } catch (e) {
    for (const s of servers) s.close()
    adminServer?.close()
    await retention?.close().catch(() => undefined)
    await adminSocket?.close()
    sessions?.close()
    oauth?.close()
    await closeMcp?.().catch(() => undefined)
    await auth?.close().catch(() => undefined)
    await usage?.close().catch(() => undefined)
    await versions?.close().catch(() => undefined)
    await cacheListener?.close().catch(() => undefined)
    await quota?.close().catch(() => undefined)
    await db.close().catch(() => undefined)
    throw e
  }
}
