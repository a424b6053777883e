/**
 * One lease call with its in-doubt handling (docs/quota.md "In-doubt calls"). The call carries an id chosen
 * here; a deadlock / serialization failure is retried (twice) with the same id, since that attempt was
 * rolled back entirely. Every other failure is settled by the id (`Settlement.leaseFailed`), and so is a
 * failure after the deadline; an answer after the deadline — the waiting requests already got their 503 —
 * gives its grant straight back.
 */
import { randomUUID } from 'node:crypto'
import { ApiError } from '../../core/errors.ts'
import { isRetryableTransaction } from '../../core/db/errors.ts'
import type { LeaseRow, QuotaSql } from './quota-sql.ts'
import type { QuotaStats } from './quota-stats.ts'
import type { Settlement } from './settlement.ts'

export interface LeaseRequest {
  accountId: string
  dayStart: number
  monthStart: number
  need: number
  prefetch: number
  /** Unused units of these windows that travel with the call; settled here if it fails. */
  giveBack: number
}

/** Leases units for the request's windows; undefined when the account does not exist. Throws 503 on a timeout. */
export async function leaseUnits(db: QuotaSql, settlement: Settlement, stats: QuotaStats, req: LeaseRequest): Promise<LeaseRow | undefined> {
  const { accountId: id, dayStart, monthStart, giveBack } = req
  const leaseId = randomUUID()
  const lost = { leaseId, id, dayStart, monthStart, giveBack }
  const settle = (e: unknown) => settlement.leaseFailed(lost, e)
  for (let attempt = 0; ; attempt++) {
    try {
      return await db.lease(
        { leaseId, accountId: id, dayStart, monthStart, need: req.need, prefetch: req.prefetch, giveBack },
        {
          onLateAnswer: (late) => {
            // Answered after the waiting requests were failed: whatever it granted goes straight back.
            const g = late?.granted ?? 0
            if (g > 0) settlement.queueReturn(id, dayStart, monthStart, g)
            stats.returnedUnits += giveBack
          },
          onLateError: settle, // failed after the waiting requests were failed
        },
      )
    } catch (e) {
      // Deadlock / serialization failure: the statement was rolled back entirely, so retrying cannot count twice.
      if (attempt < 2 && isRetryableTransaction(e)) continue
      // Settle it (a connection lost while the call was out may have committed: cancel by its id). A
      // timeout (ApiError) is settled by the late answer or the late failure, above.
      if (!(e instanceof ApiError)) settle(e)
      throw e
    }
  }
}
