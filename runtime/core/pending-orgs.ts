/**
 * Orgs whose data this process is still writing, after it started serving: the large demo org of a first start,
 * seeded in the background (docs/adr/0175-first-run-under-a-minute.md). A read of such an org, which has no completed
 * scan yet, is answered 503 with a Retry-After and what is going on, rather than as an org never scanned; `/readyz`
 * lists them.
 */
export class PendingOrgs {
  private readonly orgs = new Map<string, string>()

  /** `orgId` (18 characters) is being written; `label` names it in answers and on /readyz. */
  add(orgId: string, label: string): void {
    this.orgs.set(orgId, label)
  }

  delete(orgId: string): void {
    this.orgs.delete(orgId)
  }

  /** The label of `orgId` while it is pending, else undefined. */
  label(orgId: string): string | undefined {
    return this.orgs.get(orgId)
  }

  /** What /readyz says: one line per pending org. */
  describe(): string[] {
    return [...this.orgs.entries()].map(([id, label]) => `${label} (${id}): demo data still being seeded`)
  }
}
