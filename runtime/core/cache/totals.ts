/**
 * How many records a list's filter matches, per org, resource and filter, with the scan it was counted on: a scan never
 * changes, so a total counted once holds for every page of that filter until the org gets a new scan. A list then
 * counts only when it has no total for the org's current scan (runtime/core/statements.ts counts in the same statement,
 * and only then). Bounded: past `max` entries the oldest go.
 */
export interface KnownTotal {
  scanId: string
  total: number
}

export class TotalCache {
  private readonly entries = new Map<string, KnownTotal>()

  constructor(private readonly max = 20_000) {}

  get(key: string): KnownTotal | undefined {
    return this.entries.get(key)
  }

  set(key: string, value: KnownTotal): void {
    this.entries.delete(key)
    this.entries.set(key, value)
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!)
  }

  get size(): number {
    return this.entries.size
  }
}
