/**
 * The generation context of one demo org: its sizes at the seed scale, the times of its completed scans
 * ("versions" 0..last) and the lifecycle rule that keeps record ids stable while a few records appear or
 * disappear between scans.
 */
import { sizesAt, scanStart, type DemoOrgDef, type OrgSize } from './orgs.ts'
import { unit, type Rng } from './prng.ts'
import { DAY_MS } from './util.ts'

export interface Ctx {
  def: DemoOrgDef
  size: OrgSize
  scale: number
  now: number
  /** Indices into def.scans of the completed scans, oldest first. */
  versions: number[]
  /** Start time (ms) of each version's scan. */
  times: number[]
  last: number
  orgCreated: number
  /** Two characters of the org id used in generated record ids. */
  pod: string
}

/** Versions in which a record exists, inclusive. */
export interface Life {
  since: number
  until: number
}

export function makeCtx(def: DemoOrgDef, scale: number, now: Date): Ctx {
  const versions = def.scans.flatMap((s, i) => (s.status === 'completed' ? [i] : []))
  return {
    def,
    size: sizesAt(def.size, scale),
    scale,
    now: now.getTime(),
    versions,
    times: versions.map((i) => scanStart(def, i, now)),
    last: versions.length - 1,
    orgCreated: Date.UTC(def.info.createdYear, 2, 14, 16, 20),
    pod: def.salesforceId.slice(3, 5),
  }
}

export const ALWAYS: Life = { since: 0, until: Number.MAX_SAFE_INTEGER }

/**
 * Lifecycle of a record identified by `key`: about 4 % are new in the latest scan and 2 % were removed
 * before it; the rest exist in every scan. Decided by the key alone, so it is stable.
 */
export function lifeOf(ctx: Ctx, key: string, newShare = 0.04, goneShare = 0.02): Life {
  if (ctx.last < 1) return ALWAYS
  const u = unit(`${ctx.def.key}:life:${key}`)
  if (u < newShare) return { since: ctx.last, until: Number.MAX_SAFE_INTEGER }
  if (u < newShare + goneShare) return { since: 0, until: ctx.last - 1 }
  return ALWAYS
}

export const alive = (l: Life, v: number): boolean => l.since <= v && v <= l.until

/** Narrower of two lifecycles (a field lives at most as long as its object). */
export function within(a: Life, b: Life): Life {
  return { since: Math.max(a.since, b.since), until: Math.min(a.until, b.until) }
}

/**
 * A creation time consistent with the lifecycle: records new in the latest scan were created between the
 * previous scan and it; the others before the first scan, after the org was created.
 */
export function createdAt(ctx: Ctx, rng: Rng, life: Life, minMs = ctx.orgCreated): number {
  if (life.since > 0) {
    const lo = ctx.times[life.since - 1] + DAY_MS
    return lo + rng.next() * (ctx.times[life.since] - lo - 3_600_000)
  }
  const lo = Math.max(ctx.orgCreated, minMs)
  const hi = ctx.times[0] - 2 * DAY_MS
  return lo + Math.pow(rng.next(), 0.7) * Math.max(0, hi - lo)
}

/** A last-modified time after `created`, never after the scan of version `v`. */
export function modifiedAt(ctx: Ctx, created: number, u: number, v: number): number {
  const hi = ctx.times[v] - 3_600_000
  return Math.max(created, Math.min(hi, created + u * Math.max(0, ctx.times[ctx.last] - created)))
}

/** Growth of counts: a record count at version v is this share of the latest. */
export function growth(ctx: Ctx, v: number): number {
  return 1 - 0.03 * (ctx.last - v)
}
