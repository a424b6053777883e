/**
 * An import vacuums the tables it wrote many records into (runtime/bundle/import-bundle.ts `vacuumLarge`): their pages
 * are marked all-visible, so that a deep page skips its rows in an index-only scan. The embedded database has no
 * autovacuum: without this its tables would never be.
 */
import { t } from '../helpers/file-test.ts'
import { registry } from '../../resources/index.ts'
import { seedDemo } from '../../demo/seed.ts'
import { openDatabase } from '../../runtime/db/connect.ts'
import { migrate } from '../../runtime/db/migrate.ts'
import { compileRegistry } from '../../runtime/registry.ts'
import { VACUUM_FROM } from '../../runtime/bundle/import-bundle.ts'
import { createTestDatabase } from '../helpers/test-db.ts'

t.test('tables an import wrote many records into are vacuumed; small ones are left to autovacuum', async (t) => {
  const tdb = await createTestDatabase({ template: 'empty' })
  const db = await openDatabase({ databaseUrl: tdb.databaseUrl, dataDir: tdb.dataDir })
  t.teardown(async () => {
    await db.close()
    await tdb.drop()
  })
  await migrate(db.sql)
  // At this scale the large org's scans have over a thousand fields each, and a few hundred workflows at most.
  const seed = await seedDemo(db.sql, compileRegistry(registry), { scale: 0.06 })
  const org = seed.orgs.find((o) => o.large)!
  const [{ fields, workflows }] = await db.sql<{ fields: number; workflows: number }[]>`
    SELECT (SELECT count(*)::int FROM fields f WHERE f.scan_id = o.latest_scan_id) AS fields,
      (SELECT count(*)::int FROM workflows w WHERE w.scan_id = o.latest_scan_id) AS workflows
    FROM orgs o WHERE o.salesforce_id = ${org.salesforceId}`
  t.ok(fields >= VACUUM_FROM && workflows < VACUUM_FROM, `the large org's scan: ${fields} fields, ${workflows} workflows`)
  const visible = async (table: string) =>
    (await db.sql<{ n: number }[]>`SELECT relallvisible::int AS n FROM pg_class WHERE relname = ${table} AND relkind = 'r'`)[0].n
  t.ok((await visible('fields')) > 0, 'the fields table has all-visible pages')
  if (db.kind === 'embedded') t.equal(await visible('workflows'), 0, 'the workflows table was not vacuumed (the embedded database never does it by itself)')
})
