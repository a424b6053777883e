/**
 * Deterministic pseudo-random numbers for the demo seed: mulberry32 seeded from a string hash, so the same
 * seed string always yields the same sequence (no Math.random, no clock).
 */

/** 32-bit FNV-1a hash of a string. */
export function hash32(s: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}

/** A stable value in [0, 1) for a key: decisions that must not depend on generation order. */
export function unit(key: string): number {
  let a = hash32(key)
  a = (a + 0x6d2b79f5) | 0
  let t = Math.imul(a ^ (a >>> 15), 1 | a)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

export class Rng {
  private state: number

  constructor(seed: string | number) {
    this.state = typeof seed === 'number' ? seed >>> 0 : hash32(seed)
  }

  /** A child generator whose sequence depends only on this seed path, not on how much the parent was used. */
  static of(...parts: Array<string | number>): Rng {
    return new Rng(parts.join('/'))
  }

  /** mulberry32: a float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) | 0
    let t = this.state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }

  /** Integer in [min, max], both inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1))
  }

  /** Float in [min, max). */
  float(min: number, max: number): number {
    return min + this.next() * (max - min)
  }

  chance(p: number): boolean {
    return this.next() < p
  }

  pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.next() * list.length)]
  }

  /** Picks by weight from [value, weight] pairs. */
  weighted<T>(pairs: ReadonlyArray<readonly [T, number]>): T {
    let total = 0
    for (const [, w] of pairs) total += w
    let r = this.next() * total
    for (const [v, w] of pairs) {
      r -= w
      if (r < 0) return v
    }
    return pairs[pairs.length - 1][0]
  }

  /** `n` distinct elements, in random order. */
  sample<T>(list: readonly T[], n: number): T[] {
    const copy = [...list]
    const k = Math.min(n, copy.length)
    for (let i = 0; i < k; i++) {
      const j = i + Math.floor(this.next() * (copy.length - i))
      const tmp = copy[i]
      copy[i] = copy[j]
      copy[j] = tmp
    }
    return copy.slice(0, k)
  }

  /** `n` distinct names from `pool` in random order; past the pool's size, numbered variants (`Region_Plan_2`). */
  names(pool: readonly string[], n: number, sep = '_'): string[] {
    const out = this.sample(pool, n)
    for (let i = out.length; i < n; i++) out.push(`${out[i % pool.length]}${sep}${Math.floor(i / pool.length) + 1}`)
    return out
  }

  /** Log-uniform integer in [min, max]: many small values, a few large ones. */
  logInt(min: number, max: number): number {
    const lo = Math.log(Math.max(1, min))
    const hi = Math.log(Math.max(1, max))
    return Math.min(max, Math.max(min, Math.round(Math.exp(lo + this.next() * (hi - lo)))))
  }
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** `n` rendered in base 62, left-padded with zeros to `width`. */
export function base62(n: number, width: number): string {
  let s = ''
  let x = Math.floor(n)
  while (x > 0) {
    s = BASE62[x % 62] + s
    x = Math.floor(x / 62)
  }
  return s.padStart(width, '0')
}
