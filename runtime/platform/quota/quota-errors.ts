/**
 * The errors the quota engine throws (docs/quota.md "Wiring"): 401 when the principal's account does not
 * exist (deleted while its credential was cached, or a malformed id, which never reaches SQL), 503 when
 * the database failed or did not answer in time (nothing was consumed).
 */
import { ApiError, unauthorized } from '../../core/errors.ts'
import type { Principal } from '../../core/principal.ts'

/** An account id as stored: a positive bigint in decimal. */
const ACCOUNT_ID = /^[1-9][0-9]{0,18}$/

export function quotaUnavailable(): ApiError {
  return new ApiError('service_unavailable', 'The quota service is temporarily unavailable; retry shortly.')
}

export function accountGone(): ApiError {
  return unauthorized('The account of this credential no longer exists.')
}

/** The principal's account id; a malformed one is answered like a deleted account. */
export function accountIdOf(p: Principal): string {
  if (typeof p.accountId !== 'string' || !ACCOUNT_ID.test(p.accountId)) throw accountGone()
  return p.accountId
}
