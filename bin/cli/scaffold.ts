/**
 * `orgscan scaffold resource NAME`: a new resource in one command — its declaration (`resources/<name>.ts`, a typed
 * template to edit), its place in the ordered registry (`resources/index.ts`) and its migration (the DDL the registry
 * expects of it, the same that test/db/schema-drift.test.ts checks). `npm run regen` then writes every generated
 * artifact (docs/adding-a-resource.md).
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { defineResource, f, type Resource } from '../../runtime/core/define.ts'
import { compileRegistry } from '../../runtime/core/registry.ts'
import { expectedTables, renderDdl } from '../../runtime/platform/db/ddl.ts'
import { listMigrations } from '../../runtime/platform/db/migrate.ts'
import { columnName } from '../../runtime/core/fields.ts'
import { UsageError } from './args.ts'

const NAME = /^[a-z][A-Za-z0-9]*s$/

/** `validationRules` → `validation-rules` (the file), `Validation rule` (the title), `validationRuleId` (the id). */
export function namesOf(name: string): { file: string; title: string; singular: string; idParam: string } {
  const singular = name.replace(/s$/, '')
  const words = singular.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase()
  return { file: name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`), title: words.charAt(0).toUpperCase() + words.slice(1), singular, idParam: `${singular}Id` }
}

/**
 * The template's fields, once: the declaration's source text and the declaration compiled here to write the migration
 * are both made from it, so the migration is the DDL of exactly what the file declares.
 */
function templateFields(title: string): Array<{ name: string; call: string; spec: ReturnType<typeof f.int> }> {
  const lower = title.toLowerCase()
  return [
    { name: 'id', call: "f.int({ description: 'Record id, stable across scans.' })", spec: f.int({ description: 'Record id, stable across scans.' }) },
    { name: 'name', call: `f.text({ description: 'Name of the ${lower} as the org shows it.' })`, spec: f.text({ description: `Name of the ${lower} as the org shows it.` }) },
    { name: 'objectApiName', call: `f.text({ description: 'API name of the object the ${lower} belongs to.' })`, spec: f.text({ description: `API name of the object the ${lower} belongs to.` }) },
    { name: 'active', call: `f.bool({ description: 'Whether the ${lower} is active in the org.' })`, spec: f.bool({ description: `Whether the ${lower} is active in the org.` }) },
    { name: 'lastModifiedDate', call: `f.ts({ nullable: true, description: 'When the ${lower} was last changed; null when the scan could not tell.' })`, spec: f.ts({ nullable: true, description: `When the ${lower} was last changed; null when the scan could not tell.` }) },
  ]
}

/** The declaration of the template, and its source text. */
export function scaffoldDeclaration(name: string): { decl: Resource; source: string } {
  const n = namesOf(name)
  const fields = templateFields(n.title)
  const plural = `${n.title}s`
  const description = `${plural} found by the org's latest scan, one record per ${n.title.toLowerCase()}, with the object it belongs to and whether it is active.`
  const filterable = fields.map((x) => x.name)
  const sortable = ['id', 'name', 'objectApiName', 'lastModifiedDate']
  const decl = defineResource({
    name,
    title: n.title,
    description,
    id: { field: 'id', param: n.idParam, encoding: 'int' },
    fields: Object.fromEntries(fields.map((x) => [x.name, x.spec])),
    filterable,
    sortable,
    defaultSort: 'name',
  })
  const q = (s: string) => `'${s.replace(/'/g, "\\'")}'`
  const source = [
    `/** ${plural}: written by \`orgscan scaffold resource ${name}\`; edit the fields to what the scanner reports (docs/adding-a-resource.md). */`,
    "import { defineResource, f } from '../runtime/core/define.ts'",
    '',
    `export const ${name} = defineResource({`,
    `  name: ${q(name)},`,
    `  title: ${q(n.title)},`,
    `  description: ${q(description)},`,
    `  id: { field: 'id', param: ${q(n.idParam)}, encoding: 'int' },`,
    '  fields: {',
    ...fields.map((x) => `    ${x.name}: ${x.call},`),
    '  },',
    `  filterable: [${filterable.map(q).join(', ')}],`,
    `  sortable: [${sortable.map(q).join(', ')}],`,
    "  defaultSort: 'name',",
    '})',
    '',
  ].join('\n')
  return { decl, source }
}

const REGISTRY = /export const registry: readonly Resource\[\] = \[([^\]]*)\]/

/** The declarations of `resources/` (`export const X = defineResource(`), by export name → file name. */
function declaredResources(dir: string): Map<string, string> {
  const out = new Map<string, string>()
  for (const file of readdirSync(dir).filter((x) => x.endsWith('.ts') && x !== 'index.ts').sort()) {
    for (const [, name] of readFileSync(join(dir, file), 'utf8').matchAll(/^export const ([A-Za-z0-9]+) = defineResource\(/gm)) out.set(name, file)
  }
  return out
}

/**
 * `resources/index.ts` with every declaration of the folder in its registry: the order it has stays (it is the
 * documentation order), a declaration it lacks is imported and added at the end, one that is gone is dropped.
 */
export function indexWithEvery(dir: string): string {
  const path = join(dir, 'index.ts')
  const text = readFileSync(path, 'utf8')
  const m = REGISTRY.exec(text)
  if (!m) throw new Error(`${path} has no "export const registry: readonly Resource[] = [...]" list`)
  const declared = declaredResources(dir)
  const listed = m[1].split(',').map((x) => x.trim()).filter((x) => x && declared.has(x))
  const names = [...listed, ...[...declared.keys()].filter((x) => !listed.includes(x))]
  const byFile = new Map<string, string[]>()
  for (const x of names) byFile.set(declared.get(x)!, [...(byFile.get(declared.get(x)!) ?? []), x])
  const imports = [...byFile].map(([file, xs]) => `import { ${[...xs].sort().join(', ')} } from './${file}'`)
  const lines: string[] = []
  let line = ' '
  for (const x of names) {
    if (line.length + x.length + 2 > 118) {
      lines.push(line.trimEnd())
      line = ' '
    }
    line += ` ${x},`
  }
  lines.push(line.trimEnd())
  const head = text.slice(0, text.search(/^import \{ [^}]+ \} from '\.\/[^']+'$/m))
  return `${head}${imports.join('\n')}\n\nexport const registry: readonly Resource[] = [\n${lines.join('\n')}\n]\n${text.slice(m.index + m[0].length).replace(/^\n*/, '\n')}`
}

export interface Scaffolded {
  declaration: string
  migration: string
  index: string
}

/** Writes the declaration, its registry entry and its migration below `root`; refuses a name that exists. */
export function scaffoldResource(root: string, name: string, registry: readonly Resource[]): Scaffolded {
  if (!NAME.test(name)) throw new UsageError(`A resource name is camelCase letters and digits, plural (ending in "s"), e.g. validationRules; got "${name}".`)
  const n = namesOf(name)
  const dir = join(root, 'resources')
  const declaration = join(dir, `${n.file}.ts`)
  if (registry.some((r) => r.name === name) || existsSync(declaration)) throw new UsageError(`A resource ${name} exists already (${declaration}).`)
  const { decl, source } = scaffoldDeclaration(name)
  const table = expectedTables(compileRegistry([...registry, decl])).find((x) => x.table === columnName(name))
  if (!table) throw new Error(`no table for ${name}`)
  const next = Math.max(0, ...listMigrations().map((m) => m.version)) + 1
  const migration = join(root, 'runtime/platform/db/migrations', `${String(next).padStart(3, '0')}_${columnName(name)}.sql`)
  writeFileSync(declaration, source)
  writeFileSync(migration, `-- ${n.title}s (orgscan scaffold resource ${name}): the table its declaration expects. Frozen once shipped.\n${renderDdl(table)}\n`)
  const index = join(dir, 'index.ts')
  writeFileSync(index, indexWithEvery(dir))
  return { declaration, migration, index }
}
