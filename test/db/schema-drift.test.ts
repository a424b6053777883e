/** The migrated database holds every table, column and index the registry expects. */
import { t } from '../helpers/file-test.ts'
import { registry } from '../../resources/index.ts'
import { compileRegistry } from '../../runtime/core/registry.ts'
import { expectedTables, renderDdl } from '../../runtime/platform/db/ddl.ts'
import { openDatabase } from '../../runtime/platform/db/connect.ts'
import { migrate } from '../../runtime/platform/db/migrate.ts'
import { createTestDatabase } from '../helpers/test-db.ts'
import { getStatement, listStatement } from '../../runtime/core/statements.ts'
import { planGet, planList } from '../../runtime/core/plan.ts'

// A database with no tables yet (a copy of the run's initialised, unmigrated template where there is one)
const tdb = await createTestDatabase({ template: 'bare' })
const db = await openDatabase({ databaseUrl: tdb.databaseUrl, dataDir: tdb.dataDir })
t.teardown(async () => {
  await db.close()
  await tdb.drop()
})
const applied = await migrate(db.sql)
const again = await migrate(db.sql)
const cols = await db.sql`SELECT table_name, column_name, data_type, udt_name, is_nullable FROM information_schema.columns WHERE table_schema = 'public'`
const idx = await db.sql`SELECT indexname, tablename FROM pg_indexes WHERE schemaname = 'public'`
// Constraints and unique indexes, for the sharding plan's checks below.
const cons = await db.sql<{ tbl: string; contype: string; cols: string[]; ref: string | null; refcols: string[]; ondelete: string }[]>`
  SELECT c.conrelid::regclass::text AS tbl, c.contype,
    array(SELECT a.attname::text FROM unnest(c.conkey) WITH ORDINALITY k(n, i) JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n ORDER BY k.i) AS cols,
    CASE WHEN c.contype = 'f' THEN c.confrelid::regclass::text END AS ref,
    array(SELECT a.attname::text FROM unnest(coalesce(c.confkey, '{}')) WITH ORDINALITY k(n, i) JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n ORDER BY k.i) AS refcols,
    c.confdeltype::text AS ondelete
  FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
  WHERE n.nspname = 'public' AND c.contype IN ('p', 'u', 'f')`
const uniqueIndexes = await db.sql<{ tbl: string; name: string }[]>`
  SELECT i.indrelid::regclass::text AS tbl, x.relname::text AS name FROM pg_index i JOIN pg_class x ON x.oid = i.indexrelid
  JOIN pg_namespace n ON n.oid = x.relnamespace WHERE n.nspname = 'public' AND i.indisunique AND NOT i.indisprimary`

t.test('migrations', async (t) => {
  t.ok(applied.length >= 2, 'migrations applied on a fresh database')
  t.same(again, [], 'migrating again applies nothing')
})

const TYPE: Record<string, string> = { bigint: 'int8', 'double precision': 'float8', text: 'text', boolean: 'bool', timestamptz: 'timestamptz', date: 'date', 'text[]': '_text', jsonb: 'jsonb' }

for (const table of expectedTables(compileRegistry(registry))) {
  t.test(`table ${table.table}`, async (t) => {
    const have = cols.filter((c) => c.table_name === table.table)
    t.ok(have.length > 0, `table exists — expected DDL:\n${renderDdl(table)}`)
    for (const [name, type] of table.columns) {
      const c = have.find((x) => x.column_name === name)
      t.ok(c, `column ${name} exists`)
      if (!c) continue
      const base = type.replace(' NOT NULL', '')
      t.equal(c.udt_name, TYPE[base], `column ${name} is ${base}`)
      t.equal(c.is_nullable === 'NO', type.endsWith('NOT NULL'), `column ${name} nullability`)
    }
    for (const i of table.indexes) t.ok(idx.some((x) => x.indexname === i.name && x.tablename === table.table), `index ${i.name}`)
  })
}

// The path to a sharded PostgreSQL (docs/scaling.md "Sharding") relies on these properties of today's schema and
// statements: every scan table hangs off `scans` by `scan_id` alone, nothing else is unique or referenced in it, and
// every statement reads a scan table only for the one scan of the one org it names. A migration or a statement that
// breaks one of them changes the plan: update docs/scaling.md with it.
const scanTables = new Set(expectedTables(compileRegistry(registry)).filter((x) => x.orgScoped).map((x) => x.table))
t.test('sharding plan: every scan table hangs off scans by scan_id alone', async (t) => {
  t.ok(scanTables.size >= 20, `${scanTables.size} scan tables`)
  for (const table of scanTables) {
    const mine = cons.filter((c) => c.tbl === table)
    const pk = mine.filter((c) => c.contype === 'p')
    t.equal(pk.length, 1, `${table}: one primary key`)
    t.equal(pk[0]?.cols[0], 'scan_id', `${table}: its primary key leads with scan_id (org_id goes in front of it)`)
    t.same(mine.filter((c) => c.contype === 'u').map((c) => c.cols), [], `${table}: no other unique constraint`)
    t.same(uniqueIndexes.filter((i) => i.tbl === table).map((i) => i.name), [], `${table}: no other unique index`)
    t.same(mine.filter((c) => c.contype === 'f').map((c) => [c.cols, c.ref, c.refcols, c.ondelete]), [[['scan_id'], 'scans', ['id'], 'c']],
      `${table}: its only foreign key is scan_id → scans(id) ON DELETE CASCADE (becomes (org_id, scan_id) → scans(org_id, id))`)
  }
})

t.test('sharding plan: the org-keyed tables and what refers to them', async (t) => {
  const pk = (table: string) => cons.find((c) => c.tbl === table && c.contype === 'p')?.cols
  t.same(pk('orgs'), ['salesforce_id'], 'orgs: keyed by the org id (its distribution column)')
  t.same(pk('scans'), ['id'], 'scans: keyed by id alone (becomes (org_id, id))')
  t.ok(pk('user_org_access')?.includes('org_id'), 'user_org_access: its key includes org_id already')
  t.ok(cons.some((c) => c.tbl === 'scans' && c.contype === 'f' && c.ref === 'orgs' && c.cols.join() === 'org_id'), 'scans.org_id → orgs')
  // The tables that must be distributed by org together: whatever refers to orgs or scans, and the scan tables.
  const referring = [...new Set(cons.filter((c) => c.contype === 'f' && (c.ref === 'orgs' || c.ref === 'scans')).map((c) => c.tbl))]
    .filter((x) => !scanTables.has(x)).sort()
  t.same(referring, ['orgs', 'scans', 'user_org_access'], 'nothing else refers to orgs or scans (every other table is a reference or coordinator table)')
  t.same(cons.filter((c) => c.contype === 'f' && c.tbl === 'orgs' && c.ref === 'scans').map((c) => [c.cols, c.refcols]), [[['latest_scan_id'], ['id']]],
    'orgs.latest_scan_id → scans(id): becomes (salesforce_id, latest_scan_id) → scans(org_id, id)')
})

t.test('sharding plan: every statement reads one scan of the one org it names', async (t) => {
  const compiled = compileRegistry(registry).filter((c) => c.decl.scope === 'org')
  let statements = 0
  for (const c of compiled) {
    const texts: string[] = []
    const parentId = c.decl.parent ? '1' : undefined
    if (c.decl.operations.list) texts.push(listStatement(c, planList(c, new Map(), 'rest', parentId), { accountId: '1', userId: null, orgId: '00D000000000000AAA' }).text)
    if (c.decl.operations.get) texts.push(getStatement(c, planGet(c, new Map(), c.decl.id ? (c.decl.id.encoding === 'base64url' ? Buffer.from('k').toString('base64url') : '1') : undefined), { accountId: '1', userId: null, orgId: '00D000000000000AAA' }).text)
    for (const text of texts) {
      statements++
      t.match(text, /^WITH o AS \(SELECT o\.latest_scan_id AS scan_id FROM orgs o WHERE o\.salesforce_id = \$1 /, `${c.name}: the org CTE binds the org id as $1`)
      const reads = [...text.matchAll(/FROM "?([a-z_]+)"? ([a-z]+) WHERE ([a-z]+)\.scan_id = \(SELECT scan_id FROM o\)/g)]
      const tables = [...text.matchAll(/FROM "?([a-z_]+)"? ([a-z]+)\b/g)].filter((m) => scanTables.has(m[1]))
      t.ok(tables.length > 0, `${c.name}: reads a scan table`)
      t.equal(reads.filter((m) => m[2] === m[3]).length, tables.length, `${c.name}: every scan table it reads is restricted to the org's scan (where t.org_id = $1 goes)`)
    }
  }
  t.ok(statements >= 25, `${statements} statements checked`)
})
