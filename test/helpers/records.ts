/** Helpers to check list responses against a declaration: ordering, filter literals, comparisons. */
import type { FieldSpec } from '../../runtime/core/fields.ts'

/**
 * Compares two wire values of a field kind; nulls sort below every value
 * (docs/adr/0002-strict-parameters-ids-and-ordering.md).
 */
export function compare(a: unknown, b: unknown): number {
  if (a === b) return 0
  if (a === null || a === undefined) return -1
  if (b === null || b === undefined) return 1
  if (typeof a === 'number' && typeof b === 'number') return a - b
  if (typeof a === 'boolean' && typeof b === 'boolean') return (a ? 1 : 0) - (b ? 1 : 0)
  const sa = String(a)
  const sb = String(b)
  return sa < sb ? -1 : sa > sb ? 1 : 0
}

/** True when rows are ordered by the sort keys (ties allowed). */
export function isSorted(rows: Record<string, unknown>[], keys: { field: string; desc: boolean }[]): boolean {
  for (let i = 1; i < rows.length; i++) {
    for (const k of keys) {
      const c = compare(rows[i - 1][k.field], rows[i][k.field]) * (k.desc ? -1 : 1)
      if (c < 0) break
      if (c > 0) return false
    }
  }
  return true
}

/** An RQL literal for a wire value of a field. */
export function literal(spec: FieldSpec, value: unknown): string {
  if (value === null) return 'null'
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  return `'${String(value).replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`
}

export function parseSortString(s: string): { field: string; desc: boolean }[] {
  return s.split(',').map((p) => (p.startsWith('-') ? { field: p.slice(1), desc: true } : { field: p, desc: false }))
}
