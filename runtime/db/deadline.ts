/**
 * A deadline for request-path queries. postgres.js can drop a query sent while its connection is failing,
 * leaving the promise pending forever; a request must still end: after `ms` the query is cancelled (best
 * effort) and the request fails with 503.
 */
import { ApiError } from '../errors.ts'

export const QUERY_DEADLINE_MS = 15_000

export function withDeadline<T>(q: PromiseLike<T> & { cancel?: () => unknown }, ms = QUERY_DEADLINE_MS): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      try {
        void Promise.resolve(q.cancel?.()).catch(() => undefined)
      } catch {
        // cancelling is best effort
      }
      reject(new ApiError('service_unavailable', 'The database did not answer in time; retry shortly.'))
    }, ms)
    q.then(
      (v) => {
        clearTimeout(timer)
        resolve(v)
      },
      (e: unknown) => {
        clearTimeout(timer)
        reject(e)
      },
    )
  })
}
