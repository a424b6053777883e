/**
 * Retention (docs/operating.md "Retention"): each org keeps its newest `keep` scans (by start time, any status) and
 * always its latest completed one, which every read uses; older scans and their records are deleted in the
 * background, one scan per transaction so no single delete holds a connection for long, and the org's `scanCount`
 * follows. Readers of the latest scan never wait for it: only rows of older scans are deleted.
 */
import type postgres from 'postgres'
import type { Logger } from '../core/log.ts'

/** Deletes the scans past retention; returns how many were deleted. Stops early when `stopped()` turns true. */
export async function pruneScans(sql: postgres.Sql, keep: number, log?: Logger, stopped: () => boolean = () => false): Promise<number> {
  let deleted = 0
  for (;;) {
    if (stopped()) break
    const victims = await sql<{ id: string; org_id: string }[]>`
      SELECT r.id::text AS id, r.org_id FROM (
        SELECT s.id, s.org_id, row_number() OVER (PARTITION BY s.org_id ORDER BY s.started_at DESC, s.id DESC) AS rn FROM scans s
      ) r JOIN orgs o ON o.salesforce_id = r.org_id
      WHERE r.rn > ${keep} AND r.id IS DISTINCT FROM o.latest_scan_id
      ORDER BY r.id LIMIT 50`
    if (victims.length === 0) break
    for (const v of victims) {
      if (stopped()) break
      await sql.begin(async (tx) => {
        await tx`DELETE FROM scans WHERE id = ${v.id}::bigint`
        await tx`UPDATE orgs SET scan_count = (SELECT count(*) FROM scans WHERE org_id = ${v.org_id}) WHERE salesforce_id = ${v.org_id}`
      })
      deleted++
    }
  }
  if (deleted > 0) log?.info({ msg: 'retention: older scans deleted', deleted, keep })
  return deleted
}

/** Runs `pruneScans` soon after start and then every `everyMs`, one run at a time; `close()` waits for a run. */
export function scheduleRetention(sql: postgres.Sql, keep: number, everyMs: number, log: Logger): { close(): Promise<void> } {
  let running: Promise<unknown> | undefined
  let closed = false
  const run = () => {
    if (running || closed) return
    running = pruneScans(sql, keep, log, () => closed)
      .catch((err: unknown) => log.warn({ msg: 'retention: pruning failed; it is tried again later', err }))
      .finally(() => (running = undefined))
  }
  const first = setTimeout(run, Math.min(5_000, everyMs))
  const timer = setInterval(run, everyMs)
  first.unref()
  timer.unref()
  return {
    async close() {
      closed = true
      clearTimeout(first)
      clearInterval(timer)
      await running
    },
  }
}
