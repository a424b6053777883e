/**
 * The one request pipeline of every surface (REST now, MCP next): authenticate → quota → read, which consults the
 * response cache and only then takes the account's fair share of the database (runtime/platform/pipeline/fair-share.ts).
 * A surface parses its own request into an `Operation` and renders the `Outcome`; authentication, quota, the
 * fair share of the database, org access and the read itself happen only here.
 *
 * Charging rules (docs/adr/0010-quota-counting-rules.md): a read costs one unit whatever its 2xx or 4xx outcome; a 429
 * costs nothing (the quota's own, and fair share's `concurrency_limited`, whose unit is given back); a 5xx is
 * given back (a client retrying after a fault is not charged twice). A read cancelled for its own cost
 * (`query_too_expensive`) is a 4xx and stays charged. Quota reads are free.
 */
import { ApiError, toApiError } from '../../core/errors.ts'
import type { Principal } from '../../core/principal.ts'
import type { Logger } from '../../core/log.ts'
import type { QueryInput, Surface } from '../../core/plan.ts'
import type { CompiledResource } from '../../core/registry.ts'
import type { QuotaCharge, QuotaService } from '../../core/quota-types.ts'
import { read, checkOrgAccess, onConnection, NO_COMPLETED_SCAN, type ReadDb } from '../../core/read.ts'
import type { PendingOrgs } from '../../core/pending-orgs.ts'
import type { Client, Operation, Outcome, Pipeline, RateInfo } from '../../core/pipeline.ts'
import { checksumProblem, normalizeOrgId, ORG_NOT_FOUND } from '../../core/org-id.ts'
import type { FairShare } from './fair-share.ts'
import type { Metrics } from '../metrics.ts'
import type { VersionUsage } from '../versions/usage.ts'

export interface PipelineDeps {
  /** Pool of request reads, and which statements it prepares. */
  read: ReadDb
  quota: QuotaService
  fairShare: FairShare
  authenticate: (authorization: string | undefined, client: Client, surface: Surface) => Promise<Principal>
  /** Records which credentials called each version; optional. */
  usage?: Pick<VersionUsage, 'record'>
  log: Logger
  /** Counts quota decisions (runtime/platform/metrics.ts); optional. */
  metrics?: Pick<Metrics, 'quota'>
  /** Where the orgs a caller can see are listed (the org list's MCP tool and REST path), named by an org's 404. */
  orgList?: { tool: string; path: string }
  /** Orgs whose data this process is still writing (the first start's large demo org); optional. */
  pending?: PendingOrgs
}

/** Seconds a caller of a pending org is asked to wait before asking again. */
const PENDING_RETRY_S = 5

/**
 * A read of an org that has no completed scan because this process is still writing its demo data: a 503 saying so,
 * with Retry-After, rather than the 404 of an org never scanned. Only after the read found that the caller may see
 * the org (its 404 and 403 come first).
 */
function explainPending(e: ApiError, orgId: string | undefined, pending: PendingOrgs | undefined): ApiError {
  if (!pending || e.code !== 'not_found' || e.message !== NO_COMPLETED_SCAN || orgId === undefined) return e
  let label
  try {
    label = pending.label(normalizeOrgId(orgId))
  } catch {
    return e
  }
  if (label === undefined) return e
  return new ApiError('service_unavailable', `${label}'s demo data is still being seeded (the first start writes this large org after the server starts); try again in a few seconds.`, { parameter: 'orgId', retryAfterSeconds: PENDING_RETRY_S })
}

/** An org id as a caller may have typed it: echoed in an answer only when it has the form of one. */
const ORG_ID_FORM = /^[A-Za-z0-9]{15,18}$/

/**
 * An org's 404 said with the id the caller sent and where the orgs it can see are listed (the read only knows the
 * canonical id, and no surface's names); any other error as it is.
 */
function explainOrgNotFound(e: ApiError, orgId: string | undefined, surface: Surface, list: PipelineDeps['orgList']): ApiError {
  if (e.code !== 'not_found' || e.message !== ORG_NOT_FOUND || orgId === undefined || !ORG_ID_FORM.test(orgId)) return e
  const where = !list ? '' : surface === 'mcp' ? `; ${list.tool} lists the orgs you can see` : `; GET ${list.path} (${list.tool}) lists the orgs you can see`
  // A wrong checksum is said as such: it is arithmetic on the id sent, and tells nothing of which orgs exist.
  const why = checksumProblem(orgId)
  return new ApiError('not_found', `Org ${orgId} not found${why ? `: ${why}` : ''}${where}.`, e.extras)
}

/** The charge of a free read: allowed, nothing counted, no rate-limit headers. */
const FREE: QuotaCharge = { allowed: true, headers: {} }

export function createPipeline(d: PipelineDeps): Pipeline {
  /**
   * Any failure as an ApiError; a server fault — anything that is not one, or an internal error carrying the failure
   * it stands for (a database error classified as internal) — is logged here with its cause.
   */
  const failure = (e: unknown, what: string): ApiError => {
    if (!(e instanceof ApiError)) d.log.error({ msg: `${what} failed`, err: e })
    else if (e.status >= 500 && e.cause !== undefined) d.log.error({ msg: `${what} failed`, err: e.cause })
    return toApiError(e)
  }

  async function executeRead(p: Principal, o: Extract<Operation, { kind: 'read' }>, surface: Surface): Promise<Outcome> {
    let charge
    try {
      charge = o.free ? FREE : await d.quota.charge(p)
    } catch (e) {
      return { ok: false, error: failure(e, 'quota') }
    }
    const rate: RateInfo = { headers: charge.headers, window: charge.window }
    if (!o.free) d.metrics?.quota(charge.allowed, charge.window?.name)
    if (!charge.allowed) return { ok: false, error: charge.error!, rate }
    // The turn at the database is taken inside the read, after the response cache had its chance: a cached answer
    // never waits for it. A request refused a turn is not charged, like any 429.
    let refused = false
    const turn = () =>
      d.fairShare.acquire(p.accountId).catch((e: unknown) => {
        refused = true
        throw e
      })
    try {
      const result = await read(d.read, { resource: o.resource, op: o.op, params: o.params, query: o.query(), surface, principal: p, lend: o.lend ?? surface === 'rest', turn })
      return { ok: true, kind: 'read', result, rate }
    } catch (e) {
      const error = explainPending(explainOrgNotFound(failure(e, refused ? 'fair share' : 'read'), o.params.orgId, surface, d.orgList), o.params.orgId, d.pending)
      if (refused || error.status >= 500) charge.refund?.()
      return { ok: false, error, rate }
    }
  }

  /** The account's rate-limit headers, read for free; none when the quota service cannot say. */
  async function rateOf(p: Principal): Promise<RateInfo | undefined> {
    try {
      return { headers: (await d.quota.state(p)).headers }
    } catch (e) {
      failure(e, 'quota state')
      return undefined
    }
  }

  async function executeQuota(p: Principal, o: Extract<Operation, { kind: 'quota' }>, surface: Surface): Promise<Outcome> {
    // A turn at the database only for the org check, the one statement of the read pool here: the account's quota is
    // read on the control pool, never behind its data reads.
    let turn
    try {
      turn = o.orgId !== undefined ? await d.fairShare.acquire(p.accountId) : undefined
    } catch (e) {
      return { ok: false, error: failure(e, 'fair share') }
    }
    // The state first: an error answer carries the rate-limit headers too (reading them is free).
    let rate: RateInfo | undefined
    try {
      const state = await d.quota.state(p)
      rate = { headers: state.headers }
      if (o.query) {
        const name = [...new URLSearchParams(o.query).keys()][0]?.slice(0, 64) ?? ''
        throw new ApiError('unknown_parameter', `Unknown query parameter "${name}": this endpoint takes none.`, { parameter: name })
      }
      if (turn) await checkOrgAccess(onConnection(d.read, turn.connection), p, normalizeOrgId(o.orgId!))
      return { ok: true, kind: 'quota', state: state.body, rate }
    } catch (e) {
      return { ok: false, error: explainOrgNotFound(failure(e, 'quota state'), o.orgId, surface, d.orgList), rate }
    } finally {
      turn?.release()
    }
  }

  return {
    async authenticate(authorization, client, surface, version) {
      let p
      try {
        p = await d.authenticate(authorization, client, surface)
      } catch (e) {
        throw failure(e, 'authentication')
      }
      if (version !== undefined) d.usage?.record(p, surface, version)
      return p
    },
    execute(p, o, surface) {
      d.fairShare.saw(p.accountId)
      return o.kind === 'read' ? executeRead(p, o, surface) : executeQuota(p, o, surface)
    },
    async refuse(p, error) {
      return { ok: false, error, rate: await rateOf(p) }
    },
  }
}
