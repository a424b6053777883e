/**
 * Deadlines for database calls. postgres.js can drop a query sent while its connection is failing, leaving
 * the promise pending forever; a caller must still get an answer. After the deadline the caller's promise
 * rejects; the query itself may still answer or fail later, and that late outcome goes to the optional
 * late callbacks (e.g. the quota gives a late grant back), never to the caller.
 *
 * The query is never cancelled from here. postgres.js (3.4.x) pipelines queries on a connection, and cancelling
 * one already sent behind another makes it skip that query's answer: every later query on the connection then
 * resolves with the answer of the query before it — seen as one account's request answered with another account's
 * data. A statement that runs too long is ended by the server (`statement_timeout`, runtime/platform/db/connect.ts), which
 * keeps the connection in step; a late answer is simply not delivered.
 */
import { ApiError } from '../errors.ts'

export const QUERY_DEADLINE_MS = 15_000

export interface Deadline<T> {
  /** How long the caller waits. */
  ms: number
  /** The error the caller gets when the deadline passes; called once, at that moment. */
  expired: () => Error
  /** The query answered after the deadline: nobody else sees this value. */
  onLateAnswer?: (v: T) => void
  /** The query failed after the deadline. */
  onLateError?: (e: unknown) => void
}

/** Waits for `q` at most `d.ms`; a late answer or failure goes to `d`'s callbacks. */
export function raceDeadline<T>(q: PromiseLike<T>, d: Deadline<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let expired = false
    const timer = setTimeout(() => {
      expired = true
      reject(d.expired())
    }, d.ms)
    q.then(
      (v) => {
        clearTimeout(timer)
        if (!expired) resolve(v)
        else d.onLateAnswer?.(v)
      },
      (e: unknown) => {
        clearTimeout(timer)
        if (!expired) reject(e)
        else d.onLateError?.(e)
      },
    )
  })
}

/** The request-path deadline: after `ms` the request fails with 503 (the query is left to finish; see above). */
export function withDeadline<T>(q: PromiseLike<T>, ms = QUERY_DEADLINE_MS): Promise<T> {
  return raceDeadline(q, {
    ms,
    expired: () => new ApiError('service_unavailable', 'The database did not answer in time; retry shortly.'),
  })
}
