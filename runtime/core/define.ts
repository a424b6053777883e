/**
 * `defineResource` — the one declaration a resource needs. From it the runtime derives
 * REST routes, MCP tools, RQL/sort whitelists and their SQL, the OpenAPI document and conformance tests.
 * `resources/*` import only this module (and `fields.ts` re-exported here); the runtime never names a resource.
 */
import { columnName, type FieldMap, type FieldSpec } from './fields.ts'
export { f } from './fields.ts'
export type { FieldSpec, FieldMap } from './fields.ts'

/** How a path id is given and matched. */
export interface IdSpec<K extends string> {
  /** The record field the id addresses. */
  field: K
  /** Name of the path parameter, e.g. `fieldId`, `issueKey`. */
  param: string
  /** `int`: integer primary key passed as a string (docs/contract.md §2); `text`: as is; `base64url`: text encoded with Base64URL (issueKey, docs/contract.md §2). */
  encoding: 'int' | 'text' | 'base64url'
}

/** A query parameter specific to one resource (besides limit, offset, filter, sort). */
export interface ExtraParam {
  name: string
  description: string
  /** `list`: repeatable string (`?license=a&license=b`); the SQL builder receives string[]. */
  type: 'list'
}

/**
 * The SQL a singleton computes, when it is not one row of its table. Receives the scan id placeholder
 * (`$1`) and a `param(value)` binder for extra parameters; returns a SELECT yielding one json column `data`.
 */
export type SingletonSql = (ctx: { scanParam: string; extra: Record<string, string[]>; param: (v: unknown) => string }) => string

export interface ResourceDeclaration<F extends FieldMap = FieldMap> {
  /** Registry key, camelCase and plural for collections (e.g. `connectedApps`). Unique. Everything not declared is derived from it. */
  name: string
  /** Display title, singular, e.g. `Connected app`. */
  title: string
  /** Plural display title when `title + "s"` is wrong (e.g. `Login activity`). */
  plural?: string
  /** Singular of `name` when dropping a final "s" is wrong; used for the get tool's name. */
  singular?: string
  /** One or two sentences: what the records are and what an admin uses them for. */
  description: string
  /** `org` (default): under /v1/orgs/{orgId}, read from the org's latest completed scan; `account`: addressed from the caller's account (orgs). */
  scope?: 'account' | 'org'
  /** Path below `/v1/` (account scope) or `/v1/orgs/{orgId}/` (org scope). Default: `name`. E.g. `objects/{objectId}/fields`. */
  path?: string
  /** SQL table holding the records (snake_case columns, plus `scan_id` for org scope). Default: `name` in snake_case. */
  table?: string
  /** Record fields on the wire. */
  fields: F
  /** Fields of the list record when it is more compact than the single record (orgs). */
  listFields?: readonly (keyof F & string)[]
  /** Column that makes ordering total (stable paging). Defaults to `id.field`, else the field `id`. */
  tiebreak?: keyof F & string
  /** Single-record addressing; absent means no single-record form. */
  id?: IdSpec<keyof F & string>
  /** `collection` (default: list ± get) or `singleton` (one document per org, no paging). */
  kind?: 'collection' | 'singleton'
  /** Which operations exist. Defaults: collection → list (and get when `id` is set); singleton → get. */
  operations?: { list?: boolean; get?: boolean }
  /** Fields usable in `filter`. */
  filterable?: readonly (keyof F & string)[]
  /** Fields usable in `sort`. */
  sortable?: readonly (keyof F & string)[]
  /** JSON:API sort applied when `sort` is omitted. */
  defaultSort?: string
  /**
   * RQL filter applied when `filter` is omitted; a supplied filter replaces it
   * (docs/adr/0002-strict-parameters-ids-and-ordering.md).
   */
  defaultFilter?: string
  /** Pins a field to a path parameter (objects/{objectId}/fields pins sobjectId). */
  parent?: { param: string; field: keyof F & string; resource: string }
  /** All rows in one page, no limit/offset (orgLimits). */
  unpaged?: boolean
  /** Extra query parameters (loginActivity/overview `license`). */
  extraParams?: readonly ExtraParam[]
  /** Custom SQL for singletons computed from other rows. */
  singletonSql?: SingletonSql
  /**
   * Fields a grouped count may group by: `GET /v1/orgs/{orgId}/counts/<name>?by=…` and the MCP tool
   * `count_org_records` answer how many records (of the filter) each combination of their values has. Org-scoped
   * collections without a parent only; scalar fields of few distinct values (enums, booleans, names of a few things).
   */
  groupable?: readonly (keyof F & string)[]
  /**
   * Contributes a count-by-bucket object to the org summary at import time (e.g. issues by priority →
   * the org's `issueCounts`). Keys of `buckets` are values of `countBy`; records of other values are not counted.
   */
  orgSummary?: { field: string; countBy: keyof F & string; buckets: Readonly<Record<string, string>> }
  /**
   * MCP tool names and titles, when the derived ones do not fit. Derived: `list_org_<name>` / `get_org_<singular>`
   * (org scope; `list_<name>` / `get_<singular>` for account scope; a singleton's get tool is `get_org_<name>`), in
   * snake_case; titles `List <plural>` / `Get <title>`.
   */
  mcp?: { list?: string; get?: string; listTitle?: string; getTitle?: string }
  /** Demo example values for docs (optional). */
  example?: Partial<Record<keyof F & string, unknown>>
}

/** A declaration with every default resolved: what the runtime reads. */
export type Resource = Omit<ResourceDeclaration, 'scope' | 'path' | 'table' | 'kind' | 'operations' | 'mcp'> & {
  scope: 'account' | 'org'
  path: string
  table: string
  kind: 'collection' | 'singleton'
  operations: { list: boolean; get: boolean }
  /** Tool names exist exactly for the operations that exist. */
  mcp: { list?: string; get?: string; listTitle?: string; getTitle?: string }
}

/** `Connected app` → `connected app`; acronyms keep their case (`PMD violation`, `ESLint finding`). */
function lowerFirst(title: string): string {
  return /^[A-Z][A-Z]/.test(title) ? title : title.charAt(0).toLowerCase() + title.slice(1)
}

/** Declares a resource; every default not given is derived from `name` and `title` (see the member docs). */
export function defineResource<const F extends FieldMap>(decl: ResourceDeclaration<F>): Resource {
  const d = decl as unknown as ResourceDeclaration
  const kind = d.kind ?? 'collection'
  const scope = d.scope ?? 'org'
  const ops = d.operations ?? {}
  const operations = {
    list: ops.list ?? kind === 'collection',
    get: ops.get ?? (kind === 'singleton' || d.id !== undefined),
  }
  const prefix = scope === 'org' ? '_org' : ''
  const singular = d.singular ?? (kind === 'singleton' ? d.name : d.name.replace(/s$/, ''))
  const plural = d.plural ?? `${d.title}s`
  const mcp: Resource['mcp'] = {}
  if (operations.list) {
    mcp.list = d.mcp?.list ?? `list${prefix}_${columnName(d.name)}`
    mcp.listTitle = d.mcp?.listTitle ?? `List ${lowerFirst(plural)}`
  }
  if (operations.get) {
    mcp.get = d.mcp?.get ?? `get${prefix}_${columnName(singular)}`
    mcp.getTitle = d.mcp?.getTitle ?? `Get ${lowerFirst(d.title)}`
  }
  return { ...d, kind, scope, path: d.path ?? d.name, table: d.table ?? columnName(d.name), operations, mcp }
}

export type { FieldSpec as Field }

/**
 * An MCP prompt: a recipe an assistant follows, written as the exact tool calls to make. The runtime renders it as
 * text (and a JSON plan), and validates it at start-up against the registry: every tool must exist and every step's
 * arguments — filters and sorts included — must be accepted by that tool, so a prompt cannot name what does not work.
 */
export interface PromptDeclaration {
  /** snake_case, unique among prompts. */
  name: string
  title: string
  description: string
  arguments: readonly PromptArgument[]
  /** What the assistant is asked to do; `args` are the caller's arguments (strings), `today` is YYYY-MM-DD (UTC). */
  task: (ctx: PromptContext) => string
  /** The calls to make, in order. */
  steps: (ctx: PromptContext) => readonly PromptStep[]
  /** How to report the results. */
  report: string
}

export interface PromptArgument {
  name: string
  description: string
  required?: boolean
  /**
   * Completion of the argument's values: `org` completes the caller's org ids; `field:<resource>.<field>` the values
   * of an enum field.
   */
  complete?: 'org' | `field:${string}`
  /**
   * A numeric argument (prompt arguments travel as strings): its type and inclusive range. A value that is not one is
   * refused (-32602), never replaced by the default. An argument completing `field:…` must be one of the field's values.
   */
  number?: { integer: boolean; min: number; max: number }
}

export interface PromptContext {
  args: Readonly<Record<string, string | undefined>>
  today: string
}

/**
 * One tool call. Argument values may refer to the records of an earlier step: `$item.<field>` (with `each`: the
 * call is made once per record) or `$items.<field>` (the values of the first `take` records, each a quoted RQL
 * string, comma-separated, e.g. inside `in(...)`). A list of names (`fields`, `by`) is an array.
 */
export interface PromptStep {
  tool: string
  arguments: Readonly<Record<string, string | number | readonly string[] | undefined>>
  /** Why this call: one sentence for the assistant. */
  why: string
  /** The earlier step (1-based) whose records `$item`/`$items` refer to, and how many of them. */
  from?: { step: number; take: number; each?: boolean }
}

/** Declares an MCP prompt. */
export function definePrompt(p: PromptDeclaration): PromptDeclaration {
  return p
}
