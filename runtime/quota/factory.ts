/** Chooses the quota implementation: the leasing PostgreSQL engine (docs/quota.md) for every database. */
import type postgres from 'postgres'
import type { Logger } from '../log.ts'
import { PgQuota } from './pg-quota.ts'
import type { QuotaService } from './types.ts'

/** What the service gives a quota engine when it starts. */
export interface QuotaContext {
  /** The service's pool. */
  sql: postgres.Sql
  /** Epoch milliseconds (injectable: windows and lease lifetimes follow it). */
  clock: () => number
  log: Logger
  /** Embedded PGlite: a single connection, so no LISTEN. */
  embedded: boolean
}

export type QuotaFactory = (ctx: QuotaContext) => QuotaService

/** LISTEN/NOTIFY needs a second connection: only on a PostgreSQL server (embedded PGlite has one). */
export function quotaFactory(): QuotaFactory {
  return ({ sql, clock, log, embedded }) => new PgQuota(sql, clock, log, { listen: !embedded })
}
