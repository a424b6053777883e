/**
 * The response cache of one process (docs/adr/0031-response-cache-keyed-by-scan.md): answers to reads of org-scoped
 * resources, keyed by the scan they read and the request's canonical form. A completed scan never changes, so an entry
 * never goes stale: a new scan has a new id and so new keys, and entries of older scans age out.
 *
 * Storage is slabs, not one allocation per answer (docs/adr/0032-cache-segments-and-pinned-bytes.md): the records' JSON
 * is written into segments of up to 4 MB (a sixteenth of the bound), allocated once and reused for the life of the
 * process. Answers freed one by one among the requests' own short-lived allocations of the same sizes left the C heap
 * fragmented, so the process held about 2.5× the bound; segments are allocated once and never freed. The bound counts
 * each answer's records plus its index (its key and an estimated overhead, which live in V8's heap), and a segment
 * holds only the records, one after the other, so what the bound counts for the index is a segment's never-written end:
 * the records and the index together take the bound, not the bound plus the index. Eviction empties the oldest segment
 * whole; an answer read while it sits in the older half of the segments is copied forward into the newest, so what is
 * read keeps its place (least recently used first, a segment at a time).
 *
 * Bytes are lent, not copied: an answer for REST is a view into its segment, which REST writes as it is. A segment is
 * overwritten once reused, so a lent answer pins its segment until `release()` (REST: once the socket has taken
 * every byte, runtime/core/http/response-done.ts); eviction passes over pinned segments, and when every segment is pinned a
 * new answer is simply not kept. An answer for any other surface is decoded to text at once and pins nothing.
 */
import { Answer, answerFields, type AnswerFields, type ReadResult } from '../answer.ts'

export interface ResponseCacheStats {
  hits: number
  misses: number
  evictions: number
  entries: number
  /** What the held answers take of the bound: their bytes plus a per-entry overhead. */
  bytes: number
  maxBytes: number
  /** Memory of the segments allocated so far (never more than maxBytes). */
  segmentBytes: number
  /**
   * Bytes of the segments ever written: their resident memory. The records are written one after the other, and
   * what the bound counts for an entry's index (its key and overhead, held in V8's heap) is left unwritten at a
   * segment's end, so the records and the index together stay within the bound.
   */
  segmentBytesWritten: number
  /** Segments that answers being written pin now. */
  pinnedSegments: number
}

/** Records lent from the cache: valid until `release()`, which must be called exactly once. */
export interface Lent {
  dataBytes: Buffer
  release: () => void
}

/**
 * What an entry costs of V8's heap besides its JSON and its key (counted at two bytes a character): the entry object
 * with its view of the segment and its release function, the plan and the entity tag it keeps, the map's bookkeeping.
 * Measured over 10,000 entries of the fields list (heap used after full collections; test/runtime/response-cache.test.ts
 * checks it): about 1.4 KB an entry, of which the entry object about 520 bytes, the plan about 300, the tag about 240
 * (a concatenation of its quotes and the hash, as V8 keeps one). Counted with some margin, so that the records and
 * the index together stay within the bound.
 */
export const ENTRY_OVERHEAD = 1536
/** Segment size: a sixteenth of the bound, between these two (and never more than the bound). */
const SEGMENT_MIN = 64 * 1024
const SEGMENT_MAX = 4 * 1024 * 1024

interface Segment {
  buf: Buffer
  /** Bytes of the bound used so far (answers and their overheads). */
  used: number
  /** Where the next answer's records go: records are written one after the other, without their overheads. */
  written: number
  /** The most bytes ever written to this segment (pages past it were never touched, so are not resident). */
  touched: number
  /** Keys written here; an entry moved forward or replaced no longer points here and is skipped at eviction. */
  keys: string[]
  /** Order of (re)use: higher is newer; changes whenever the segment is reused. */
  seq: number
  /** Lent answers not yet released. */
  pins: number
}

/**
 * A kept answer, in one object: the answer as REST gets it (its records as a view into the segment, `release()`
 * unpinning it) and the cache's bookkeeping (docs/adr/0032-cache-segments-and-pinned-bytes.md: as three objects and a
 * closure an answer's index took about 1.3 KB of V8's heap).
 */
class Entry extends Answer {
  /** The segment's use the bytes belong to (a reused segment has a new `seq`). */
  private readonly seq: number

  constructor(fields: AnswerFields, readonly seg: Segment, off: number, len: number, readonly cost: number) {
    super(fields.kind, seg.buf.subarray(off, off + len), fields)
    this.seq = seg.seq
    // Detachable: REST hands it to the response's end.
    this.release = () => {
      seg.pins--
    }
  }

  /** The text, for a surface that asks for it while the answer is lent (the bytes are then still the entry's). */
  override get data(): string {
    if (this.seg.seq !== this.seq) throw new Error('a cached answer was read after its segment was reused (released too early)')
    return this.dataBytes.toString('utf8')
  }
}

export class ResponseCache {
  private readonly entries = new Map<string, Entry>()
  private readonly counts = { hits: 0, misses: 0, evictions: 0 }
  private readonly segmentSize: number
  private readonly maxSegments: number
  /** Segments holding answers, oldest first; the last is the one written to. */
  private readonly live: Segment[] = []
  private allocated = 0
  private seq = 0
  private bytes = 0

  /** `maxBytes` 0 disables the cache (every lookup misses, nothing is stored). */
  constructor(readonly maxBytes: number) {
    this.segmentSize = Math.min(maxBytes, Math.max(SEGMENT_MIN, Math.min(SEGMENT_MAX, Math.floor(maxBytes / 16))))
    this.maxSegments = this.segmentSize > 0 ? Math.floor(maxBytes / this.segmentSize) : 0
  }

  get enabled(): boolean {
    return this.maxBytes > 0
  }

  /**
   * The answer kept under `key`. `lend`: its records as bytes lent from the cache (`dataBytes`, valid until the
   * answer's `release()`, which the caller must call once); otherwise decoded to `data` now, with nothing to release.
   */
  get(key: string, lend: boolean): ReadResult | undefined {
    let e = this.entries.get(key)
    if (!e) {
      this.counts.misses++
      return undefined
    }
    this.counts.hits++
    // Read while among the older half of the segments: written again into the newest, so eviction reaches it last.
    if (this.live.length > 1 && this.seq - e.seg.seq >= this.live.length / 2) {
      // Pinned while copied, so the segment read from is not the one reused for the copy.
      const from = e
      from.seg.pins++
      e = this.place(key, from, from.dataBytes) ?? from
      from.seg.pins--
    }
    if (!lend) return { ...answerFields(e), data: e.dataBytes.toString('utf8') } as ReadResult
    e.seg.pins++
    return e.result as ReadResult & Lent
  }

  /**
   * Keeps an answer. `lend`: returns its records as bytes lent from the cache (release them once written); otherwise
   * nothing. Undefined also when the answer is too large to keep, or every segment is pinned.
   */
  set(key: string, result: ReadResult, lend: boolean): Lent | undefined {
    // The records as bytes when the answer has them (read from the database), else its text.
    const e = this.place(key, result, result.dataBytes ?? result.data)
    if (!e || !lend) return undefined
    e.seg.pins++
    return e.result as ReadResult & Lent
  }

  /** Writes an answer's records into the newest segment (starting a segment when it is full) and indexes it. */
  private place(key: string, fields: AnswerFields, data: string | Buffer): Entry | undefined {
    const len = typeof data === 'string' ? Buffer.byteLength(data, 'utf8') : data.length
    const cost = len + 2 * key.length + ENTRY_OVERHEAD
    if (cost > this.segmentSize) return undefined
    let seg = this.live.at(-1)
    if (!seg || seg.used + cost > this.segmentSize) seg = this.nextSegment()
    if (!seg) return undefined
    const off = seg.written
    if (typeof data === 'string') seg.buf.write(data, off, len, 'utf8')
    else data.copy(seg.buf, off)
    seg.used += cost
    seg.written += len
    if (seg.written > seg.touched) seg.touched = seg.written
    seg.keys.push(key)
    const old = this.entries.get(key)
    if (old) this.bytes -= old.cost
    const e = new Entry(fields, seg, off, len, cost)
    this.entries.set(key, e)
    this.bytes += cost
    return e
  }

  /**
   * A segment to write to: a new one while the bound allows, else the oldest that no answer being written pins, its
   * answers evicted; undefined when every segment is pinned.
   */
  private nextSegment(): Segment | undefined {
    let seg: Segment
    if (this.allocated < this.maxSegments) {
      // allocUnsafeSlow: a buffer of its own (never a slice of Node's shared pool), allocated once, kept for good.
      // Its pages become resident as they are first written (a fresh mapping), so the part of the bound that the index
      // takes is never touched.
      seg = { buf: Buffer.allocUnsafeSlow(this.segmentSize), used: 0, written: 0, touched: 0, keys: [], seq: 0, pins: 0 }
      this.allocated++
    } else {
      const i = this.live.findIndex((s) => s.pins === 0)
      if (i < 0) return undefined
      seg = this.live.splice(i, 1)[0]
      for (const k of seg.keys) {
        const e = this.entries.get(k)
        if (e?.seg !== seg) continue
        this.entries.delete(k)
        this.bytes -= e.cost
        this.counts.evictions++
      }
      seg.used = 0
      seg.written = 0
      seg.keys = []
    }
    seg.seq = ++this.seq
    this.live.push(seg)
    return seg
  }

  stats(): ResponseCacheStats {
    return {
      ...this.counts,
      entries: this.entries.size,
      bytes: this.bytes,
      maxBytes: this.maxBytes,
      segmentBytes: this.allocated * this.segmentSize,
      segmentBytesWritten: this.live.reduce((n, s) => n + s.touched, 0),
      pinnedSegments: this.live.filter((s) => s.pins > 0).length,
    }
  }

  /** Forgets every answer; the segments are reused as they come round, as after eviction (lent bytes stay until released). */
  clear(): void {
    this.entries.clear()
    this.bytes = 0
  }
}
