/** What every surface's handlers share: configuration, clock, database, registry, auth and quota. */
import type postgres from 'postgres'
import type { Clock, Config } from './config.ts'
import type { CompiledResource } from './registry.ts'
import type { Principal } from './auth/principal.ts'
import type { QuotaService } from './quota/types.ts'
import type { Logger } from './log.ts'

export interface ServiceContext {
  config: Config
  clock: Clock
  sql: postgres.Sql
  resources: readonly CompiledResource[]
  log: Logger
  /** Authenticates a REST/MCP Authorization header (401 when missing or invalid). */
  authenticate(header: string | undefined): Promise<Principal>
  /** 404/403 unless the principal may read the org. */
  checkOrgAccess(p: Principal, orgId: string): Promise<void>
  quota: QuotaService
}
