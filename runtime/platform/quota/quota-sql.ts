/**
 * The quota's database calls: the migration 003 functions (lease, return, lease cancel) and one read of
 * both windows. Each is a single statement in its own transaction, never a transaction spanning calls,
 * so they are safe on the one-connection embedded pool. Each has a deadline (`leaseTimeoutMs`): after it
 * the caller gets 503 and a late answer or failure goes to the caller's late callbacks.
 */
import type postgres from 'postgres'
import type { Logger } from '../../core/log.ts'
import { raceDeadline } from '../../core/db/deadline.ts'
import type { Counts } from './account.ts'
import type { QuotaSettings } from './pg-quota-options.ts'
import { quotaUnavailable } from './quota-errors.ts'

export interface LeaseRow extends Counts {
  granted: number
}

export interface LeaseArgs {
  /** Settles the lease later if its answer is lost (`cancel`). */
  leaseId: string
  accountId: string
  dayStart: number
  monthStart: number
  /** Units for the requests waiting now: granted in full while they fit. */
  need: number
  /** Units beyond `need`, trimmed by the database to `prefetchFraction` of what would remain. */
  prefetch: number
  /** Unused units of the same windows given back first, in the same transaction. */
  giveBack: number
}

export interface LateOutcome<T> {
  onLateAnswer?: (v: T) => void
  onLateError?: (e: unknown) => void
}

const iso = (ms: number) => new Date(ms).toISOString()

export class QuotaSql {
  constructor(
    private readonly sql: postgres.Sql,
    private readonly log: Logger,
    private readonly o: Pick<QuotaSettings, 'leaseTimeoutMs' | 'prefetchFraction' | 'asyncLeaseCommit'>,
  ) {}

  /** `orgscan_quota_lease`: undefined when the account does not exist. */
  lease(a: LeaseArgs, late: LateOutcome<LeaseRow | undefined>): Promise<LeaseRow | undefined> {
    const q = this.sql<{ granted: number; day_used: string; month_used: string; daily_limit: number; monthly_limit: number }[]>`
      SELECT granted, day_used, month_used, daily_limit, monthly_limit
      FROM orgscan_quota_lease(${a.leaseId}::uuid, ${a.accountId}::bigint, ${iso(a.dayStart)}::timestamptz, ${iso(a.monthStart)}::timestamptz,
        ${a.need}::integer, ${a.prefetch}::integer, ${this.o.prefetchFraction}::float8, ${this.o.asyncLeaseCommit}::boolean,
        ${a.giveBack}::integer)`
    const row = q.then((rows) => {
      const r = rows[0]
      return r && { granted: r.granted, dayUsed: Number(r.day_used), monthUsed: Number(r.month_used), dayLimit: r.daily_limit, monthLimit: r.monthly_limit }
    })
    return this.timed(row, late)
  }

  /** `orgscan_quota_return`: applied once per `returnId`, however often it is sent. */
  giveBack(returnId: string, accountId: string, dayStart: number, monthStart: number, units: number): Promise<void> {
    const q = this.sql`SELECT orgscan_quota_return(${returnId}::uuid, ${accountId}::bigint, ${iso(dayStart)}::timestamptz, ${iso(monthStart)}::timestamptz, ${units}::integer)`
    return this.timed(q.then(() => undefined), {})
  }

  /**
   * `orgscan_quota_lease_cancel`: `applied` — the lease had committed and its grant (`returned`) went back;
   * otherwise it never will apply.
   */
  cancelLease(leaseId: string, accountId: string, dayStart: number, monthStart: number): Promise<{ applied: boolean; returned: number }> {
    const q = this.sql<{ applied: boolean; returned: number }[]>`
      SELECT applied, returned FROM orgscan_quota_lease_cancel(${leaseId}::uuid, ${accountId}::bigint, ${iso(dayStart)}::timestamptz, ${iso(monthStart)}::timestamptz)`
    return this.timed(q.then((rows) => rows[0]!), {})
  }

  /** Limits and `used` of both windows, without a lock; undefined when the account does not exist. */
  read(accountId: string, dayStart: number, monthStart: number): Promise<Counts | undefined> {
    const q = this.sql<{ daily_limit: number; monthly_limit: number; day_used: string; month_used: string }[]>`
      SELECT a.daily_limit, a.monthly_limit,
        coalesce((SELECT q.used FROM quota_usage q WHERE q.account_id = a.id AND q.window_kind = 'day' AND q.window_start = ${iso(dayStart)}::timestamptz), 0) AS day_used,
        coalesce((SELECT q.used FROM quota_usage q WHERE q.account_id = a.id AND q.window_kind = 'month' AND q.window_start = ${iso(monthStart)}::timestamptz), 0) AS month_used
      FROM accounts a WHERE a.id = ${accountId}::bigint`
    return this.timed(
      q.then((rows) => {
        const r = rows[0]
        return r && { dayLimit: r.daily_limit, monthLimit: r.monthly_limit, dayUsed: Number(r.day_used), monthUsed: Number(r.month_used) }
      }),
      {},
    )
  }

  /** The query is not cancelled at the deadline: its outcome still has to be known (late callbacks). */
  private timed<T>(q: Promise<T>, late: LateOutcome<T>): Promise<T> {
    return raceDeadline(q, {
      ms: this.o.leaseTimeoutMs,
      expired: () => {
        this.log.error({ msg: 'quota: database call timed out', timeoutMs: this.o.leaseTimeoutMs })
        return quotaUnavailable()
      },
      ...late,
    })
  }
}
