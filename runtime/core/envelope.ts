/**
 * The body of a read, the same on every surface: `{"data":{…}}` for one record or a singleton, and for a list the
 * envelope `{"data":[…],"meta":{count, total, hasMore, limit, offset, requestedLimit?},"links":{self, next?, prev?}}`, and for a
 * grouped count `{"data":[…],"meta":{total, groups, limit, hasMore, requestedLimit?}}`
 * (docs/adr/0001-list-envelope-and-paging-links.md). Links are REST paths relative to the service root. The records'
 * JSON comes from PostgreSQL and is spliced in as is.
 */
import type { ListPlan } from './plan.ts'
import type { ReadResult } from './read.ts'
import { queryPair } from './query-string.ts'

/** The name of a query pair as sent (`name=value`), decoded; the raw pair when it does not decode. */
function pairName(pair: string): string {
  const raw = pair.split('=', 1)[0].replace(/\+/g, ' ')
  try {
    return decodeURIComponent(raw)
  } catch {
    return raw
  }
}

/**
 * The links keep the caller's query string as it was sent (an MCP call's is written by runtime/core/query-string.ts)
 * and change only `offset` (and `limit` when it was clamped, or for a `prev` shorter than a page), in place: a link is never longer than the request by more than those digits, so following it stays within the URL
 * limit that the request itself met, however the filter was encoded.
 */
function links(path: string, qs: string, plan: ListPlan, hasMore: boolean): string {
  const pairs = qs === '' ? [] : qs.split('&').filter((p) => p !== '')
  const make = (offset: number | null, limit?: number) => {
    if (offset === null) return pairs.length ? `${path}?${pairs.join('&')}` : path
    const set: Record<string, string> = { offset: queryPair('offset', String(offset)) }
    if (limit !== undefined) set.limit = queryPair('limit', String(limit))
    else if (plan.requestedLimit !== undefined) set.limit = queryPair('limit', String(plan.limit))
    const out = pairs.map((p) => {
      const name = pairName(p)
      if (!(name in set)) return p
      const own = set[name]
      delete set[name]
      return own
    })
    return `${path}?${[...out, ...Object.values(set)].join('&')}`
  }
  const links: Record<string, string> = { self: make(null) }
  if (hasMore) links.next = make(plan.offset + plan.limit)
  // The page just before this one: when fewer records than a page precede it, exactly those (a shorter page), never
  // records this page already holds.
  if (plan.offset > 0) links.prev = plan.offset >= plan.limit ? make(plan.offset - plan.limit) : make(0, plan.offset)
  return JSON.stringify(links)
}

/** The body of a read; `path` and `qs` are the REST path and query string the links are built from. */
export function renderRead(result: ReadResult, path: string, qs: string): string {
  return `{"data":${result.data}${renderTail(result, path, qs)}`
}

const HEAD = Buffer.from('{"data":')
const CLOSE = Buffer.from('}')

/**
 * The tail last rendered for a cached answer, by its plan: the response cache keeps one plan object per answer (and
 * with it the answer's count and hasMore), so a repeated request with the same path and query string reuses the bytes.
 * Rendering the links (two URLSearchParams) and the meta was about 4 % of a cache hit's CPU in a profile here.
 */
const tails = new WeakMap<object, { path: string; qs: string; tail: Buffer }>()

/**
 * The same body as `renderRead`, in three parts for a write without copying: the head, the records' JSON as bytes
 * (an answer from the response cache) and the tail.
 */
export function renderReadParts(result: ReadResult & { dataBytes: Buffer }, path: string, qs: string): [Buffer, Buffer, Buffer] {
  if (result.kind === 'one') return [HEAD, result.dataBytes, CLOSE]
  const plan = result.kind === 'list' ? result.plan : result.countPlan
  const last = tails.get(plan)
  if (last !== undefined && last.path === path && last.qs === qs) return [HEAD, result.dataBytes, last.tail]
  const tail = Buffer.from(renderTail(result, path, qs))
  tails.set(plan, { path, qs, tail })
  return [HEAD, result.dataBytes, tail]
}

/** What follows the records: `}` for one record, the meta and links of a list, the meta of a grouped count. */
function renderTail(result: ReadResult, path: string, qs: string): string {
  if (result.kind === 'one') return '}'
  if (result.kind === 'counts') {
    const { countPlan: plan } = result
    const meta: Record<string, unknown> = { total: result.total, groups: result.groups, limit: plan.limit, hasMore: result.hasMore }
    if (plan.requestedLimit !== undefined) meta.requestedLimit = plan.requestedLimit
    return `,"meta":${JSON.stringify(meta)}}`
  }
  const { plan } = result
  const meta: Record<string, unknown> = { count: result.count, total: result.total, hasMore: result.hasMore }
  if (!result.unpaged) {
    meta.limit = plan.limit
    meta.offset = plan.offset
    if (plan.requestedLimit !== undefined) meta.requestedLimit = plan.requestedLimit
  }
  return `,"meta":${JSON.stringify(meta)},"links":${links(path, qs, plan, result.hasMore)}}`
}
