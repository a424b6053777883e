/** The migrated database holds every table, column and index the registry expects. */
import t from 'tap'
import { registry } from '../resources/index.ts'
import { compileRegistry } from '../runtime/registry.ts'
import { expectedTables, renderDdl } from '../runtime/db/ddl.ts'
import { openDatabase } from '../runtime/db/connect.ts'
import { migrate } from '../runtime/db/migrate.ts'
import { createTestDatabase } from './helpers/test-db.ts'

const tdb = await createTestDatabase()
const db = await openDatabase({ databaseUrl: tdb.databaseUrl, dataDir: tdb.dataDir })
t.teardown(async () => {
  await db.close()
  await tdb.drop()
})
const applied = await migrate(db.sql)
const again = await migrate(db.sql)
const cols = await db.sql`SELECT table_name, column_name, data_type, udt_name, is_nullable FROM information_schema.columns WHERE table_schema = 'public'`
const idx = await db.sql`SELECT indexname, tablename FROM pg_indexes WHERE schemaname = 'public'`
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
