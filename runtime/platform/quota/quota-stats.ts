/** Counters of the quota engine for tests, benchmarks and diagnostics (`PgQuota.stats`). */

export interface QuotaStats {
  /** Lease calls answered by the database. */
  leases: number
  /** Units granted by those calls. */
  leasedUnits: number
  /** Units confirmed returned to the database. */
  returnedUnits: number
  /** Units given up after failed returns (left counted: over-count, never over-admission). */
  droppedReturnUnits: number
  allowed: number
  rejected: number
  /** Requests of quota-exempt principals (never counted). */
  exempt: number
}

export function newQuotaStats(): QuotaStats {
  return { leases: 0, leasedUnits: 0, returnedUnits: 0, droppedReturnUnits: 0, allowed: 0, rejected: 0, exempt: 0 }
}
