/**
 * The typed orgscan client, the package `@orgscan/client`: one named method per list and get endpoint (`listOrgFields`,
 * `allOrgFields`, `getOrgField`, …, named like the MCP tools and the OpenAPI operationIds), typed from the registry
 * (client/generated.ts), and the generic `list`/`all`/`get` they delegate to; async iteration over every page (following `links.next`), and automatic backoff on both 429
 * forms (with a body, or bare): it honours `Retry-After`, backs off exponentially with jitter when there is none, and
 * gives up once the total wait would pass `maxWaitMs`. Failures are `OrgscanError`s carrying the envelope's `code`.
 *
 *   const orgscan = new OrgscanClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: { keyId, secret } })
 *   const { data: orgs } = await orgscan.listOrgs()
 *   for await (const field of orgscan.allOrgFields({ orgId: orgs[0].salesforceId, filter: 'eq(isCustom,true)' })) …
 *   const advice = await orgscan.getOrgIssueRecommendation({ orgId, issueKey })
 */
import { request, type Dispatcher } from 'undici'
import { ENDPOINTS, OrgscanEndpoints, type Resources } from './generated.ts'

export type { Resources } from './generated.ts'

type Name = keyof Resources
type Listable = { [K in Name]: Resources[K]['list'] extends true ? K : never }[Name]
type Gettable = { [K in Name]: Resources[K]['get'] extends true ? K : never }[Name]

/** Path parameters: `orgId` for org-scoped resources, the parent's id for nested ones. */
type PathParams<K extends Name> = (Resources[K]['scope'] extends 'org' ? { orgId: string } : {}) &
  (Resources[K]['parent'] extends string ? { [P in Resources[K]['parent']]: string | number } : {})

export interface ListQuery {
  limit?: number
  offset?: number
  filter?: string
  sort?: string
  fields?: string
  /** Extra repeatable parameters of some endpoints (e.g. `license`). */
  [extra: string]: string | number | string[] | undefined
}

/** A grouped count's answer: the groups, most records first, and the totals. */
export interface Counts<G> {
  data: Array<G & { count: number }>
  meta: { total: number; groups: number; limit: number; hasMore: boolean; requestedLimit?: number }
}

export interface Page<T> {
  data: T[]
  meta: { count: number; hasMore: boolean; limit?: number; offset?: number; requestedLimit?: number }
  links: { self: string; next?: string; prev?: string }
}

export interface ClientOptions {
  /** e.g. `http://127.0.0.1:3000` */
  baseUrl: string
  apiKey?: { keyId: string; secret: string }
  /** A user access token, or a function giving a fresh one. */
  token?: string | (() => string | Promise<string>)
  /** Most retries of one request (429 and 503). Default 5. */
  maxRetries?: number
  /** Most total waiting of one request across retries, ms. Default 60,000. */
  maxWaitMs?: number
  /** First backoff when the server gives no Retry-After, ms (doubled each time, with jitter). Default 500. */
  baseDelayMs?: number
  dispatcher?: Dispatcher
}

/** A failed request: the HTTP status and, when the server sent the error envelope, its `code` and `detail`. */
export class OrgscanError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body: unknown,
    readonly retryAfterSeconds?: number,
  ) {
    super(message)
    this.name = 'OrgscanError'
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export class OrgscanClient extends OrgscanEndpoints {
  private readonly base: string

  constructor(private readonly opts: ClientOptions) {
    super()
    this.base = opts.baseUrl.replace(/\/+$/, '')
    if (!opts.apiKey && !opts.token) throw new TypeError('OrgscanClient needs apiKey or token')
  }

  private async authorization(): Promise<string> {
    if (this.opts.apiKey) return 'Basic ' + Buffer.from(`${this.opts.apiKey.keyId}:${this.opts.apiKey.secret}`).toString('base64')
    const t = typeof this.opts.token === 'function' ? await this.opts.token() : this.opts.token!
    return `Bearer ${t}`
  }

  /** GET a path below the base URL (e.g. `/v1/orgs`), with retries on 429 and 503. */
  async fetchJson<T>(path: string): Promise<T> {
    const maxRetries = this.opts.maxRetries ?? 5
    const maxWait = this.opts.maxWaitMs ?? 60_000
    const baseDelay = this.opts.baseDelayMs ?? 500
    let waited = 0
    for (let attempt = 0; ; attempt++) {
      const res = await request(this.base + path, { method: 'GET', headers: { authorization: await this.authorization(), accept: 'application/json' }, dispatcher: this.opts.dispatcher })
      const text = await res.body.text()
      let body: unknown
      try {
        body = text ? JSON.parse(text) : undefined
      } catch {
        body = text
      }
      if (res.statusCode >= 200 && res.statusCode < 300) return body as T
      const header = res.headers['retry-after']
      const retryAfter = typeof header === 'string' && /^\d+$/.test(header) ? Number(header) : undefined
      const err = (body as { error?: { code?: string; detail?: string } } | undefined)?.error
      const failure = new OrgscanError(res.statusCode, err?.code ?? (res.statusCode === 429 ? 'rate_limited' : `http_${res.statusCode}`), err?.detail ?? `HTTP ${res.statusCode}`, body, retryAfter)
      if ((res.statusCode !== 429 && res.statusCode !== 503) || attempt >= maxRetries) throw failure
      const delay = retryAfter !== undefined ? retryAfter * 1000 : Math.round(baseDelay * 2 ** attempt * (0.5 + Math.random() / 2))
      if (waited + delay > maxWait) throw failure
      waited += delay
      await sleep(delay)
    }
  }

  private path<K extends Name>(name: K, op: 'list' | 'get' | 'count', params: Record<string, unknown>): string {
    const e = ENDPOINTS[name] as { list: string | null; get: string | null; count: string | null; idEncoding: string | null }
    let p = e[op]!
    p = p.replace(/\{([A-Za-z]+)\}/g, (_m, k: string) => {
      const v = params[k]
      if (v === undefined) throw new TypeError(`${String(name)}: ${k} is required`)
      const s = String(v)
      return encodeURIComponent(k === 'id' && e.idEncoding === 'base64url' ? Buffer.from(s).toString('base64url') : s)
    })
    return `/v1/${p}`
  }

  private static query(q: ListQuery): string {
    const qs = new URLSearchParams()
    for (const [k, v] of Object.entries(q)) {
      if (v === undefined) continue
      for (const x of Array.isArray(v) ? v : [v]) qs.append(k, String(x))
    }
    const s = qs.toString()
    return s ? `?${s}` : ''
  }

  /** One page of a list. */
  list<K extends Listable>(name: K, params: PathParams<K> & ListQuery = {} as PathParams<K> & ListQuery): Promise<Page<Resources[K]['listRecord']>> {
    const { orgId, ...rest } = params as Record<string, unknown>
    const pathParams: Record<string, unknown> = { orgId }
    const query: ListQuery = {}
    for (const [k, v] of Object.entries(rest)) {
      if ((ENDPOINTS[name].list ?? '').includes(`{${k}}`)) pathParams[k] = v
      else query[k] = v as ListQuery[string]
    }
    return this.fetchJson(this.path(name, 'list', pathParams) + OrgscanClient.query(query))
  }

  /** Every record of a list, page after page (following `links.next`). */
  async *all<K extends Listable>(name: K, params: PathParams<K> & ListQuery = {} as PathParams<K> & ListQuery): AsyncGenerator<Resources[K]['listRecord']> {
    let page = await this.list(name, params)
    for (;;) {
      yield* page.data
      if (!page.meta.hasMore || !page.links.next) return
      page = await this.fetchJson<Page<Resources[K]['listRecord']>>(page.links.next)
    }
  }

  /** One record (`id` for collections; singletons need only the org). */
  async get<K extends Gettable>(name: K, params: PathParams<K> & (Resources[K]['singleton'] extends true ? {} : { id: string | number }) & { [extra: string]: string | number | string[] | undefined }): Promise<Resources[K]['record']> {
    const { orgId, id, ...rest } = params as Record<string, unknown>
    const body = await this.fetchJson<{ data: Resources[K]['record'] }>(this.path(name, 'get', { orgId, id, ...rest }) + OrgscanClient.query(Object.fromEntries(Object.entries(rest).filter(([k]) => !(ENDPOINTS[name].get ?? '').includes(`{${k}}`))) as ListQuery))
    return body.data
  }

  protected listOf(name: Name, params: Record<string, unknown>): Promise<any> {
    return this.list(name as Listable, params as never)
  }

  protected allOf(name: Name, params: Record<string, unknown>): AsyncGenerator<any> {
    return this.all(name as Listable, params as never)
  }

  /** A grouped count: how many records have each combination of values of `by` (an array or comma-separated). */
  protected countOf(name: Name, params: Record<string, unknown>): Promise<any> {
    const { orgId, by, ...rest } = params
    return this.fetchJson(this.path(name, 'count', { orgId }) + OrgscanClient.query({ ...(rest as ListQuery), by: Array.isArray(by) ? by.join(',') : (by as string) }))
  }

  protected getOf(name: Name, params: Record<string, unknown>): Promise<any> {
    return this.get(name as Gettable, params as never)
  }

  /** The account's quota (free). */
  quota(): Promise<{ data: { rateLimit: { daily: { limit: number; remaining: number; resetAt: string }; monthly: { limit: number; remaining: number; resetAt: string } } } }> {
    return this.fetchJson('/v1/account/quota')
  }
}
