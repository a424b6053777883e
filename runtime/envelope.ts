/**
 * The body of a read, the same on every surface: `{"data":{…}}` for one record or a singleton, and for a list the
 * envelope `{"data":[…],"meta":{count, hasMore, limit, offset, requestedLimit?},"links":{self, next?, prev?}}`
 * (docs/decisions.md "List envelope"). Links are REST paths relative to the service root. The records' JSON comes
 * from PostgreSQL and is spliced in as is.
 */
import type { ListPlan } from './plan.ts'
import type { ReadResult } from './read.ts'

function links(path: string, qs: string, plan: ListPlan, hasMore: boolean): string {
  const make = (offset: number | null) => {
    const p = new URLSearchParams(qs)
    if (offset === null) return path + (qs ? `?${p.toString()}` : '')
    p.set('offset', String(offset))
    if (plan.requestedLimit !== undefined) p.set('limit', String(plan.limit))
    return `${path}?${p.toString()}`
  }
  const links: Record<string, string> = { self: make(null) }
  if (hasMore) links.next = make(plan.offset + plan.limit)
  if (plan.offset > 0) links.prev = make(Math.max(0, plan.offset - plan.limit))
  return JSON.stringify(links)
}

/** The body of a read; `path` and `qs` are the REST path and query string the links are built from. */
export function renderRead(result: ReadResult, path: string, qs: string): string {
  return `{"data":${result.data}${tail(result, path, qs)}`
}

const HEAD = Buffer.from('{"data":')

/**
 * The same body as `renderRead`, in three parts for a write without copying: the head, the records' JSON as bytes
 * (an answer from the response cache) and the tail.
 */
export function renderReadParts(result: ReadResult & { dataBytes: Buffer }, path: string, qs: string): [Buffer, Buffer, Buffer] {
  return [HEAD, result.dataBytes, Buffer.from(tail(result, path, qs))]
}

/** What follows the records: `}` for one record, the meta and links of a list. */
function tail(result: ReadResult, path: string, qs: string): string {
  if (result.kind === 'one') return '}'
  const { plan } = result
  const meta: Record<string, unknown> = { count: result.count, hasMore: result.hasMore }
  if (!result.unpaged) {
    meta.limit = plan.limit
    meta.offset = plan.offset
    if (plan.requestedLimit !== undefined) meta.requestedLimit = plan.requestedLimit
  }
  return `,"meta":${JSON.stringify(meta)},"links":${links(path, qs, plan, result.hasMore)}}`
}
