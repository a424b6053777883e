/**
 * Health for orchestrators and load balancers (docs/operating.md "Health"): unversioned, unauthenticated, free.
 *   GET /healthz — the process is up and answering: 200 {"status":"ok"}.
 *   GET /readyz  — it should get traffic: the database answers (within 2 s), every migration this build knows is
 *                  applied, its writes do not fail (the embedded database's disk is not full), and it is not
 *                  draining for shutdown. 200 {"status":"ready"}, else 503 {"status":
 *                  "not ready","reasons":[…]} with Retry-After, so a balancer takes it out before it stops.
 *                  With a replica, the body also reports it (`replica`: reachable, standby, lagBytes, replayPaused);
 *                  a replica that is down or behind does not make the process unready, since reads then go to the
 *                  primary (docs/adr/0037-read-replica-for-completed-scans.md). While the first start's large demo
 *                  org is still being seeded after the server started, a ready body lists it (`seeding`): the process
 *                  serves, and that org's reads answer 503 until it is done.
 */
import type { ServerResponse } from 'node:http'
import FindMyWay, { type HTTPVersion } from 'find-my-way'
import type postgres from 'postgres'
import { listMigrations } from '../db/migrate.ts'
import { raceDeadline } from '../../core/db/deadline.ts'
import { isUnavailable } from '../../core/db/errors.ts'
import { sendJson } from '../../core/http/respond.ts'
import type { Routes } from '../../core/http/routes.ts'
import type { ReplicaStatus } from '../../core/db/replica.ts'

export interface HealthDeps {
  sql: postgres.Sql
  draining(): boolean
  /** The replica's state, when one is configured (asked within the check's time). */
  replica?: (ms: number) => Promise<ReplicaStatus>
  /** Why writes fail right now (a full disk under the embedded database), or undefined. */
  writes?: () => string | undefined
  /** Data still being written after the start, one line each (the first start's large demo org). */
  seeding?: () => string[]
}

const LATEST = Math.max(...listMigrations().map((m) => m.version))
const CHECK_MS = 2000

async function problems(d: HealthDeps): Promise<string[]> {
  const reasons: string[] = []
  if (d.draining()) reasons.push('draining for shutdown')
  const writes = d.writes?.()
  if (writes) reasons.push(writes)
  try {
    const rows = await raceDeadline(d.sql<{ v: number }[]>`SELECT coalesce(max(version), 0)::int AS v FROM schema_migrations`, {
      ms: CHECK_MS,
      expired: () => new Error(`the database did not answer within ${CHECK_MS} ms`),
    })
    if (rows[0].v < LATEST) reasons.push(`migrations not current (database at ${rows[0].v}, this build needs ${LATEST})`)
  } catch (e) {
    // Classified as every answer's database failure is (runtime/core/db/errors.ts), never with the driver's text.
    reasons.push(e instanceof Error && e.message.startsWith('the database did not') ? e.message : isUnavailable(e) ? 'the database is unreachable' : 'the database check failed')
  }
  return reasons
}

export function buildHealthRoutes(d: HealthDeps): Routes {
  const router = FindMyWay<HTTPVersion.V1>({ ignoreTrailingSlash: false, caseSensitive: true })
  router.on(['GET', 'HEAD'], '/healthz', (_req, res) => sendJson(res as ServerResponse, 200, '{"status":"ok"}'))
  router.on(['GET', 'HEAD'], '/readyz', (_req, res) => {
    void Promise.all([problems(d), d.replica?.(CHECK_MS)]).then(([reasons, replica]) => {
      const seeding = d.seeding?.() ?? []
      const extra = { ...(replica ? { replica } : {}), ...(seeding.length ? { seeding } : {}) }
      if (reasons.length === 0) return sendJson(res as ServerResponse, 200, JSON.stringify({ status: 'ready', ...extra }))
      sendJson(res as ServerResponse, 503, JSON.stringify({ status: 'not ready', reasons, ...extra }), { 'Retry-After': '5' })
    })
  })
  return { router, allow: ['GET', 'HEAD'] }
}
