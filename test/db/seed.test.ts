/**
 * The demo seed against a real database (a fresh PostgreSQL database when TEST_DATABASE_URL is set, else
 * embedded PGlite): tenancy, scan history, referential consistency, realism rules and determinism.
 */
import { t } from '../helpers/file-test.ts'
import type postgres from 'postgres'
import { registry } from '../../resources/index.ts'
import { ISSUE_CATEGORIES } from '../../resources/issues.ts'
import { DEMO_ORGS, DEMO_USER, demoBundle, DEMO_ORG_DEFS, seedDemo, type SeedResult } from '../../demo/seed.ts'
import { openDatabase } from '../../runtime/platform/db/connect.ts'
import { migrate } from '../../runtime/platform/db/migrate.ts'
import { importTargets } from '../../runtime/platform/import.ts'
import { normalizeOrgId } from '../../runtime/core/org-id.ts'
import { compileRegistry } from '../../runtime/core/registry.ts'
import { createTestDatabase } from '../helpers/test-db.ts'

const SCALE = 0.02
const resources = compileRegistry(registry)
const dataTables = importTargets(resources).map((c) => c.decl.table)
const allTables = ['accounts', 'users', 'user_org_access', 'orgs', 'scans', ...dataTables]

interface Snapshot {
  counts: Record<string, number>
  issueKeys: Record<string, string[]>
  fieldsDigest: string
}

/** A fresh database (a copy of the run's migrated template), seeded here; `fn` runs against it, then it is dropped. */
async function withSeeded<T>(fn: (sql: postgres.Sql, seed: SeedResult, lines: string[]) => Promise<T>): Promise<T> {
  const tdb = await createTestDatabase({ template: 'empty' })
  const db = await openDatabase({ databaseUrl: tdb.databaseUrl, dataDir: tdb.dataDir })
  try {
    await migrate(db.sql)
    const lines: string[] = []
    const seed = await seedDemo(db.sql, resources, { scale: SCALE, progress: (l) => lines.push(l) })
    return await fn(db.sql, seed, lines)
  } finally {
    await db.close()
    await tdb.drop()
  }
}

async function snapshot(sql: postgres.Sql): Promise<Snapshot> {
  const counts: Record<string, number> = {}
  for (const table of allTables) counts[table] = Number((await sql`SELECT count(*)::int AS n FROM ${sql(table)}`)[0].n)
  const issueKeys: Record<string, string[]> = {}
  const rows = await sql`SELECT o.salesforce_id, i.issue_key FROM issues i JOIN scans s ON s.id = i.scan_id JOIN orgs o ON o.salesforce_id = s.org_id
    WHERE s.id = o.latest_scan_id ORDER BY 1, 2`
  for (const r of rows) (issueKeys[r.salesforce_id] ??= []).push(r.issue_key)
  const [d] = await sql`SELECT md5(string_agg(concat_ws('|', s.org_id, f.id, f.sobject_id, f.api_name, f.percent_populated, f.created_date), ',' ORDER BY s.org_id, s.id, f.id)) AS digest
    FROM fields f JOIN scans s ON s.id = f.scan_id`
  return { counts, issueKeys, fieldsDigest: d.digest }
}

let first: Snapshot | undefined

t.test('demo seed: tenancy, scan history and consistency', async (t) => {
  await withSeeded(async (sql, seed, lines) => {
    first = await snapshot(sql)
    // Tenancy.
    t.same(seed.accounts.map((a) => a.name), ['Acme Corp', 'Globex'])
    const accounts = await sql`SELECT id::text AS id, name, daily_limit, monthly_limit FROM accounts ORDER BY id`
    t.equal(accounts.length, 2)
    for (const a of accounts) t.match(a, { daily_limit: 10_000, monthly_limit: 200_000 })
    const orgs = await sql`SELECT salesforce_id, account_id::text AS account_id, name, is_sandbox, instance_url, latest_scan_id::text AS latest,
      last_scan_status, scan_count FROM orgs ORDER BY name`
    t.equal(orgs.length, 6)
    t.equal(orgs.filter((o) => o.account_id === accounts[0].id).length, 5, 'Acme Corp has most orgs')
    t.equal(orgs.filter((o) => o.account_id === accounts[1].id).length, 1, 'Globex has one org')
    for (const o of orgs) t.equal(normalizeOrgId(o.salesforce_id), o.salesforce_id, `${o.name}: valid 18-character id with checksum`)
    for (const o of orgs) t.ok(o.salesforce_id.startsWith('00D'), `${o.name}: org id prefix`)
    const byId = new Map(orgs.map((o) => [o.salesforce_id, o]))

    // The never-scanned org, the sandbox and the org whose latest scan failed.
    const devHub = byId.get(DEMO_ORGS.acmeDevHub)!
    t.match(devHub, { latest: null, last_scan_status: null, scan_count: 0 }, 'the dev hub was never scanned')
    t.equal((await sql`SELECT count(*)::int AS n FROM scans WHERE org_id = ${DEMO_ORGS.acmeDevHub}`)[0].n, 0)
    const sandbox = byId.get(DEMO_ORGS.acmeUatSandbox)!
    t.equal(sandbox.is_sandbox, true)
    t.equal(sandbox.instance_url, 'https://acme--uat.sandbox.my.salesforce.com')
    t.equal(orgs.filter((o) => o.is_sandbox).length, 1, 'one sandbox')
    const emea = byId.get(DEMO_ORGS.acmeEmea)!
    t.equal(emea.last_scan_status, 'failed')
    const emeaScans = await sql`SELECT id::text AS id, status FROM scans WHERE org_id = ${DEMO_ORGS.acmeEmea} ORDER BY id`
    t.same(emeaScans.map((s) => s.status), ['completed', 'completed', 'failed'])
    t.equal(emea.latest, emeaScans[1].id, 'latest_scan_id stays on the last completed scan')
    t.ok(Number((await sql`SELECT count(*) AS n FROM fields WHERE scan_id = ${emea.latest}::bigint`)[0].n) > 0, 'its data stays visible')

    // Every scanned org: at least two completed scans, the newer one is the latest; a handful of rows of everything.
    for (const o of orgs.filter((x) => x.salesforce_id !== DEMO_ORGS.acmeDevHub)) {
      const scans = await sql`SELECT id::text AS id FROM scans WHERE org_id = ${o.salesforce_id} AND status = 'completed' ORDER BY id`
      t.ok(scans.length >= 2, `${o.name}: ${scans.length} completed scans`)
      t.equal(o.latest, scans[scans.length - 1].id, `${o.name}: the newest completed scan is the latest`)
      for (const table of dataTables) {
        const [{ n }] = await sql`SELECT count(*)::int AS n FROM ${sql(table)} WHERE scan_id = ${o.latest}::bigint`
        t.ok(n >= (table === 'cloud_usages' ? 1 : 3), `${o.name}: ${table} has ${n} rows`)
      }
    }

    // Referential consistency within each scan.
    const orphanFields = await sql`SELECT count(*)::int AS n FROM fields f LEFT JOIN objects o ON o.scan_id = f.scan_id AND o.id = f.sobject_id
      WHERE o.id IS NULL OR o.api_name <> f.object_api_name`
    t.equal(orphanFields[0].n, 0, 'every field references an object of its scan by id and api name')
    const orphanUsages = await sql`SELECT count(*)::int AS n FROM object_usages u LEFT JOIN objects o ON o.scan_id = u.scan_id AND o.id = u.object_id WHERE o.id IS NULL`
    t.equal(orphanUsages[0].n, 0, 'every object usage references an object')
    const badAssignments = await sql`SELECT count(*)::int AS n FROM connected_app_assignments WHERE (profile_id IS NULL) = (permission_set_id IS NULL)`
    t.equal(badAssignments[0].n, 0, 'assignments set exactly one of profile_id / permission_set_id')
    const danglingAssignments = await sql`SELECT count(*)::int AS n FROM connected_app_assignments a
      LEFT JOIN sf_profiles p ON p.scan_id = a.scan_id AND p.sf_profile_id = a.profile_id
      LEFT JOIN permission_sets s ON s.scan_id = a.scan_id AND s.permission_set_id = a.permission_set_id
      LEFT JOIN connected_apps c ON c.scan_id = a.scan_id AND c.id = a.connected_app_id
      WHERE (a.profile_id IS NOT NULL AND p.sf_profile_id IS NULL) OR (a.permission_set_id IS NOT NULL AND s.permission_set_id IS NULL) OR c.id IS NULL`
    t.equal(danglingAssignments[0].n, 0, 'assignments reference generated apps, profiles and permission sets')

    // Issues and recommendations.
    const missing = await sql`SELECT count(*)::int AS n FROM issues i JOIN orgs o ON o.latest_scan_id = i.scan_id
      LEFT JOIN recommendations r ON r.scan_id = i.scan_id AND r.issue_key = i.issue_key WHERE r.issue_key IS NULL`
    t.equal(missing[0].n, 0, 'every issue of a latest scan has a recommendation')
    const extra = await sql`SELECT count(*)::int AS n FROM recommendations r LEFT JOIN issues i ON i.scan_id = r.scan_id AND i.issue_key = r.issue_key
      WHERE i.issue_key IS NULL OR i.title <> r.title OR i.priority <> r.priority OR i.effort <> r.effort OR i.category <> r.category`
    t.equal(extra[0].n, 0, 'recommendations match their issue')
    const cats = await sql`SELECT DISTINCT category FROM issues ORDER BY 1`
    for (const c of cats) t.ok((ISSUE_CATEGORIES as readonly string[]).includes(c.category), `category ${c.category} is known`)
    t.ok(cats.length >= 8, `issues span ${cats.length} categories`)
    const [range] = await sql`SELECT min(priority)::int AS pmin, max(priority)::int AS pmax, min(effort)::int AS emin, max(effort)::int AS emax FROM issues`
    t.ok(range.pmin >= 1 && range.pmax <= 4 && range.emin >= 1 && range.emax <= 5, 'priority 1–4, effort 1–5')
    const mad = await sql`SELECT count(*)::int AS n FROM issues i JOIN orgs o ON o.latest_scan_id = i.scan_id
      WHERE o.salesforce_id = ${DEMO_ORGS.acmeProduction} AND i.issue_key = 'security.modify_all_data.System_Administrator'`
    t.equal(mad[0].n, 1, 'stable issue key for Modify All Data on System Administrator')
    const [keys] = await sql`WITH k AS (SELECT s.org_id, s.id, i.issue_key, dense_rank() OVER (PARTITION BY s.org_id ORDER BY s.id) AS nth
        FROM issues i JOIN scans s ON s.id = i.scan_id)
      SELECT count(*) FILTER (WHERE a.issue_key IS NOT NULL AND b.issue_key IS NOT NULL)::int AS kept,
        count(*) FILTER (WHERE a.issue_key IS NULL)::int AS fresh, count(*) FILTER (WHERE b.issue_key IS NULL)::int AS resolved
      FROM (SELECT * FROM k WHERE nth = 1) a FULL JOIN (SELECT * FROM k WHERE nth = 2) b ON a.org_id = b.org_id AND a.issue_key = b.issue_key`
    t.ok(keys.kept > 10 * (keys.fresh + keys.resolved) / 2, `most issues persist between scans (${keys.kept} kept)`)
    t.ok(keys.fresh > 0 && keys.resolved > 0, `some issues are new (${keys.fresh}), some resolved (${keys.resolved})`)

    // Realism: namespaces, limits, licenses, logins, connected apps.
    for (const table of ['fields', 'objects', 'issues', 'connected_apps', 'permission_sets', 'installed_packages']) {
      const [r] = await sql`SELECT count(*) FILTER (WHERE namespace IS NULL)::int AS unmanaged, count(DISTINCT namespace)::int AS namespaces FROM ${sql(table)}`
      t.ok(r.unmanaged > 0 && r.namespaces >= 3, `${table}: unmanaged rows and ${r.namespaces} namespaces`)
    }
    const [pop] = await sql`SELECT avg((percent_populated < 5)::int)::float AS share FROM fields WHERE is_custom`
    t.ok(pop.share > 0.2, `many custom fields are under 5 % populated (${Math.round(pop.share * 100)} %)`)
    const limits = await sql`SELECT l.name, l.cap, l.remaining FROM org_limits l JOIN orgs o ON o.latest_scan_id = l.scan_id WHERE o.salesforce_id = ${DEMO_ORGS.acmeProduction}`
    const names = limits.map((l) => l.name)
    for (const n of ['DailyApiRequests', 'PermissionSets', 'DailyBulkApiBatches', 'DataStorageMB', 'FileStorageMB']) t.ok(names.includes(n), `limit ${n}`)
    t.ok(limits.some((l) => Number(l.cap) === 0), 'a limit with cap 0')
    t.equal((await sql`SELECT count(*)::int AS n FROM org_limits WHERE remaining > cap OR remaining < 0`)[0].n, 0, 'remaining within cap')
    t.equal((await sql`SELECT count(*)::int AS n FROM license_usages WHERE used > total OR used < 0`)[0].n, 0, 'used within total')
    t.same((await sql`SELECT DISTINCT type FROM license_usages ORDER BY 1`).map((r) => r.type), ['feature', 'permission_set', 'user'])
    t.equal((await sql`SELECT count(*)::int AS n FROM login_activity WHERE NOT (logins_30 <= logins_90 AND logins_90 <= logins_365)`)[0].n, 0, 'login windows nest')
    const lic = (await sql`SELECT DISTINCT license_type FROM login_activity`).map((r) => r.license_type)
    for (const l of ['Salesforce', 'Salesforce Platform', 'Identity']) t.ok(lic.includes(l), `license type ${l}`)
    t.same((await sql`SELECT DISTINCT is_active FROM login_activity ORDER BY 1`).map((r) => r.is_active), [false, true])
    const stale = await sql`SELECT count(*) FILTER (WHERE c.last_used_date IS NULL)::int AS never,
        count(*) FILTER (WHERE c.last_used_date < s.started_at - interval '365 days')::int AS year
      FROM connected_apps c JOIN scans s ON s.id = c.scan_id JOIN orgs o ON o.latest_scan_id = s.id`
    t.ok(stale[0].never > 0 && stale[0].year > 0, 'some connected apps never used, some unused for a year')
    t.ok((await sql`SELECT count(*)::int AS n FROM sf_profiles WHERE modify_all_data`)[0].n > 0, 'profiles with Modify All Data')

    // The demo user and the progress lines.
    t.equal(seed.users.length, 1)
    const access = await sql`SELECT a.org_id FROM user_org_access a JOIN users u ON u.id = a.user_id WHERE u.email = ${DEMO_USER.email} ORDER BY 1`
    t.same(access.map((r) => r.org_id), [...DEMO_USER.orgs].sort())
    t.same(seed.users[0].orgs, DEMO_USER.orgs)
    t.ok(lines.some((l) => l.includes(DEMO_ORGS.acmeProduction) && l.includes('scan 2/2')), 'progress names org and scan')
  })
})

t.test('demo seed is deterministic: a second fresh database gets the same data', async (t) => {
  const a = first ?? (await withSeeded((sql) => snapshot(sql)))
  const b = await withSeeded((sql) => snapshot(sql))
  t.same(b.counts, a.counts, 'identical row counts')
  t.same(b.issueKeys, a.issueKeys, 'identical issue keys per org')
  t.equal(b.fieldsDigest, a.fieldsDigest, 'identical fields')
  t.ok(Object.keys(a.issueKeys).length === 5, 'issues in every scanned org')
})

t.test('the large org at full scale (generation only)', async (t) => {
  const def = DEMO_ORG_DEFS.find((d) => d.large)!
  const latest = demoBundle(def, def.scans.length - 1).data as Record<string, unknown[]>
  t.ok(latest.fields.length >= 20_000, `${latest.fields.length} fields`)
  t.ok(latest.objects.length >= 1_000, `${latest.objects.length} objects`)
  t.ok(latest.issues.length >= 2_000, `${latest.issues.length} issues`)
  t.equal(latest.recommendations.length, latest.issues.length)
})
