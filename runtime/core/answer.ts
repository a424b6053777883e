/**
 * An answer of a read whose records are bytes: read from the database (runtime/core/read.ts), or kept by the response cache
 * (runtime/core/cache/response-cache.ts, whose entries extend it). The records are the JSON PostgreSQL built, as UTF-8
 * (`dataBytes`): REST writes them as they are, and `data` decodes them for a surface that asks for text.
 *
 * A class rather than object literals, so that every answer has one shape and `data` is a getter of the class: a
 * literal with an accessor of its own is built in V8's slow dictionary form (a kept answer took about 1.3 KB of heap
 * that way; docs/adr/0032-cache-segments-and-pinned-bytes.md).
 */
import type { CountPlan, ListPlan } from './plan.ts'

/** The answer of a read (runtime/core/read.ts), as the surfaces render it. */
export type ReadResult = (
  | { kind: 'list'; data: string; count: number; /** records the filter matches */ total: number; hasMore: boolean; plan: ListPlan; /** all rows in one page (no limit/offset) */ unpaged: boolean }
  | { kind: 'one'; data: string }
  /** A grouped count: `total` records the filter matches, in `groups` groups, of which the first `limit` are in `data`. */
  | { kind: 'counts'; data: string; count: number; total: number; groups: number; hasMore: boolean; countPlan: CountPlan }
) & {
  /** Strong entity tag of an org-scoped answer: derived from the scan read and the canonical request. */
  etag?: string
  /**
   * The records' JSON as UTF-8 bytes (answers read from the database or kept by the response cache: runtime/core/answer.ts):
   * REST writes them as they are, between the envelope's head and tail (runtime/core/envelope.ts `renderReadParts`); `data`
   * decodes them.
   */
  dataBytes?: Buffer
  /**
   * Present when `dataBytes` are lent from the response cache: call once they have been written (REST:
   * runtime/core/http/response-done.ts), and exactly once; until then the cache does not reuse them.
   */
  release?: () => void
}

/** What an answer carries besides its records. */
export interface AnswerFields {
  kind: ReadResult['kind']
  count?: number
  hasMore?: boolean
  plan?: ListPlan
  unpaged?: boolean
  /** Records the filter matches (lists, grouped counts); a grouped count's groups and its plan. */
  total?: number
  groups?: number
  countPlan?: CountPlan
  etag?: string
}

export class Answer implements AnswerFields {
  readonly count: number | undefined
  readonly hasMore: boolean | undefined
  readonly plan: ListPlan | undefined
  readonly unpaged: boolean | undefined
  readonly total: number | undefined
  readonly groups: number | undefined
  readonly countPlan: CountPlan | undefined
  etag: string | undefined
  /** Set when the bytes are lent by the response cache (see ReadResult). */
  release: (() => void) | undefined = undefined

  constructor(
    readonly kind: ReadResult['kind'],
    public dataBytes: Buffer,
    fields: Omit<AnswerFields, 'kind'> = {},
  ) {
    this.count = fields.count
    this.hasMore = fields.hasMore
    this.plan = fields.plan
    this.unpaged = fields.unpaged
    this.total = fields.total
    this.groups = fields.groups
    this.countPlan = fields.countPlan
    this.etag = fields.etag
  }

  get data(): string {
    return this.dataBytes.toString('utf8')
  }

  /** As a read's callers take it (the union type of read.ts, which this class implements for either kind). */
  get result(): ReadResult {
    return this as unknown as ReadResult
  }
}

/** An answer's fields without its records, never reading `data` (which would decode them). */
export function answerFields(r: AnswerFields): AnswerFields {
  if (r.kind === 'list') return { kind: 'list', count: r.count, total: r.total, hasMore: r.hasMore, plan: r.plan, unpaged: r.unpaged, etag: r.etag }
  if (r.kind === 'counts') return { kind: 'counts', count: r.count, hasMore: r.hasMore, total: r.total, groups: r.groups, countPlan: r.countPlan, etag: r.etag }
  return { kind: 'one', etag: r.etag }
}
