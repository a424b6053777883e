/** Chooses the quota implementation: the leasing PostgreSQL engine (docs/quota.md) for every database. */
import type { ServiceOptions } from '../service.ts'
import { PgQuota } from './pg-quota.ts'

/** LISTEN/NOTIFY needs a second connection: only on a PostgreSQL server (embedded PGlite has one). */
export function quotaFactory(): NonNullable<ServiceOptions['quota']> {
  return ({ sql, clock, log, embedded }) => new PgQuota(sql, clock, log, { listen: !embedded })
}
