/**
 * Which statements are prepared. A prepared statement is kept by its connection for the connection's whole life
 * (postgres.js has no eviction, and the embedded database's one connection never recycles), so preparing every
 * shape a client can invent would grow memory without bound: one statement per filter, sort and fieldset shape.
 * Fixed shapes — those the registry alone determines (a resource's default list, a single record, the org
 * check) — are always prepared; shapes that depend on a client's filter, sort or fields are prepared only while
 * fewer than `maxVariable` distinct ones have been, and run unprepared after that (parsed each time).
 */
export class PreparedShapes {
  private readonly variable = new Set<string>()

  constructor(readonly maxVariable = 100) {}

  /** Whether to prepare a statement with this text. */
  prepare(text: string, fixed: boolean): boolean {
    if (fixed || this.variable.has(text)) return true
    if (this.variable.size >= this.maxVariable) return false
    this.variable.add(text)
    return true
  }

  /** Distinct client-shaped statements prepared so far (diagnostics, tests). */
  get variableCount(): number {
    return this.variable.size
  }
}
