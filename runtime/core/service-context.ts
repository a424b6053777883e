/** What every surface's handlers share: configuration, clock, the registry, the logger and the one request pipeline. */
import type { Clock, Config } from './config-types.ts'
import type { CompiledResource } from './registry.ts'
import type { QuotaService } from './quota-types.ts'
import type { Logger } from './log.ts'
import type { Pipeline } from './pipeline.ts'
import type { VersionSource } from './version-state.ts'

export interface ServiceContext {
  config: Config
  clock: Clock
  resources: readonly CompiledResource[]
  log: Logger
  /** Authentication, quota, fair share and reads: surfaces go through this and nothing else. */
  pipeline: Pipeline
  /** The version table, read from the database and kept fresh (runtime/platform/versions/live.ts). */
  versions: VersionSource
  /** For administration in this process (a limit changed here applies at the next request). */
  quota: QuotaService
  /**
   * The WWW-Authenticate value: for a 401, Basic and Bearer with the resource's OAuth metadata (and, when `authorization`
   * presented a Bearer token, `error="invalid_token"` with the 401's detail as `error_description`), or for a token's
   * 403 (`insufficient_scope`).
   */
  challenge(surface: 'rest' | 'mcp', authorization?: string, error?: 'invalid_token' | 'insufficient_scope', description?: string): string
}
