/**
 * Starts the real service on a loopback port over a fresh database (embedded PGlite, or a fresh database on
 * TEST_DATABASE_URL), seeded with demo data, and gives tests real credentials. Torn down with the test.
 */
import type { Test } from 'tap'
import { request, type Dispatcher } from 'undici'
import { prompts, registry } from '../../resources/index.ts'
import { seedDemo, type SeedResult } from '../../demo/seed.ts'
import { loadConfig, type Clock, type Config } from '../../runtime/platform/config.ts'
import { startService, type RunningService, type ServiceOptions } from '../../runtime/service/service.ts'
import { createKey, createUser, grantOrgAccess } from '../../runtime/platform/admin.ts'
import { createLogger } from '../../runtime/core/log.ts'
import { createTestDatabase } from './test-db.ts'
import { SEED_SCALE } from './templates.ts'

export const TEST_PEPPER = 'test-pepper-0123456789abcdefghijklmnop'
export { SEED_SCALE }

/** What a test may change of a `get`: the method (to see it refused) and extra headers. */
export interface GetInit {
  method?: string
  headers?: Record<string, string>
  /**
   * Retry a 429 concurrency_limited after its Retry-After, as a client sending many reads at once does (a read that
   * waits past 1 s for its account's turn gets one: on a busy machine, a test's parallel reads can).
   */
  retryBusy?: boolean
}

export interface TestService {
  svc: RunningService
  /** Where the database lives, to reopen it after the service stopped. */
  location: { databaseUrl?: string; dataDir?: string }
  url: string
  seed: SeedResult
  /** Basic header for a fresh key of the account (optionally user-scoped). */
  keyHeader(accountId: string, userId?: string | null): Promise<string>
  get(path: string, auth?: string | null, init?: GetInit): Promise<{ status: number; headers: Headers; body: any; text: string }>
}

/** A response's headers as fetch gives them (a `Headers`, repeated fields appended in order). */
function responseHeaders(raw: Record<string, string | string[] | undefined>): Headers {
  const h = new Headers()
  for (const [k, v] of Object.entries(raw)) {
    if (Array.isArray(v)) for (const x of v) h.append(k, x)
    else if (v !== undefined) h.append(k, v)
  }
  return h
}

export function basic(keyId: string, secret: string): string {
  return 'Basic ' + Buffer.from(`${keyId}:${secret}`).toString('base64')
}

export async function startTestService(
  t: Test,
  opts: {
    config?: Partial<Config>
    /** Runs once the test's database exists, before the service starts; its settings are added (e.g. a replica's URL). */
    beforeStart?: (location: { databaseUrl?: string; dataDir?: string }) => Promise<Partial<Config>>
    clock?: Clock; quota?: ServiceOptions['quota']; seed?: boolean; seedScale?: number; mcpExtraTools?: ServiceOptions['mcpExtraTools']; mcpExtraPrompts?: ServiceOptions['mcpExtraPrompts']; mcpExtraResources?: ServiceOptions['mcpExtraResources']; registry?: ServiceOptions['registry']; accessLog?: ServiceOptions['accessLog']
    /** Receives the service's log lines (JSON); by default they are dropped. */
    log?: (line: string) => void
  } = {},
): Promise<TestService> {
  // A copy of the run's seeded template when the test wants the default demo data, else of the empty one.
  const scale = opts.seedScale ?? SEED_SCALE
  const db = await createTestDatabase({ template: opts.seed !== false && scale === SEED_SCALE ? 'seeded' : 'empty' })
  const config = loadConfig({}, {
    port: 0,
    host: '127.0.0.1',
    dataDir: db.dataDir ?? 'memory://',
    databaseUrl: db.databaseUrl,
    pepper: TEST_PEPPER,
    // Authentication is cached as in production (ORGSCAN_AUTH_CACHE_MS, 5 s): a test that changes keys behind the
    // service's back and wants the change seen at once asks for `authCacheMs: 0`.
    // Tests change orgs and grants behind the service's back (direct SQL, imports in the test process): the org
    // state is read every time unless a test asks for the production bound. The response cache is on (it is keyed
    // by the scan read, so such changes cannot make it serve a stale answer).
    cache: { maxBytes: 64 * 1024 * 1024, orgStateMs: 0 },
    // No background pruning unless a test asks for it (test/ops/retention.test.ts).
    retention: { keepScans: 0, everyMs: 600_000 },
    seedDemo: false,
    ...opts.config,
    ...(await opts.beforeStart?.({ databaseUrl: db.databaseUrl, dataDir: db.dataDir })),
  })
  let seed: SeedResult = db.seed ?? ({ accounts: [], orgs: [], users: [] } as unknown as SeedResult)
  // A start that fails (a test of refused configuration) leaves no database behind.
  const svc = await startService(config, {
    registry: opts.registry ?? registry,
    prompts,
    mcpExtraTools: opts.mcpExtraTools,
    mcpExtraPrompts: opts.mcpExtraPrompts,
    mcpExtraResources: opts.mcpExtraResources,
    clock: opts.clock,
    log: createLogger(opts.log ?? (() => undefined)),
    quota: opts.quota,
    accessLog: opts.accessLog,
    onEmptyDatabase: async ({ db: d, resources }) => {
      if (opts.seed !== false) seed = await seedDemo(d.sql, resources, { scale })
    },
  }).catch(async (e: unknown) => {
    await db.drop()
    throw e
  })
  t.teardown(async () => {
    await svc.close()
    await db.drop()
  })
  const ts: TestService = {
    svc,
    location: { databaseUrl: db.databaseUrl, dataDir: db.dataDir },
    url: svc.url,
    seed,
    async keyHeader(accountId, userId = null) {
      const k = await createKey(svc.db.sql, svc.pepper, accountId, { userId })
      return basic(k.keyId, k.secret)
    },
    async get(path, auth, init = {}) {
      for (let retry = 0; ; retry++) {
        const r = await getOnce(path, auth, init)
        if (!init.retryBusy || retry === 10 || r.status !== 429 || r.body?.error?.code !== 'concurrency_limited') return r
        await new Promise((done) => setTimeout(done, Number(r.headers.get('retry-after') ?? 1) * 1000))
      }
    },
  }
  async function getOnce(path: string, auth: string | null | undefined, init: GetInit): Promise<{ status: number; headers: Headers; body: any; text: string }> {
    // undici's request rather than fetch: the same HTTP/1.1 client without the WHATWG layer (streams, Headers,
    // AbortSignal), which was the largest cost of the test process in the files that send thousands of requests.
    // As fetch would, it asks for any type; nothing here asks for compression, and the service sends none.
    const headers: Record<string, string> = { accept: '*/*', ...init.headers }
    if (auth) headers.authorization = auth
    const res = await request(svc.url + path, { method: (init.method ?? 'GET') as Dispatcher.HttpMethod, headers })
    const text = await res.body.text()
    let body: unknown = undefined
    try {
      body = text ? JSON.parse(text) : undefined
    } catch {
      body = undefined
    }
    return { status: res.statusCode, headers: responseHeaders(res.headers), body, text }
  }
  return ts
}

export { createUser, grantOrgAccess }
