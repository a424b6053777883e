/**
 * Validates the resource registry at start-up and compiles each declaration into what the request
 * pipeline needs (a bad declaration fails start-up with a clear message, never a 4xx at run time).
 */
import type { Resource } from './define.ts'
import { isScalar, jsonText, sqlExpr, type FieldSpec } from './fields.ts'
import { parseSort, type SortKey } from './sort.ts'
import { compileFilter, parseRql, type RqlNode } from './rql/index.ts'
import { isApiError } from './errors.ts'
import { compileOperations, type CompiledResource, type Operations } from './operations.ts'

export type { CompiledResource } from './operations.ts'

export class RegistryError extends Error {
  constructor(message: string) {
    super(`Invalid resource registry: ${message}`)
    this.name = 'RegistryError'
  }
}


const NAME = /^[a-z][A-Za-z0-9]*$/
const TABLE = /^[a-z][a-z0-9_]*$/
const TOOL = /^[a-z][a-z0-9_]{2,63}$/
const PATH = /^[A-Za-z]+(\/(\{[A-Za-z]+\}|[A-Za-z]+))*$/

/**
 * The SQL text expression of a record's compact JSON (`{"id":7,"name":"x"}`): each value's JSON text (`jsonText`), joined
 * without the spaces `json_build_object` puts around every colon, at no extra cost per request. Field names are
 * registry identifiers (camelCase letters and digits), safe inside the literal. `exactTime`: see `jsonExpr`.
 */
export function buildObject(names: readonly string[], fields: ReadonlyMap<string, FieldSpec>, exactTime = false): string {
  const parts = names.map((n, i) => `'${i === 0 ? '{' : ','}"${n}":' || coalesce(${jsonText(n, fields.get(n)!, exactTime)}, 'null')`)
  return `(${parts.join(' || ')} || '}')`
}

export function orderBy(keys: readonly SortKey[], fields: ReadonlyMap<string, FieldSpec>, tiebreak?: string): string {
  const parts = keys.map((k) => `${sqlExpr(k.field, fields.get(k.field)!)} ${k.desc ? 'DESC NULLS LAST' : 'ASC NULLS FIRST'}`)
  if (tiebreak && !keys.some((k) => k.field === tiebreak)) parts.push(`${sqlExpr(tiebreak, fields.get(tiebreak)!)} ASC`)
  return parts.join(', ')
}

function check(cond: unknown, msg: string): asserts cond {
  if (!cond) throw new RegistryError(msg)
}

function compileOne(r: Resource, byName: ReadonlyMap<string, Resource>): CompiledResource {
  const where = `resource "${r.name}"`
  check(NAME.test(r.name), `${where}: name must be camelCase letters and digits`)
  check(TABLE.test(r.table), `${where}: table "${r.table}" must be snake_case`)
  check(PATH.test(r.path), `${where}: path "${r.path}" is not a valid path`)
  const fields = new Map(Object.entries(r.fields))
  check(fields.size > 0 && fields.size <= 50, `${where}: needs 1 to 50 fields`)
  for (const [n, spec] of fields) {
    check(/^[a-z][A-Za-z0-9]*$/.test(n), `${where}: field "${n}" must be camelCase`)
    check(spec.kind !== 'enum' || (spec.values && spec.values.length > 0), `${where}: enum field "${n}" needs values`)
  }
  const has = (n: string | undefined, what: string) => n === undefined || check(fields.has(n), `${where}: ${what} "${n}" is not a field`)
  for (const n of r.filterable ?? []) {
    has(n, 'filterable field')
    check(isScalar(fields.get(n)!), `${where}: filterable field "${n}" must be a scalar`)
  }
  for (const n of r.sortable ?? []) {
    has(n, 'sortable field')
    check(isScalar(fields.get(n)!), `${where}: sortable field "${n}" must be a scalar`)
  }
  for (const n of r.listFields ?? []) has(n, 'list field')
  has(r.id?.field, 'id field')
  if (r.id) check(/^[a-z][A-Za-z]*$/.test(r.id.param), `${where}: id param "${r.id.param}" must be letters`)
  const tiebreak = r.tiebreak ?? r.id?.field ?? (fields.has('id') ? 'id' : undefined)
  has(tiebreak, 'tiebreak')
  if (r.kind === 'collection' && r.operations.list) {
    check(tiebreak !== undefined, `${where}: a list needs a tiebreak field (id, or declare tiebreak) for stable paging`)
  }
  if (r.kind === 'singleton') {
    check(!r.operations.list && r.operations.get, `${where}: a singleton has only the get operation`)
    check(r.scope === 'org', `${where}: singletons are org-scoped`)
  }
  check(r.operations.list || r.operations.get, `${where}: has no operation`)
  check(!r.operations.get || r.kind === 'singleton' || r.id, `${where}: get needs an id`)

  let defaultSort: SortKey[] = []
  if (r.defaultSort !== undefined) {
    try {
      defaultSort = parseSort(r.defaultSort, r.sortable ?? [])
    } catch (e) {
      throw new RegistryError(`${where}: defaultSort "${r.defaultSort}": ${isApiError(e) ? e.message : String(e)}`)
    }
  }
  let defaultFilter: RqlNode | undefined
  if (r.defaultFilter !== undefined) {
    try {
      defaultFilter = parseRql(r.defaultFilter)
      compileFilter(defaultFilter, r.fields, r.filterable ?? [], () => '$1')
    } catch (e) {
      throw new RegistryError(`${where}: defaultFilter "${r.defaultFilter}": ${isApiError(e) ? e.message : String(e)}`)
    }
  }
  let parentTable: string | undefined
  if (r.parent) {
    const p = byName.get(r.parent.resource)
    check(p && p.id?.encoding === 'int', `${where}: parent resource "${r.parent.resource}" must exist and have an integer id`)
    has(r.parent.field, 'parent field')
    check(r.path.includes(`{${r.parent.param}}`), `${where}: path must contain {${r.parent.param}}`)
    parentTable = p.table
  } else {
    check(!r.path.includes('{'), `${where}: path parameters need a parent declaration`)
  }
  for (const op of ['list', 'get'] as const) {
    const tool = r.mcp[op]
    if (!r.operations[op]) check(tool === undefined, `${where}: MCP tool "${tool}" names an operation the resource does not have`)
    else check(tool !== undefined, `${where}: the ${op} operation has no MCP tool name`)
    if (tool !== undefined) check(TOOL.test(tool), `${where}: MCP tool name "${tool}" must be snake_case`)
  }
  check(!r.singletonSql || r.kind === 'singleton', `${where}: singletonSql is only for singletons`)
  if (r.groupable?.length) {
    check(r.scope === 'org' && r.operations.list && !r.parent, `${where}: groupable is for org-scoped lists without a parent`)
    for (const n of r.groupable) {
      has(n, 'groupable field')
      check(isScalar(fields.get(n)!), `${where}: groupable field "${n}" must be a scalar`)
    }
  }

  const all = [...fields.keys()]
  const listFieldNames = r.listFields ? [...r.listFields] : all
  const ops: Operations = {}
  const compiled: CompiledResource = {
    decl: r,
    name: r.name,
    fields,
    selectOne: buildObject(all, fields),
    selectList: buildObject(listFieldNames, fields),
    listFieldNames,
    defaultSort,
    defaultFilter,
    tiebreak,
    parentTable,
    ops,
  }
  // The operations point back at their resource: compiled once it exists.
  Object.assign(ops, compileOperations(compiled))
  return compiled
}

/** Validates and compiles the registry; throws RegistryError on the first bad declaration. */
export function compileRegistry(registry: readonly Resource[]): CompiledResource[] {
  const byName = new Map<string, Resource>()
  for (const r of registry) {
    if (byName.has(r.name)) throw new RegistryError(`duplicate resource name "${r.name}"`)
    byName.set(r.name, r)
  }
  const compiled = registry.map((r) => compileOne(r, byName))
  // Route and tool uniqueness across resources.
  const routes = new Map<string, string>()
  const tools = new Map<string, string>()
  for (const c of compiled) {
    const r = c.decl
    for (const op of [c.ops.list, c.ops.get]) {
      if (!op) continue
      const norm = op.path.replace(/\{[^}]+\}/g, '{}')
      const prev = routes.get(norm)
      if (prev) throw new RegistryError(`resources "${prev}" and "${r.name}" both serve ${op.path}`)
      routes.set(norm, r.name)
    }
    for (const tool of [r.mcp.list, r.mcp.get]) {
      if (!tool) continue
      const prev = tools.get(tool)
      if (prev) throw new RegistryError(`resources "${prev}" and "${r.name}" both declare MCP tool ${tool}`)
      tools.set(tool, r.name)
    }
  }
  return compiled
}

