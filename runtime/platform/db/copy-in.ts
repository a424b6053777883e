/**
 * `COPY … FROM STDIN` through postgres.js (PostgreSQL only: the embedded database cannot take it, see
 * docs/adr/0040-ndjson-bundles-and-one-pass-import.md). postgres.js hands out a Writable, with one gap closed here:
 * when the server refuses the data after the last chunk was written (a bad value, a duplicate key), postgres.js only
 * rejects the COPY query, whose promise has already resolved with the stream — the error would be lost and `end()`
 * would never finish. The query's reject is observed instead, so every failure reaches `write()` or `end()`.
 *
 * Use it inside a transaction (`tx`), and always `end()` or `abort()` a started COPY before the next statement: the
 * connection stays in copy mode until then.
 */
import type postgres from 'postgres'
import type { Writable } from 'node:stream'

export interface CopyIn {
  /** Sends a chunk (whole rows); waits while the connection is busy. Rejects once the COPY failed. */
  write(chunk: string): Promise<void>
  /** Ends the COPY; resolves when the server accepted every row, rejects with its error. */
  end(): Promise<void>
  /** Gives the COPY up (CopyFail): nothing it sent is kept, and the transaction is aborted. Never rejects. */
  abort(reason: string): Promise<void>
}

type RejectableQuery = postgres.PendingQuery<postgres.Row[]> & { reject?: (e: unknown) => void }

/** Starts `COPY <table> (<columns>) FROM STDIN` (text format). `statement` is built from registry identifiers only. */
export async function copyIn(tx: postgres.TransactionSql | postgres.Sql, statement: string): Promise<CopyIn> {
  const query = tx.unsafe(statement) as unknown as RejectableQuery
  let failure: unknown
  let wake: (() => void) | undefined
  const reject = query.reject
  if (typeof reject !== 'function') throw new Error('postgres.js changed: its query has no reject(); see runtime/platform/db/copy-in.ts')
  query.reject = (e: unknown) => {
    failure ??= e
    wake?.()
    reject.call(query, e)
  }
  const stream = (await query.writable()) as unknown as Writable
  stream.on('error', (e) => {
    failure ??= e
    wake?.()
  })
  /** Waits for `event` on the stream, or a failure, whichever comes first. */
  const until = (event: 'drain' | 'finish') =>
    new Promise<void>((resolve) => {
      if (failure !== undefined) return resolve()
      const done = () => {
        stream.off(event, done)
        wake = undefined
        resolve()
      }
      wake = done
      stream.once(event, done)
    })
  return {
    async write(chunk) {
      if (failure !== undefined) throw failure
      if (!stream.write(chunk)) await until('drain')
      if (failure !== undefined) throw failure
    },
    async end() {
      if (failure !== undefined) throw failure
      const finished = until('finish')
      stream.end()
      await finished
      if (failure !== undefined) throw failure
    },
    async abort(reason) {
      if (failure !== undefined || stream.writableFinished) return
      const failed = new Promise<void>((resolve) => (wake = resolve))
      stream.destroy(new Error(reason))
      await failed
    },
  }
}
