/** Small helpers shared by the demo generators: timestamps, Salesforce-style ids, labels, scaling. */
import { checksum } from '../runtime/core/org-id.ts'
import { base62 } from './prng.ts'

export const DAY_MS = 86_400_000

/** ISO timestamp without milliseconds: 2026-01-31T10:00:00Z. */
export function iso(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19) + 'Z'
}

/** Calendar date YYYY-MM-DD. */
export function isoDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10)
}

/** An 18-character Salesforce record id: key prefix (3) + pod (2) + counter, plus the case checksum. */
export function sfId(prefix: string, pod: string, n: number): string {
  const id15 = prefix + pod + '0000' + base62(n, 6)
  return id15 + checksum(id15)
}

/** `Warranty_Claim__c` → `Warranty Claim`; `npsp__Batch__c` → `Batch`; `AnnualRevenue` → `Annual Revenue`. */
export function labelOf(apiName: string): string {
  const core = apiName.replace(/^[A-Za-z0-9]+__(?=.+__[a-z]+$)/, '').replace(/__[a-z]+$/, '')
  return core
    .replace(/_/g, ' ')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .replace(/\bId\b$/, 'ID')
    .trim()
}

/** camelCase of words: ['OrderItem', 'Summary'] → orderItemSummary. */
export function camel(words: readonly string[]): string {
  return words.map((w, i) => (i === 0 ? w[0].toLowerCase() + w.slice(1) : w[0].toUpperCase() + w.slice(1))).join('')
}

/** A count scaled by the seed scale, never below `min`. */
export function scaled(base: number, scale: number, min: number): number {
  return Math.max(min, Math.round(base * scale))
}

export function round(x: number, digits = 2): number {
  const p = 10 ** digits
  return Math.round(x * p) / p
}

export function clamp(x: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, x))
}

/** A count with its noun, singular or plural: `1 user`, `1,204 users`. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`
}

/** Sanitises a name for use inside an issue key: `Acme ERP Sync` → `Acme_ERP_Sync`. */
export function keyPart(name: string): string {
  return name.replace(/[^A-Za-z0-9_.]+/g, '_').replace(/^_+|_+$/g, '')
}
