/** Options of the leasing quota engine and their defaults (docs/quota.md "API" lists them with their reasons). */

export interface PgQuotaOptions {
  /**
   * LISTEN on `orgscan_quota` so limit changes made by any process apply at once (the lease is dropped).
   * Needs a second connection: true for a PostgreSQL server, false for embedded PGlite (one connection;
   * there the process itself changes limits and should call `invalidate`). Required on purpose.
   */
  listen: boolean
  /** Most units one lease call may take (default 200). 1 = no prefetch: one database call per request. */
  maxLease?: number
  /**
   * Prefetch beyond the waiting requests: 'adaptive' (default) = this process's recent request rate for
   * the account × `leaseHorizonMs`; a number = that many units every time (tests, tuning).
   */
  prefetch?: 'adaptive' | number
  /** Adaptive prefetch covers about this much future traffic (default 250 ms). */
  leaseHorizonMs?: number
  /** Prefetch is trimmed in the database to this fraction of what would remain (default 0.1). */
  prefetchFraction?: number
  /** Unused units go back after this long without a request (default 1000 ms). */
  idleReturnMs?: number
  /** A lease (and the limits it was computed with) is used at most this long (default 2000 ms). */
  leaseTtlMs?: number
  /** After a window is found exhausted, answer 429 locally this long before asking again (default 1000 ms). */
  blockedRecheckMs?: number
  /** A database call slower than this fails with 503 (lease, state read) or is abandoned (return); default 5000 ms. */
  leaseTimeoutMs?: number
  /** Asynchronous commit for lease transactions (default false; see docs/quota.md before enabling). */
  asyncLeaseCommit?: boolean
  /** Aggregated exempt-usage log line at most this often per account (default 60000 ms). */
  exemptLogIntervalMs?: number
  /** Per-account state idle this long is dropped from memory (default 600000 ms). */
  forgetAfterMs?: number
}

/** The options with every default filled in. */
export type QuotaSettings = Required<PgQuotaOptions>

const DEFAULTS: Omit<QuotaSettings, 'listen'> = {
  maxLease: 200,
  prefetch: 'adaptive',
  leaseHorizonMs: 250,
  prefetchFraction: 0.1,
  idleReturnMs: 1000,
  leaseTtlMs: 2000,
  blockedRecheckMs: 1000,
  leaseTimeoutMs: 5000,
  asyncLeaseCommit: false,
  exemptLogIntervalMs: 60_000,
  forgetAfterMs: 600_000,
}

/** Fills in the defaults; a lease must be able to take at least one unit. */
export function resolveOptions(opts: PgQuotaOptions): QuotaSettings {
  const o = { ...DEFAULTS, ...opts }
  if (!(o.maxLease >= 1)) throw new Error('PgQuota: maxLease must be at least 1')
  return o
}
