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
import type { ReadResult } from './read.ts'

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
