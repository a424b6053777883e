/**
 * What a principal may see, without a database round trip on the hot path
 * (docs/adr/0031-response-cache-keyed-by-scan.md): each org's account and latest completed scan, and each user's
 * grants, cached per process.
 *
 * Freshness: every change to `orgs` (an import flipping the latest scan, an org moved or removed) and to
 * `user_org_access` (a grant added or removed) is announced by migration 006's triggers on the `orgscan_cache`
 * channel; every process listens (PostgreSQL) and drops what changed, and the process that made a change drops it
 * at once (`invalidate`). As a bound that holds even when a notification is lost (the listening connection
 * dropped), org entries live at most `orgTtlMs` (default 1 s) and grants at most `grantTtlMs` (the key cache's
 * bound, 5 s by default).
 *
 * Every lookup has the request path's deadline (runtime/core/db/deadline.ts: 503 after 15 s, never a request waiting on a
 * starved pool without end), and concurrent requests for the same org or grant share one lookup. The service gives
 * it the control pool, not the read pool: a lookup every request needs never waits behind data reads.
 *
 * Refreshed ahead: a request that finds an entry past half its lifetime still gets it at once, and starts a lookup in
 * the background that replaces it (stale-while-revalidate): a busy org's requests never wait for its lookup, and an
 * invalidation still drops an entry at once. An entry is served past its lifetime (its refresh under way) for at most
 * `graceMs` more: the service gives a grace only on the embedded database, whose every change is made in this process
 * and invalidates at once (no notification to lose), and whose one connection may make a refresh wait for a running
 * data read. On PostgreSQL there is none: the bounds above stand as they are.
 */
import type postgres from 'postgres'
import type { Clock } from '../config-types.ts'
import { QUERY_DEADLINE_MS, withDeadline } from '../db/deadline.ts'
import { shared } from '../single-flight.ts'

export interface OrgState {
  accountId: string
  /** The latest completed scan, or null before the first. */
  scanId: string | null
}

/** Most entries of each map; past it, the oldest are dropped (they are re-read when needed). */
const MAX_ENTRIES = 100_000

export class OrgStateCache {
  private readonly orgs = new Map<string, { state: OrgState | null; at: number }>()
  private readonly grants = new Map<string, { granted: boolean; at: number }>()
  /** Lookups under way, shared by the requests that need the same answer meanwhile. */
  private readonly pendingOrgs = new Map<string, Promise<OrgState | null>>()
  private readonly pendingGrants = new Map<string, Promise<boolean>>()
  /** Bumped by every invalidation: a lookup that started before one does not store its (maybe stale) answer. */
  private generation = 0
  /** Database lookups made (tests). */
  lookups = 0

  constructor(
    private readonly sql: postgres.Sql,
    private readonly clock: Clock,
    private readonly orgTtlMs: number,
    private readonly grantTtlMs: number,
    private readonly deadlineMs = QUERY_DEADLINE_MS,
    private readonly graceMs = 0,
  ) {}

  /**
   * The org's state when `accountId` owns it and `userId` (if any) was granted it; undefined otherwise (the caller
   * then takes the uncached path, which tells 403 from 404).
   */
  async visible(orgId: string, accountId: string, userId: string | null): Promise<OrgState | undefined> {
    const state = await this.org(orgId)
    if (!state || state.accountId !== accountId) return undefined
    if (userId !== null && !(await this.granted(userId, orgId))) return undefined
    return state
  }

  private org(orgId: string): Promise<OrgState | null> {
    const now = this.clock()
    const hit = this.orgs.get(orgId)
    const age = hit ? now - hit.at : Infinity
    if (age < this.orgTtlMs + this.graceMs) {
      if (2 * age >= this.orgTtlMs && !this.pendingOrgs.has(orgId)) ahead(this.lookupOrg(orgId, now))
      return Promise.resolve(hit!.state)
    }
    return this.lookupOrg(orgId, now)
  }

  private lookupOrg(orgId: string, now: number): Promise<OrgState | null> {
    return shared(this.pendingOrgs, orgId, async () => {
      const gen = this.generation
      this.lookups++
      const rows = await withDeadline(this.sql<{ account_id: string; scan_id: string | null }[]>`SELECT account_id::text AS account_id, latest_scan_id::text AS scan_id FROM orgs WHERE salesforce_id = ${orgId}`, this.deadlineMs)
      const state = rows[0] ? { accountId: rows[0].account_id, scanId: rows[0].scan_id } : null
      if (gen === this.generation && this.orgTtlMs > 0) remember(this.orgs, orgId, { state, at: now })
      return state
    })
  }

  private granted(userId: string, orgId: string): Promise<boolean> {
    const key = `${userId}:${orgId}`
    const now = this.clock()
    const hit = this.grants.get(key)
    const age = hit ? now - hit.at : Infinity
    if (age < this.grantTtlMs + this.graceMs) {
      if (2 * age >= this.grantTtlMs && !this.pendingGrants.has(key)) ahead(this.lookupGrant(userId, orgId, key, now))
      return Promise.resolve(hit!.granted)
    }
    return this.lookupGrant(userId, orgId, key, now)
  }

  private lookupGrant(userId: string, orgId: string, key: string, now: number): Promise<boolean> {
    return shared(this.pendingGrants, key, async () => {
      const gen = this.generation
      this.lookups++
      const rows = await withDeadline(this.sql`SELECT 1 FROM user_org_access WHERE user_id = ${userId}::bigint AND org_id = ${orgId}`, this.deadlineMs)
      const granted = rows.length > 0
      if (gen === this.generation && this.grantTtlMs > 0) remember(this.grants, key, { granted, at: now })
      return granted
    })
  }

  /** A statement read `scanId` for this org: when the cached state says otherwise, it is stale. */
  observed(orgId: string, scanId: string | null): void {
    const hit = this.orgs.get(orgId)
    if (hit && hit.state?.scanId !== scanId) this.invalidate({ org: orgId })
  }

  /** Drops what changed: one org, one user's grants, or everything (no argument). */
  invalidate(what?: { org?: string; user?: string }): void {
    this.generation++
    if (!what) {
      this.orgs.clear()
      this.grants.clear()
      this.pendingOrgs.clear()
      this.pendingGrants.clear()
      return
    }
    // A lookup under way may have read before the change: later requests do not join it.
    if (what.org) {
      this.orgs.delete(what.org)
      this.pendingOrgs.delete(what.org)
    }
    if (what.user) {
      for (const k of this.grants.keys()) if (k.startsWith(`${what.user}:`)) this.grants.delete(k)
      for (const k of this.pendingGrants.keys()) if (k.startsWith(`${what.user}:`)) this.pendingGrants.delete(k)
    }
  }
}

/** A lookup made ahead of need: its failure is nobody's (the entry serves out its lifetime, then a request asks again). */
function ahead(lookup: Promise<unknown>): void {
  lookup.catch(() => undefined)
}

function remember<V>(m: Map<string, V>, k: string, v: V): void {
  m.delete(k)
  m.set(k, v)
  if (m.size > MAX_ENTRIES) m.delete(m.keys().next().value!)
}

/** The channel of migration 006's triggers; payloads `org:<salesforceId>`, `grant:<userId>` and `key:<keyId>` (for the key cache). */
export const CACHE_CHANNEL = 'orgscan_cache'

/** Applies a notification of the cache channel. */
export function applyCacheNotification(cache: OrgStateCache, payload: string | undefined): void {
  if (payload?.startsWith('org:')) cache.invalidate({ org: payload.slice(4) })
  else if (payload?.startsWith('grant:')) cache.invalidate({ user: payload.slice(6) })
  else if (!payload?.startsWith('key:')) cache.invalidate()
}
