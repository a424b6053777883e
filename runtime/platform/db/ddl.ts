/**
 * The tables and indexes the registry expects. Used to write a new migration for a new resource
 * (`orgscan migrate --print-ddl`) and by the drift test that compares the migrated database to the registry.
 * Migrations themselves are frozen SQL files: a migration never changes after it has shipped.
 */
import { columnName, sqlType } from '../../core/fields.ts'

const q = (c: string) => `"${c}"`
import type { CompiledResource } from '../../core/registry.ts'

export interface ExpectedTable {
  table: string
  columns: Map<string, string>
  primaryKey: string[]
  indexes: Array<{ name: string; columns: string }>
  orgScoped: boolean
}

export function expectedTables(compiled: readonly CompiledResource[]): ExpectedTable[] {
  const out = new Map<string, ExpectedTable>()
  for (const c of compiled) {
    if (c.decl.singletonSql) continue // computed from another resource's table
    const t = out.get(c.decl.table) ?? {
      table: c.decl.table,
      columns: new Map<string, string>(),
      primaryKey: [] as string[],
      indexes: [] as ExpectedTable['indexes'],
      orgScoped: c.decl.scope === 'org',
    }
    if (t.orgScoped) t.columns.set('scan_id', 'bigint NOT NULL')
    for (const [name, spec] of c.fields) if (!spec.expr) t.columns.set(columnName(name), sqlType(spec) + (spec.nullable ? '' : ' NOT NULL'))
    const key = c.tiebreak ? columnName(c.tiebreak) : undefined
    if (t.primaryKey.length === 0) t.primaryKey = t.orgScoped ? (key ? ['scan_id', key] : ['scan_id']) : key ? [key] : []
    const sortCols = c.defaultSort.filter((k) => !c.fields.get(k.field)!.expr)
    if (t.orgScoped && sortCols.length === c.defaultSort.length) {
      const lead = c.decl.parent ? [q(columnName(c.decl.parent.field))] : []
      const cols = [
        q('scan_id'),
        ...lead,
        ...sortCols.map((k) => `${q(columnName(k.field))} ${k.desc ? 'DESC NULLS LAST' : 'ASC NULLS FIRST'}`),
        ...(key && !sortCols.some((k) => columnName(k.field) === key) ? [q(key)] : []),
      ].join(', ')
      const name = `${c.name.replace(/[A-Z]/g, (x) => '_' + x.toLowerCase())}_default_idx`
      if (cols !== t.primaryKey.map(q).join(', ') && !t.indexes.some((i) => i.columns === cols)) t.indexes.push({ name, columns: cols })
    }
    out.set(c.decl.table, t)
  }
  return [...out.values()]
}

export function renderDdl(t: ExpectedTable): string {
  const cols = [...t.columns].map(([n, ty]) => `  ${q(n)} ${ty}${n === 'scan_id' ? ' REFERENCES scans(id) ON DELETE CASCADE' : ''}`)
  if (t.primaryKey.length) cols.push(`  PRIMARY KEY (${t.primaryKey.map(q).join(', ')})`)
  const idx = t.indexes.map((i) => `CREATE INDEX ${i.name} ON ${t.table} (${i.columns});`)
  return [`CREATE TABLE ${t.table} (\n${cols.join(',\n')}\n);`, ...idx].join('\n')
}
