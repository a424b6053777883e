/**
 * The compiled model's operations: each list and get of each declaration, compiled once by the registry into what every
 * surface needs — method, path template, path and query parameters with their types, limits, defaults and allowed
 * values, the record fields the answer carries, and the MCP tool's name and title. REST routing, request planning, MCP
 * tool schemas, OpenAPI, the reference docs and the typed client read these and derive nothing themselves: this is the
 * one place that says "limit is 1 to 200, default 50" and the one place that builds a path.
 */
import type { Resource } from './define.ts'
import type { FieldSpec } from './fields.ts'
import type { SortKey } from './sort.ts'
import type { RqlNode } from './rql/index.ts'
import { DEFAULT_RQL_LIMITS } from './rql/index.ts'
import { DEFAULT_LIMIT, MAX_FIELDS_LENGTH, MAX_GROUP_BY, MAX_LIMIT, MAX_OFFSET, MAX_SORT_LENGTH, MAX_VALUE_LENGTH, MAX_VALUES } from './limits.ts'

/** A page of records, one record, or the counts of records by group. */
/** A declaration compiled by the registry (runtime/core/registry.ts): what the runtime reads of a resource. */
export interface CompiledResource {
  readonly decl: Resource
  readonly name: string
  /** The field specs, as a Map (never an object keyed by user input). */
  readonly fields: ReadonlyMap<string, FieldSpec>
  /** The compact JSON text (buildObject) of the single record / of the list record. */
  readonly selectOne: string
  readonly selectList: string
  /** Field names of the list record, in order. */
  readonly listFieldNames: readonly string[]
  readonly defaultSort: readonly SortKey[]
  readonly defaultFilter: RqlNode | undefined
  readonly tiebreak: string | undefined
  /** Table and id column of the parent (objects/{objectId}/fields). */
  readonly parentTable: string | undefined
  /** Its operations: what every surface serves, documents and generates from. */
  readonly ops: Readonly<Operations>
}

/** A page of records, one record, or the counts of records by group. */
export type OperationKind = 'list' | 'get' | 'count'

/** A parameter in the path. */
export type PathParam =
  /** The org's 15- or 18-character id; `record` when it names the operation's own record (the get of one org). */
  | { name: string; type: 'orgId'; record: boolean }
  /**
   * A record id (`record`: the operation's own record; `parent`: the parent record the list is below), as the
   * declaration encodes it; `resource` is the resource whose records it names.
   */
  | { name: string; type: 'id'; role: 'record' | 'parent'; encoding: 'int' | 'text' | 'base64url'; field: string; resource: string }

/** A parameter in the query string (MCP: a tool argument of the same name). */
export type QueryParam =
  | { name: 'limit'; type: 'limit'; min: 1; max: number; default: number }
  | { name: 'offset'; type: 'offset'; min: 0; max: number; default: 0 }
  | { name: 'filter'; type: 'filter'; maxLength: number; fields: readonly string[]; defaultFilter?: string }
  | { name: 'sort'; type: 'sort'; maxLength: number; fields: readonly string[]; defaultSort?: string }
  /**
   * A sparse fieldset: a subset of `fields`, in any order; answered in declaration order, with `key` (the record's id,
   * when it has one) always among them.
   */
  | { name: 'fields'; type: 'fields'; maxLength: number; fields: readonly string[]; key?: string }
  /** The fields a grouped count groups by: 1 to `maxItems` of `fields`, comma-separated. */
  | { name: 'by'; type: 'groupBy'; maxItems: number; fields: readonly string[] }
  /** A repeatable parameter specific to the resource. */
  | { name: string; type: 'strings'; maxValues: number; maxValueLength: number; description: string }

export interface CompiledOperation {
  readonly resource: CompiledResource
  readonly kind: OperationKind
  readonly method: 'GET'
  /** The path template, `{name}` for a parameter: `/v1/orgs/{orgId}/objects/{objectId}/fields`. */
  readonly path: string
  /** The same with `:name` parameters, as the router takes it. */
  readonly route: string
  readonly pathParams: readonly PathParam[]
  readonly queryParams: readonly QueryParam[]
  /** The fields of each record in the answer's `data`, in order. */
  readonly recordFields: readonly string[]
  /** The MCP tool that runs the operation (every count shares one tool, `count_org_records`, which names the resource). */
  readonly tool: string
  /** The operation's own name: the typed client's method and the OpenAPI operationId (`listOrgFields`). */
  readonly name: string
  readonly title: string
}

/** The one MCP tool of every grouped count. */
export const COUNT_TOOL = 'count_org_records'

/** `list_org_fields` → `listOrgFields`. */
const camel = (snake: string) => snake.replace(/_([a-z])/g, (_m, ch: string) => ch.toUpperCase())

/** The path of a resource's records below `/v1`, before any record id. */
function basePath(c: CompiledResource): string {
  return c.decl.scope === 'org' ? `/v1/orgs/{orgId}/${c.decl.path}` : `/v1/${c.decl.path}`
}

function pathParams(c: CompiledResource, path: string): PathParam[] {
  const d = c.decl
  const out: PathParam[] = []
  for (const [, name] of path.matchAll(/\{([A-Za-z]+)\}/g)) {
    if (name === 'orgId') out.push({ name, type: 'orgId', record: d.id?.param === name && d.scope !== 'org' })
    else if (d.parent && name === d.parent.param) out.push({ name, type: 'id', role: 'parent', encoding: 'int', field: d.parent.field, resource: d.parent.resource })
    else out.push({ name, type: 'id', role: 'record', encoding: d.id!.encoding, field: d.id!.field, resource: c.name })
  }
  return out
}

function extraParams(c: CompiledResource): QueryParam[] {
  return (c.decl.extraParams ?? []).map((p) => ({ name: p.name, type: 'strings', maxValues: MAX_VALUES, maxValueLength: MAX_VALUE_LENGTH, description: p.description }))
}

function listQuery(c: CompiledResource): QueryParam[] {
  const d = c.decl
  const q: QueryParam[] = []
  if (!d.unpaged) {
    q.push({ name: 'limit', type: 'limit', min: 1, max: MAX_LIMIT, default: DEFAULT_LIMIT })
    q.push({ name: 'offset', type: 'offset', min: 0, max: MAX_OFFSET, default: 0 })
  }
  if (d.filterable?.length) q.push({ name: 'filter', type: 'filter', maxLength: DEFAULT_RQL_LIMITS.maxLength, fields: [...d.filterable], defaultFilter: d.defaultFilter })
  if (d.sortable?.length) q.push({ name: 'sort', type: 'sort', maxLength: MAX_SORT_LENGTH, fields: [...d.sortable], defaultSort: d.defaultSort })
  q.push(fieldset(c, c.listFieldNames))
  return [...q, ...extraParams(c)]
}

/** The `fields` parameter over these record fields: the record's id (its id field, else its tiebreak) always comes. */
function fieldset(c: CompiledResource, fields: readonly string[]): QueryParam {
  const key = c.decl.id?.field ?? c.tiebreak
  return { name: 'fields', type: 'fields', maxLength: MAX_FIELDS_LENGTH, fields: [...fields], ...(key && fields.includes(key) ? { key } : {}) }
}

/** A grouped count's parameters: the fields to group by, the list's filter, and how many groups. */
function countQuery(c: CompiledResource): QueryParam[] {
  const d = c.decl
  const q: QueryParam[] = [{ name: 'by', type: 'groupBy', maxItems: MAX_GROUP_BY, fields: [...(d.groupable ?? [])] }]
  if (d.filterable?.length) q.push({ name: 'filter', type: 'filter', maxLength: DEFAULT_RQL_LIMITS.maxLength, fields: [...d.filterable], defaultFilter: d.defaultFilter })
  q.push({ name: 'limit', type: 'limit', min: 1, max: MAX_LIMIT, default: DEFAULT_LIMIT })
  return q
}

export type Operations = { list?: CompiledOperation; get?: CompiledOperation; count?: CompiledOperation }

/** The operations of one compiled resource: its list, its get and its grouped count, where declared. */
export function compileOperations(c: CompiledResource): Operations {
  const d = c.decl
  const base = basePath(c)
  const out: Operations = {}
  const make = (kind: OperationKind, path: string, queryParams: QueryParam[], recordFields: readonly string[]): CompiledOperation => ({
    resource: c,
    kind,
    method: 'GET',
    path,
    route: path.replace(/\{([A-Za-z]+)\}/g, ':$1'),
    pathParams: pathParams(c, path),
    queryParams,
    recordFields,
    tool: kind === 'list' ? d.mcp.list! : kind === 'get' ? d.mcp.get! : COUNT_TOOL,
    name: kind === 'count' ? `countOrg${c.name.charAt(0).toUpperCase()}${c.name.slice(1)}` : camel(kind === 'list' ? d.mcp.list! : d.mcp.get!),
    title: kind === 'list' ? d.mcp.listTitle! : kind === 'get' ? d.mcp.getTitle! : `Count ${(d.plural ?? `${d.title}s`).toLowerCase()} by group`,
  })
  if (d.operations.list) out.list = make('list', base, listQuery(c), c.listFieldNames)
  // A singleton computed by its own SQL (singletonSql) is one document, not a row whose columns can be chosen.
  const getQuery = d.singletonSql ? extraParams(c) : [fieldset(c, [...c.fields.keys()]), ...extraParams(c)]
  if (d.operations.get) out.get = make('get', d.kind === 'singleton' ? base : `${base}/{${d.id!.param}}`, getQuery, [...c.fields.keys()])
  if (d.groupable?.length) out.count = make('count', `/v1/orgs/{orgId}/counts/${c.name}`, countQuery(c), [...d.groupable, 'count'])
  return out
}

/** The path parameter that names the operation's own record (a get's id), if it has one. */
export function recordParam(op: CompiledOperation): PathParam | undefined {
  return op.pathParams.find((p) => (p.type === 'id' ? p.role === 'record' : p.record))
}

/**
 * How a query parameter takes several values: `list`, a comma-separated list (`sort`, `fields`, `by`) that may also be
 * given as the parameter repeated, each occurrence one or more items (`sort=a&sort=b` is `sort=a,b`); `repeat`, values
 * that are only ever repeated and never split (a `strings` parameter: a value may hold a comma); `single`, one value
 * (a repeat is refused). Planning (runtime/core/plan.ts) and the OpenAPI document read it here.
 */
export function valuesOf(p: QueryParam): 'list' | 'repeat' | 'single' {
  switch (p.type) {
    case 'sort':
    case 'fields':
    case 'groupBy':
      return 'list'
    case 'strings':
      return 'repeat'
    default:
      return 'single'
  }
}

/** A query parameter of an operation, by name. */
export function queryParam<T extends QueryParam['type']>(op: CompiledOperation, type: T): Extract<QueryParam, { type: T }> | undefined {
  return op.queryParams.find((p) => p.type === type) as Extract<QueryParam, { type: T }> | undefined
}

/**
 * The operation's path with its parameters filled in (`encode` for each value; default: percent-encoding of a path
 * segment). A parameter without a value is left empty.
 */
export function fillPath(op: Pick<CompiledOperation, 'path'>, values: Readonly<Record<string, string | undefined>>, encode: (s: string) => string = encodeURIComponent): string {
  return op.path.replace(/\{([A-Za-z]+)\}/g, (_m, p: string) => encode(values[p] ?? ''))
}

/** Every operation of the compiled resources, in registry order (a resource's list, get, then count). */
export function allOperations(resources: readonly CompiledResource[]): CompiledOperation[] {
  return resources.flatMap((c) => [c.ops.list, c.ops.get, c.ops.count].filter((o): o is CompiledOperation => o !== undefined))
}

/** The list of the orgs a caller can see (the account's list): where every org id comes from. */
export function orgListOperation(resources: readonly CompiledResource[]): CompiledOperation | undefined {
  return resources.find((c) => c.decl.scope === 'account' && c.ops.list)?.ops.list
}
