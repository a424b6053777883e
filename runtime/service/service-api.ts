/**
 * What the service is to its callers (the `orgscan serve` command, the workers, tests): the options it is started
 * with and the running service it returns. Assembled by runtime/service/service.ts.
 */
import type { Server } from 'node:http'
import type { Clock } from '../core/config-types.ts'
import type { Logger } from '../core/log.ts'
import type { Database } from '../platform/db/connect.ts'
import type { PromptDeclaration, Resource } from '../core/define.ts'
import type { ServiceContext } from '../core/service-context.ts'
import type { McpTool } from '../surfaces/mcp/resource-tools.ts'
import type { McpExtraPrompt, McpExtraResource } from '../surfaces/mcp/extras.ts'
import type { QuotaFactory } from '../platform/quota/factory.ts'
import type { AccessLog } from '../platform/http/access-log.ts'
import type { ApiKeyAuthenticator } from '../platform/auth/api-keys.ts'
import type { OAuthServer } from '../platform/oauth/server.ts'
import type { ReplicaReads } from '../core/db/replica.ts'
import type { LiveVersions } from '../platform/versions/live.ts'
import type { VersionUsage } from '../platform/versions/usage.ts'
import type { Metrics } from '../platform/metrics.ts'
import type { FairShare } from '../platform/pipeline/fair-share.ts'
import type { ResponseCache } from '../core/cache/response-cache.ts'
import type { OrgStateCache } from '../core/cache/org-state.ts'
import type { PendingOrgs } from '../core/pending-orgs.ts'

export interface ServiceOptions {
  clock?: Clock
  log?: Logger
  /** The resource registry (resources/index.ts); passed in so the runtime never imports a resource. */
  registry: readonly Resource[]
  /** Called after migrations on a fresh database (demo seed). */
  onEmptyDatabase?: (ctx: { db: Database; pepper: string; resources: ServiceContext['resources'] }) => Promise<void>
  /** The MCP prompts (resources/prompts.ts); passed in like the registry. */
  prompts?: readonly PromptDeclaration[]
  /** Extra MCP tools, for tests (a tool needing `mcp:write`, the conformance suite's schema probe). */
  mcpExtraTools?: readonly McpTool[]
  /** Extra MCP prompts and resources, for tests (the conformance suite's fixtures: test/helpers/conformance-fixtures.ts). */
  mcpExtraPrompts?: readonly McpExtraPrompt[]
  mcpExtraResources?: readonly McpExtraResource[]
  /** The quota engine; default: the leasing PostgreSQL engine (runtime/platform/quota/factory.ts). */
  quota?: QuotaFactory
  /** Where the access log goes (one line per answered request); none without it. */
  accessLog?: AccessLog
  /**
   * This service is worker `slot` (1…N) of `orgscan serve --workers N` (docs/operating.md "Several processes"): the
   * primary has migrated the database and serves the admin listener, so the service does neither; its metrics (for
   * the primary to gather) add the per-worker series labelled with the slot.
   */
  worker?: { slot: number }
  /**
   * Orgs whose data the caller writes after the service started (the first start's large demo org): their reads are
   * answered 503 with Retry-After meanwhile, and /readyz lists them (docs/adr/0175-first-run-under-a-minute.md).
   */
  pendingOrgs?: PendingOrgs
}

export interface RunningService {
  /** The REST listener's root URL. */
  url: string
  /** The MCP endpoint (on the REST listener, or on MCP_PORT). */
  mcpUrl: string
  port: number
  server: Server
  ctx: ServiceContext
  db: Database
  pepper: string
  /** The API-key authenticator (administration in this process forgets keys it changed; tests read its counters). */
  auth: ApiKeyAuthenticator
  /** The OAuth authorization server (its issuer is the MCP listener's address unless ORGSCAN_PUBLIC_URL is set). */
  oauth: OAuthServer
  /** Tells this process what an administrative change touched, as the admin socket does (tests use it in process). */
  adminChanged(change: { account?: string; key?: string; oauth?: boolean }): void
  /** The admin listener (`GET /metrics`), when ORGSCAN_ADMIN_PORT is set (and this is not a worker). */
  adminUrl?: string
  /** Reads on the replica (DATABASE_REPLICA_URL), with what happened to them (`replica.stats()`). */
  replica?: ReplicaReads
  /** The version table in memory (`reload()` re-reads it), and the record of who called each version (`flush()`). */
  versions: LiveVersions
  usage: VersionUsage
  /** The metrics, when ORGSCAN_ADMIN_PORT is set (a worker hands them to its primary). */
  metrics?: Metrics
  /** The hot-read caches (hit, miss and eviction counts: `hot.responses.stats()`). */
  hot: { responses: ResponseCache; orgs: OrgStateCache }
  /** The fair share of the read connections among accounts (its bounds: `perAccount`, `depth`; `load(account)`). */
  fairShare: FairShare
  /** Requests being answered now (what a graceful stop waits for). */
  inFlight(): number
  /** Requests MCP tool calls of this process sent their clients and still wait for the answer of (none is left behind). */
  mcpClientRequestsWaiting(): number
  /**
   * Graceful stop: stops accepting, lets answers in progress finish for up to `graceMs` (default 10 s), then returns
   * unused quota, ends sessions' timers and closes the database.
   */
  close(graceMs?: number): Promise<void>
}
