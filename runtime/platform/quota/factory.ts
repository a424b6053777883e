/** Chooses the quota implementation: the leasing PostgreSQL engine (docs/quota.md) for every database. */
import type postgres from 'postgres'
import type { Logger } from '../../core/log.ts'
import { PgQuota } from './pg-quota.ts'
import type { QuotaService } from '../../core/quota-types.ts'

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

/**
 * On the embedded database a lease call shares the one connection with data reads, so it may wait for a running
 * statement, which nothing cancels there: leases are asked further ahead and live longer, so that a busy account's
 * requests keep finding units while a call waits (docs/adr/0100-fair-share.md). Safe there: only this process can
 * change limits, and it invalidates at once; the lease lifetime is the bound for changes made elsewhere.
 */
const EMBEDDED_QUOTA = { leaseHorizonMs: 4000, leaseTtlMs: 10_000, idleReturnMs: 5000 } as const

/** LISTEN/NOTIFY needs a second connection: only on a PostgreSQL server (embedded PGlite has one). */
export function quotaFactory(): QuotaFactory {
  return ({ sql, clock, log, embedded }) => new PgQuota(sql, clock, log, embedded ? { listen: false, ...EMBEDDED_QUOTA } : { listen: true })
}
