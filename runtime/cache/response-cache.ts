/**
 * The response cache of one process (docs/decisions.md "Hot reads"): answers to reads of org-scoped resources,
 * keyed by the scan they read and the request's canonical form. A completed scan never changes, so an entry never
 * goes stale: a new scan has a new id and so new keys, and entries of older scans age out of the LRU. Bounded by
 * the bytes of the records' JSON (plus a per-entry overhead); the least recently used entries are evicted first.
 */
import type { ReadResult } from '../read.ts'

/** An entry: the answer without its records' text, and the records' JSON as UTF-8 bytes (half the memory of text). */
interface Entry {
  result: Omit<ReadResult, 'data' | 'dataBytes'>
  body: Buffer
  bytes: number
}

export interface ResponseCacheStats {
  hits: number
  misses: number
  evictions: number
  entries: number
  bytes: number
  maxBytes: number
}

/** What an entry costs besides its JSON: the key, the plan object and the map's own bookkeeping (estimated). */
const ENTRY_OVERHEAD = 512

export class ResponseCache {
  private readonly entries = new Map<string, Entry>()
  private readonly counts = { hits: 0, misses: 0, evictions: 0 }
  private bytes = 0

  /** `maxBytes` 0 disables the cache (every lookup misses, nothing is stored). */
  constructor(readonly maxBytes: number) {}

  get enabled(): boolean {
    return this.maxBytes > 0
  }

  get(key: string): ReadResult | undefined {
    const e = this.entries.get(key)
    if (!e) {
      this.counts.misses++
      return undefined
    }
    // Most recently used last: Map keeps insertion order.
    this.entries.delete(key)
    this.entries.set(key, e)
    this.counts.hits++
    const body = e.body
    return { ...e.result, dataBytes: body, get data() { return body.toString('utf8') } } as ReadResult
  }

  /** Keeps an answer; returns the records' JSON as the bytes it keeps (undefined when the answer is too large to keep). */
  set(key: string, result: ReadResult): Buffer | undefined {
    const body = Buffer.from(result.data, 'utf8')
    const bytes = body.length + 2 * key.length + ENTRY_OVERHEAD
    if (bytes > this.maxBytes / 8) return undefined // one answer never takes more than an eighth of the cache
    const { data: _data, dataBytes: _bytes, ...rest } = result
    const old = this.entries.get(key)
    if (old) {
      this.bytes -= old.bytes
      this.entries.delete(key)
    }
    this.entries.set(key, { result: rest, body, bytes })
    this.bytes += bytes
    for (const [k, e] of this.entries) {
      if (this.bytes <= this.maxBytes) break
      this.entries.delete(k)
      this.bytes -= e.bytes
      this.counts.evictions++
    }
    return body
  }

  stats(): ResponseCacheStats {
    return { ...this.counts, entries: this.entries.size, bytes: this.bytes, maxBytes: this.maxBytes }
  }

  clear(): void {
    this.entries.clear()
    this.bytes = 0
  }
}
