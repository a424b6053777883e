/**
 * An import vacuums the tables it wrote many records into (runtime/platform/bundle/import-bundle.ts `vacuumLarge`): their pages
 * are marked all-visible, so that a deep page skips its rows in an index-only scan. The embedded database has no
 * autovacuum: without this its tables would never be. A seed's imports run in the seed's one transaction, where no
 * VACUUM can run: the seed vacuums once it has committed (demo/seed.ts `vacuumSeeded`).
 */
import { t } from '../helpers/file-test.ts'
import { registry } from '../../resources/index.ts'
import { DEMO_ORG_DEFS, demoBundle, vacuumSeeded } from '../../demo/seed.ts'
import { openDatabase } from '../../runtime/platform/db/connect.ts'
import { migrate } from '../../runtime/platform/db/migrate.ts'
import { compileRegistry } from '../../runtime/core/registry.ts'
import { importScan } from '../../runtime/platform/import.ts'
import { createAccount } from '../../runtime/platform/admin.ts'
import { VACUUM_FROM } from '../../runtime/platform/bundle/import-bundle.ts'
import { createTestDatabase } from '../helpers/test-db.ts'

t.test('tables an import wrote many records into are vacuumed; small ones are left to autovacuum', async (t) => {
  const tdb = await createTestDatabase({ template: 'empty' })
  const db = await openDatabase({ databaseUrl: tdb.databaseUrl, dataDir: tdb.dataDir })
  t.teardown(async () => {
    await db.close()
    await tdb.drop()
  })
  await migrate(db.sql)
  const account = await createAccount(db.sql, { name: 'Vacuum', dailyLimit: 10, monthlyLimit: 10 })
  const large = DEMO_ORG_DEFS.find((d) => d.large)!
  // At this scale the large org's scan has over a thousand fields, and a few hundred workflows at most.
  const bundle = demoBundle(large, large.scans.length - 1, { scale: 0.06 })
  const data = bundle.data as Record<string, unknown[]>
  t.ok(data.fields.length >= VACUUM_FROM && data.workflows.length < VACUUM_FROM, `the large org's scan: ${data.fields.length} fields, ${data.workflows.length} workflows`)
  await importScan(db.sql, compileRegistry(registry), account.id, bundle)
  const visible = async (table: string) =>
    (await db.sql<{ n: number }[]>`SELECT relallvisible::int AS n FROM pg_class WHERE relname = ${table} AND relkind = 'r'`)[0].n
  t.ok((await visible('fields')) > 0, 'the fields table has all-visible pages')
  if (db.kind === 'embedded') t.equal(await visible('workflows'), 0, 'the workflows table was not vacuumed (the embedded database never does it by itself)')
  await vacuumSeeded(db.sql)
  t.ok((await visible('workflows')) > 0, 'a seed vacuums every table once it has committed')
})
