/**
 * The response cache of one process (docs/decisions.md "Hot reads"): answers to reads of org-scoped resources,
 * keyed by the scan they read and the request's canonical form. A completed scan never changes, so an entry never
 * goes stale: a new scan has a new id and so new keys, and entries of older scans age out of the LRU. Bounded by
 * the bytes of the records' JSON (plus a per-entry overhead); the least recently used entries are evicted first.
 */
import type { ReadResult } from '../read.ts'

/**
 * An entry: the answer as a hit returns it — the records' JSON held as UTF-8 bytes (half the memory of text), their
 * text decoded only when a surface asks for `data` — one object for every hit (readers do not change it); `use`: when it
 * last moved to the recent end.
 */
interface Entry {
  result: ReadResult
  bytes: number
  use: number
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
  /** Moves to the recent end so far (each insertion and each move counts one). */
  private uses = 0

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
    // Least recently used first: Map keeps insertion order, so a hit moves its entry to the end — unless it already is
    // among the newer half, which eviction reaches only after every older entry (a hot entry is not moved on every hit).
    if (this.uses - e.use > this.entries.size / 2) {
      this.entries.delete(key)
      this.entries.set(key, e)
      e.use = ++this.uses
    }
    this.counts.hits++
    return e.result
  }

  /** Keeps an answer; returns the records' JSON as the bytes it keeps (undefined when the answer is too large to keep). */
  set(key: string, result: ReadResult): Buffer | undefined {
    const body = Buffer.from(result.data, 'utf8')
    const bytes = body.length + 2 * key.length + ENTRY_OVERHEAD
    if (bytes > this.maxBytes / 8) return undefined // one answer never takes more than an eighth of the cache
    const { data: _data, dataBytes: _bytes, ...rest } = result
    const hit = { ...rest, dataBytes: body, get data() { return body.toString('utf8') } } as ReadResult
    const old = this.entries.get(key)
    if (old) {
      this.bytes -= old.bytes
      this.entries.delete(key)
    }
    this.entries.set(key, { result: hit, bytes, use: ++this.uses })
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
