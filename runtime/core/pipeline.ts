/**
 * The one request pipeline's contract (runtime/platform/pipeline/pipeline.ts implements it): what a surface hands it and what it
 * answers. Surfaces (REST, MCP) know the pipeline only through these types.
 */
import type { ApiError } from './errors.ts'
import type { Principal } from './principal.ts'
import type { QueryInput, Surface } from './plan.ts'
import type { CompiledResource } from './registry.ts'
import type { OperationKind } from './operations.ts'
import type { QuotaChargeWindow, QuotaState } from './quota-types.ts'
import type { ReadResult } from './read.ts'

/**
 * The connection a request came on (its socket): failed authentications are counted by its address, and a header it
 * had verified is recognised when it sends it again.
 */
export interface Client {
  readonly remoteAddress?: string
}

/** What a surface asks for, already routed. */
export type Operation =
  | {
      kind: 'read'
      resource: CompiledResource
      op: OperationKind
      /** Path parameters by name (orgId, the id parameter, the parent's parameter). */
      params: Readonly<Record<string, string | undefined>>
      /** Parsed lazily, inside the pipeline, so that a malformed query is a charged 400 like any other. */
      query: () => QueryInput
      /**
       * Not charged: reads an MCP client makes while listing or completing
       * (docs/adr/0024-mcp-errors-quota-and-payload.md).
       */
      free?: boolean
      /**
       * An answer from the response cache comes with its records lent as bytes (`ReadResult.dataBytes`, to be
       * released once written) rather than decoded to text. Default: on REST, which writes them as they are.
       */
      lend?: boolean
    }
  | { kind: 'quota'; orgId?: string; /** The raw query string: the quota endpoints take no parameters. */ query?: string }

/** Rate-limit information for the answer: the REST headers, and the window for surfaces without headers. */
export interface RateInfo {
  headers: Readonly<Record<string, string>>
  window?: QuotaChargeWindow
}

export type Outcome =
  | { ok: true; kind: 'read'; result: ReadResult; rate: RateInfo }
  | { ok: true; kind: 'quota'; state: QuotaState['body']; rate: RateInfo }
  | { ok: false; error: ApiError; rate?: RateInfo }

export interface Pipeline {
  /**
   * Who is calling: a Principal, or throws ApiError (401, or 429 when the client sent too many bad credentials).
   * `version`: the major the request called, recorded against the principal (runtime/platform/versions/usage.ts).
   */
  authenticate(authorization: string | undefined, client: Client, surface: Surface, version?: string): Promise<Principal>
  /** Runs an operation for an authenticated principal; never throws. */
  execute(principal: Principal, operation: Operation, surface: Surface): Promise<Outcome>
  /**
   * Refuses an operation the principal may not run (a token without the scope it needs): the error, not charged, with
   * the account's rate-limit headers as on any authenticated answer. Never throws.
   */
  refuse(principal: Principal, error: ApiError): Promise<Outcome>
}
