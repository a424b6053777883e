/**
 * The deterministic demo data seed (`orgscan seed`, first start of an empty embedded database, tests):
 * accounts "Acme Corp" and "Globex", six orgs (one large, one sandbox, one never scanned, one whose latest scan
 * failed), two or three scans per scanned org imported through `importScan`, and one user of Acme Corp with
 * access to two of its orgs. The same scale always yields the same data; nothing depends on the clock.
 */
import type postgres from 'postgres'
import { createAccount, createUser, grantOrgAccess } from '../runtime/platform/admin.ts'
import { importScan, stageScan, vacuumStaged, type StagedScan } from '../runtime/platform/import.ts'
import type { CompiledResource } from '../runtime/core/registry.ts'
import { clearModels, demoBundle } from './bundle.ts'
import { DEFAULT_NOW, DEMO_ACCOUNTS, DEMO_ORG_DEFS, DEMO_USER, orgInfo, type DemoOrgDef } from './orgs.ts'

export { demoBundle, orgModel, renderScan } from './bundle.ts'
export { DEFAULT_NOW, DEMO_ACCOUNTS, DEMO_ORG_DEFS, DEMO_ORGS, DEMO_USER, sizesAt } from './orgs.ts'
export type { DemoOrgDef, DemoScanDef, OrgSize } from './orgs.ts'

export interface SeedOptions {
  /** 1 = full size (default: the large org has 20,000+ fields); e.g. 0.02 for tests. Minimums keep a few rows of everything. */
  scale?: number
  /** Receives one line per org and scan. */
  progress?: (line: string) => void
  /** Reference date of the generated timestamps (default 2026-11-01T00:00:00Z); never the real clock. */
  now?: Date
  /**
   * Leave the large org's scans to `seedDeferred` (the first start of `orgscan serve`): its org row and grants are
   * written, and a setting that names what is left, so that a start finds it until it is done.
   */
  defer?: boolean
}

/** What a seed with `defer` left for `seedDeferred`: the large org's scans, at the seed's scale. */
export interface DeferredSeed {
  orgId: string
  name: string
  accountId: string
  scale: number
}

export interface SeedResult {
  accounts: Array<{ id: string; name: string; orgs: string[] }>
  orgs: Array<{ salesforceId: string; name: string; accountId: string; scans: number; large: boolean }>
  users: Array<{ id: string; email: string; accountId: string; orgs: string[] }>
  /** With `defer`: what is left for `seedDeferred`. */
  deferred?: DeferredSeed
}

/** Creates the org row of an org that was connected but never scanned (no scan row at all). */
async function insertUnscannedOrg(sql: postgres.TransactionSql, def: DemoOrgDef, accountId: string): Promise<void> {
  const o = orgInfo(def)
  const row = {
    salesforce_id: o.salesforceId, account_id: accountId, name: o.name, edition: o.edition, instance_url: o.instanceUrl,
    is_sandbox: o.isSandbox, organization_type: o.organizationType, instance_name: o.instanceName, namespace_prefix: o.namespacePrefix,
    country: o.country, locale: o.locale, time_zone: o.timeZone, created_date: o.createdDate,
  }
  await sql`INSERT INTO orgs ${sql(row)}`
}

const fmt = (n: number) => n.toLocaleString('en-US')

/**
 * Fills an empty database with the demo tenancy and scans, in one transaction: a seed that is interrupted (a killed
 * process, a full disk) leaves the database as empty as it found it, never a part of the demo.
 */
export async function seedDemo(sql: postgres.Sql, resources: readonly CompiledResource[], opts: SeedOptions = {}): Promise<SeedResult> {
  const seeded = await sql.begin((tx) => seedDemoIn(tx, resources, opts))
  await vacuumSeeded(sql)
  return seeded
}

/**
 * VACUUMs the database once a seed has committed: its imports ran inside the seed's transaction, where they cannot
 * vacuum the tables they filled (runtime/platform/bundle/import-bundle.ts `vacuumLarge`), and the embedded database never
 * vacuums by itself; without it a deep page of a list visits every row it skips.
 */
export async function vacuumSeeded(sql: postgres.Sql): Promise<void> {
  await sql`VACUUM`
}

/** `seedDemo` inside the caller's transaction, for a caller that writes more in it (the first start's demo key). */
export async function seedDemoIn(sql: postgres.TransactionSql, resources: readonly CompiledResource[], opts: SeedOptions = {}): Promise<SeedResult> {
  const scale = opts.scale ?? 1
  if (!(scale > 0) || !Number.isFinite(scale)) throw new RangeError(`seed scale must be a positive number, got ${scale}`)
  const now = opts.now ?? DEFAULT_NOW
  const progress = opts.progress ?? (() => undefined)
  const result: SeedResult = { accounts: [], orgs: [], users: [] }
  const accountIds: Record<string, string> = {}
  for (const [key, a] of Object.entries(DEMO_ACCOUNTS)) {
    const acc = await createAccount(sql, a)
    accountIds[key] = acc.id
    result.accounts.push({ id: acc.id, name: acc.name, orgs: [] })
  }
  try {
    for (const def of DEMO_ORG_DEFS) {
      const accountId = accountIds[def.account]
      const label = `${def.info.name} (${def.salesforceId})`
      const deferred = opts.defer === true && def.large && def.scans.length > 0
      if (def.scans.length === 0 || deferred) {
        await insertUnscannedOrg(sql, def, accountId)
        progress(deferred ? `seeding ${label}: its ${def.scans.length} scans later, in the background` : `seeding ${label}: connected, never scanned`)
      }
      if (deferred) {
        result.deferred = { orgId: def.salesforceId, name: def.info.name, accountId, scale }
        await sql`INSERT INTO server_settings (name, value) VALUES (${DEFERRED_SETTING}, ${JSON.stringify(result.deferred)})`
      }
      for (let i = 0; i < (deferred ? 0 : def.scans.length); i++) {
        const t0 = Date.now()
        const bundle = demoBundle(def, i, { scale, now, resources })
        const fields = Array.isArray(bundle.data.fields) ? bundle.data.fields.length : 0
        const issues = Array.isArray(bundle.data.issues) ? bundle.data.issues.length : 0
        await importScan(sql, resources, accountId, bundle, (line) => progress(`  ${line.trim()}`))
        const what = bundle.scan.status === 'completed' ? `${fmt(fields)} fields, ${fmt(issues)} issues` : `${bundle.scan.status}, no data`
        progress(`seeding ${label}: scan ${i + 1}/${def.scans.length}, ${what} (${((Date.now() - t0) / 1000).toFixed(1)} s)`)
      }
      clearModels()
      result.orgs.push({ salesforceId: def.salesforceId, name: def.info.name, accountId, scans: def.scans.length, large: def.large })
      result.accounts.find((a) => a.id === accountId)!.orgs.push(def.salesforceId)
    }
  } finally {
    clearModels()
  }
  const user = await createUser(sql, accountIds.acme, { email: DEMO_USER.email, name: DEMO_USER.name })
  for (const org of DEMO_USER.orgs) await grantOrgAccess(sql, user.id, org)
  result.users.push({ id: user.id, email: DEMO_USER.email, accountId: accountIds.acme, orgs: [...DEMO_USER.orgs] })
  progress(`seeded ${result.accounts.length} accounts, ${result.orgs.length} orgs, user ${DEMO_USER.email} (${DEMO_USER.orgs.length} orgs)`)
  return result
}

/** The setting that names a deferred part of the first start's seed while it is not done. */
const DEFERRED_SETTING = 'demo_deferred_seed'

/** The part of the first start's seed still to do, if any. */
export async function deferredSeed(sql: postgres.Sql): Promise<DeferredSeed | undefined> {
  const [row] = await sql<{ value: string }[]>`SELECT value FROM server_settings WHERE name = ${DEFERRED_SETTING}`
  return row ? (JSON.parse(row.value) as DeferredSeed) : undefined
}

/** `seedDeferred` was asked to stop (the server is stopping): what it staged stays unpublished, for the next start. */
export class SeedStopped extends Error {
  constructor() {
    super('stopped before it was done')
    this.name = 'SeedStopped'
  }
}

/**
 * The large org's scans a first start left (`SeedOptions.defer`), written while the server already serves: each scan
 * is staged in short statements (runtime/platform/import.ts `stageScan`), so requests are answered between them on
 * the embedded database's one connection, then all are published, and the setting removed, in ONE transaction. Until
 * then the org has no completed scan; a start after an interruption (a kill, `signal` aborted) finds the setting, deletes
 * what was staged and does it again (docs/adr/0175-first-run-under-a-minute.md). Resolves with the records written.
 */
export async function seedDeferred(
  sql: postgres.Sql,
  resources: readonly CompiledResource[],
  deferred: DeferredSeed,
  opts: { now?: Date; progress?: (line: string) => void; signal?: AbortSignal } = {},
): Promise<number> {
  const def = DEMO_ORG_DEFS.find((d) => d.salesforceId === deferred.orgId)
  if (!def) throw new Error(`no demo org ${deferred.orgId}`)
  const stopped = () => opts.signal?.aborted === true
  const progress = opts.progress ?? (() => undefined)
  // What an interrupted attempt staged: nothing of this org was published (that would have removed the setting).
  const [left] = await sql<{ n: number }[]>`WITH gone AS (DELETE FROM scans WHERE org_id = ${def.salesforceId} RETURNING 1) SELECT count(*)::int AS n FROM gone`
  if (left.n > 0) {
    progress(`removed the ${left.n} unpublished scans an interrupted start had staged`)
    await sql`VACUUM`
  }
  const staged: StagedScan[] = []
  try {
    for (let i = 0; i < def.scans.length; i++) {
      if (stopped()) throw new SeedStopped()
      const t0 = Date.now()
      const bundle = demoBundle(def, i, { scale: deferred.scale, now: opts.now ?? DEFAULT_NOW, resources })
      staged.push(await stageScan(sql, resources, deferred.accountId, bundle, opts.signal))
      const fields = Array.isArray(bundle.data.fields) ? bundle.data.fields.length : 0
      progress(`staged ${def.info.name}: scan ${i + 1}/${def.scans.length}, ${fmt(fields)} fields (${((Date.now() - t0) / 1000).toFixed(1)} s)`)
    }
  } finally {
    clearModels()
  }
  if (stopped()) throw new SeedStopped()
  await sql.begin(async (tx) => {
    for (const s of staged) await s.publish(tx)
    await tx`DELETE FROM server_settings WHERE name = ${DEFERRED_SETTING}`
  })
  const counts: Record<string, number> = {}
  for (const s of staged) for (const [k, n] of Object.entries(s.counts)) counts[k] = (counts[k] ?? 0) + n
  await vacuumStaged(sql, resources, counts)
  return Object.values(counts).reduce((a, b) => a + b, 0)
}
