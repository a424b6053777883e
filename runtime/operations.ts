/**
 * The compiled model's operations: each list and get of each declaration, compiled once by the registry into what every
 * surface needs — method, path template, path and query parameters with their types, limits, defaults and allowed
 * values, the record fields the answer carries, and the MCP tool's name and title. REST routing, request planning, MCP
 * tool schemas, OpenAPI, the reference docs and the typed client read these and derive nothing themselves: this is the
 * one place that says "limit is 1 to 200, default 50" and the one place that builds a path.
 */
import type { CompiledResource } from './registry.ts'
import { DEFAULT_RQL_LIMITS } from './rql/index.ts'
import { DEFAULT_LIMIT, MAX_FIELDS_LENGTH, MAX_LIMIT, MAX_OFFSET, MAX_SORT_LENGTH, MAX_VALUE_LENGTH, MAX_VALUES } from './limits.ts'

export type OperationKind = 'list' | 'get'

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
  /** A sparse fieldset: a subset of `fields`, in any order; answered in declaration order. */
  | { name: 'fields'; type: 'fields'; maxLength: number; fields: readonly string[] }
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
  /** The MCP tool (and typed client method) of the operation. */
  readonly tool: string
  readonly title: string
}

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
  if (d.sparseFields) q.push({ name: 'fields', type: 'fields', maxLength: MAX_FIELDS_LENGTH, fields: [...c.listFieldNames] })
  return [...q, ...extraParams(c)]
}

/** The operations of one compiled resource: its list, then its get, where declared. */
export function compileOperations(c: CompiledResource): { list?: CompiledOperation; get?: CompiledOperation } {
  const d = c.decl
  const base = basePath(c)
  const out: { list?: CompiledOperation; get?: CompiledOperation } = {}
  const make = (kind: OperationKind, path: string, queryParams: QueryParam[], recordFields: readonly string[]): CompiledOperation => ({
    resource: c,
    kind,
    method: 'GET',
    path,
    route: path.replace(/\{([A-Za-z]+)\}/g, ':$1'),
    pathParams: pathParams(c, path),
    queryParams,
    recordFields,
    tool: kind === 'list' ? d.mcp.list! : d.mcp.get!,
    title: kind === 'list' ? d.mcp.listTitle! : d.mcp.getTitle!,
  })
  if (d.operations.list) out.list = make('list', base, listQuery(c), c.listFieldNames)
  if (d.operations.get) out.get = make('get', d.kind === 'singleton' ? base : `${base}/{${d.id!.param}}`, extraParams(c), [...c.fields.keys()])
  return out
}

/** The path parameter that names the operation's own record (a get's id), if it has one. */
export function recordParam(op: CompiledOperation): PathParam | undefined {
  return op.pathParams.find((p) => (p.type === 'id' ? p.role === 'record' : p.record))
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

/** Every operation of the compiled resources, in registry order (a resource's list before its get). */
export function allOperations(resources: readonly CompiledResource[]): CompiledOperation[] {
  return resources.flatMap((c) => [c.ops.list, c.ops.get].filter((o): o is CompiledOperation => o !== undefined))
}

/** The list of the orgs a caller can see (the account's list): where every org id comes from. */
export function orgListOperation(resources: readonly CompiledResource[]): CompiledOperation | undefined {
  return resources.find((c) => c.decl.scope === 'account' && c.ops.list)?.ops.list
}
