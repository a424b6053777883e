/**
 * `defineResource` — the one declaration a resource needs (DESIGN.md "Shape"). From it the runtime derives
 * REST routes, MCP tools, RQL/sort whitelists and their SQL, the OpenAPI document and conformance tests.
 * `resources/*` import only this module (and `fields.ts` re-exported here); the runtime never names a resource.
 */
import type { FieldMap, FieldSpec } from './fields.ts'
export { f } from './fields.ts'
export type { FieldSpec, FieldMap } from './fields.ts'

/** How a path id is given and matched. */
export interface IdSpec<K extends string> {
  /** The record field the id addresses. */
  field: K
  /** Name of the path parameter, e.g. `fieldId`, `issueKey`. */
  param: string
  /** `int`: integer primary key passed as a string (contract §2); `text`: as is; `base64url`: text encoded with Base64URL (issueKey, contract §2). */
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
  /** Registry key and REST collection segment's identity, e.g. `connectedApps`. Unique. */
  name: string
  /** Display title, singular, e.g. `Connected app`. */
  title: string
  /** One or two sentences: what the records are and what an admin uses them for. */
  description: string
  /** `account`: addressed from the caller's account (orgs); `org`: under /v1/orgs/{orgId}, read from the latest scan. */
  scope: 'account' | 'org'
  /** Path below `/v1/` (account scope) or below `/v1/orgs/{orgId}/` (org scope), e.g. `fields`, `objects/{objectId}/fields`. */
  path: string
  /** SQL table holding the records (snake_case columns, plus `scan_id` for org scope). */
  table: string
  /** Record fields on the wire. */
  fields: F
  /** Fields of the list record when it is more compact than the single record (orgs). */
  listFields?: readonly (keyof F & string)[]
  /** Column that makes ordering total (stable paging). Defaults to `id.field`, else the field `id`. */
  tiebreak?: keyof F & string
  /** Single-record addressing; absent means no single-record form. */
  id?: IdSpec<keyof F & string>
  /** `collection` (list ± get) or `singleton` (one document per org, no paging). */
  kind: 'collection' | 'singleton'
  /** Which operations exist. Defaults: collection → list (and get when `id` is set); singleton → get. */
  operations?: { list?: boolean; get?: boolean }
  /** Fields usable in `filter`. */
  filterable?: readonly (keyof F & string)[]
  /** Fields usable in `sort`. */
  sortable?: readonly (keyof F & string)[]
  /** JSON:API sort applied when `sort` is omitted (contract §4.1). */
  defaultSort?: string
  /** RQL filter applied when `filter` is omitted; a supplied filter replaces it (docs/decisions.md). */
  defaultFilter?: string
  /** Pins a field to a path parameter (objects/{objectId}/fields pins sobjectId). */
  parent?: { param: string; field: keyof F & string; resource: string }
  /** All rows in one page, no limit/offset (orgLimits). */
  unpaged?: boolean
  /** Accept the sparse fieldset parameter `fields` (issues list). */
  sparseFields?: boolean
  /** Extra query parameters (loginActivity/overview `license`). */
  extraParams?: readonly ExtraParam[]
  /** Custom SQL for singletons computed from other rows. */
  singletonSql?: SingletonSql
  /**
   * Contributes a count-by-bucket object to the org summary at import time (e.g. issues by priority →
   * the org's `issueCounts`). Keys of `buckets` are values of `countBy`; records of other values are not counted.
   */
  orgSummary?: { field: string; countBy: keyof F & string; buckets: Readonly<Record<string, string>> }
  /** MCP tool names (contract §4.3). */
  mcp?: { list?: string; get?: string; listTitle?: string; getTitle?: string }
  /** Demo example values for docs (optional). */
  example?: Partial<Record<keyof F & string, unknown>>
}

/** A validated, normalised declaration. */
export type Resource = ResourceDeclaration & { operations: { list: boolean; get: boolean } }

/** Declares a resource. Field-name arguments are type-checked against the record's fields. */
export function defineResource<const F extends FieldMap>(decl: ResourceDeclaration<F>): Resource {
  const ops = decl.operations ?? {}
  const operations = {
    list: ops.list ?? decl.kind === 'collection',
    get: ops.get ?? (decl.kind === 'singleton' || decl.id !== undefined),
  }
  return { ...(decl as unknown as ResourceDeclaration), operations }
}

export type { FieldSpec as Field }
