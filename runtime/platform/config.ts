/**
 * Service configuration: quota defaults, ports, pools, limits and the mail server come from the environment and are
 * validated at start-up (every problem listed at once); the clock is injectable, so the version lifecycle and the
 * quota windows are testable. The version table lives in the database (migration 007, `orgscan versions`); the
 * environment only gives its first-start default.
 */
import { readFileSync } from 'node:fs'
import { createPrivateKey, X509Certificate } from 'node:crypto'
import * as v from 'valibot'
import type { VersionEntry } from '../core/version-state.ts'

export type { Clock, Config, MailConfig, McpConfig, OAuthConfig } from '../core/config-types.ts'
import type { Config } from '../core/config-types.ts'

const date = v.pipe(v.string(), v.regex(/^\d{4}-\d{2}-\d{2}$/, 'must be YYYY-MM-DD'))
const VersionSchema = v.object({
  name: v.pipe(v.string(), v.regex(/^v[1-9][0-9]{0,3}$/, 'must be v1, v2, …')),
  status: v.picklist(['current', 'deprecated']),
  sunsetDate: v.optional(date),
})

/** The most worker processes `orgscan serve` starts. */
export const MAX_WORKERS = 64

/** The shortest pepper accepted (ORGSCAN_PEPPER, ORGSCAN_PEPPER_FILE, the embedded data folder's file). */
export const MIN_PEPPER_LENGTH = 32

/** A pepper as read from a file: without its trailing newline (`openssl rand -base64 48 > FILE` writes one). */
export function trimPepper(text: string): string {
  return text.replace(/[\r\n]+$/, '')
}

const intFromEnv = (min: number, max: number) =>
  v.pipe(v.string(), v.regex(/^\d+$/, 'must be a whole number'), v.transform(Number), v.minValue(min), v.maxValue(max))

/** Every setting read from the environment, with its default (README.md's settings table documents each). */
export const EnvSchema = v.object({
  PORT: v.optional(intFromEnv(0, 65535), '3000'),
  HOST: v.optional(v.string(), '127.0.0.1'),
  ORGSCAN_DATA_DIR: v.optional(v.string(), './data'),
  DATABASE_URL: v.optional(v.pipe(v.string(), v.regex(/^postgres(ql)?:\/\//, 'must start with postgres://'))),
  DATABASE_REPLICA_URL: v.optional(v.pipe(v.string(), v.regex(/^postgres(ql)?:\/\//, 'must start with postgres://'))),
  ORGSCAN_POOL_SIZE: v.optional(intFromEnv(1, 100), '4'),
  ORGSCAN_PEPPER: v.optional(v.pipe(v.string(), v.minLength(MIN_PEPPER_LENGTH, `must be at least ${MIN_PEPPER_LENGTH} characters`))),
  ORGSCAN_PEPPER_FILE: v.optional(v.string()),
  ORGSCAN_VERSIONS: v.optional(v.string()),
  ORGSCAN_DEFAULT_DAILY_LIMIT: v.optional(intFromEnv(0, 1_000_000_000), '10000'),
  ORGSCAN_DEFAULT_MONTHLY_LIMIT: v.optional(intFromEnv(0, 1_000_000_000), '200000'),
  ORGSCAN_AUTH_CACHE_MS: v.optional(intFromEnv(0, 3_600_000), '5000'),
  ORGSCAN_SEED_DEMO: v.optional(v.picklist(['true', 'false']), 'true'),
  ORGSCAN_SEED_SCALE: v.optional(v.pipe(v.string(), v.transform(Number), v.number('must be a number'), v.minValue(0.001), v.maxValue(10)), '1'),
  ORGSCAN_BURST_GUARD: v.optional(v.picklist(['on', 'off']), 'off'),
  ORGSCAN_BURST_RATE: v.optional(intFromEnv(1, 1_000_000), '500'),
  ORGSCAN_BURST_SIZE: v.optional(intFromEnv(1, 1_000_000), '1000'),
  ORGSCAN_AUTH_FAILURE_RATE: v.optional(intFromEnv(0, 1_000_000), '10'),
  ORGSCAN_AUTH_FAILURE_BURST: v.optional(intFromEnv(1, 1_000_000), '100'),
  ORGSCAN_STATEMENT_TIMEOUT_MS: v.optional(intFromEnv(0, 600_000), '5000'),
  ORGSCAN_CACHE_MB: v.optional(intFromEnv(0, 1_000_000), '64'),
  ORGSCAN_DRAIN_MS: v.optional(intFromEnv(0, 600_000), '10000'),
  ORGSCAN_IDLE_SOCKET_MS: v.optional(intFromEnv(0, 3_600_000), '60000'),
  ORGSCAN_KEEP_ALIVE_MS: v.optional(intFromEnv(1_000, 3_600_000), '65000'),
  ORGSCAN_REQUEST_TIMEOUT_MS: v.optional(intFromEnv(1_000, 3_600_000), '30000'),
  ORGSCAN_ACCESS_LOG: v.optional(v.picklist(['on', 'off']), 'on'),
  ORGSCAN_ADMIN_PORT: v.optional(intFromEnv(0, 65535)),
  ORGSCAN_KEEP_SCANS: v.optional(intFromEnv(0, 1_000_000), '10'),
  ORGSCAN_PRUNE_EVERY_MS: v.optional(intFromEnv(100, 86_400_000), '600000'),
  ORGSCAN_ADMIN_HOST: v.optional(v.string(), '127.0.0.1'),
  ORGSCAN_ORG_CACHE_MS: v.optional(intFromEnv(0, 60_000), '1000'),
  ORGSCAN_ACCOUNT_CONCURRENCY: v.optional(v.union([v.literal('auto'), intFromEnv(1, 1000)]), 'auto'),
  ORGSCAN_ACCOUNT_QUEUE: v.optional(intFromEnv(0, 100_000), '1000'),
  ORGSCAN_ACCOUNT_QUEUE_WAIT_MS: v.optional(intFromEnv(0, 600_000), '1000'),
  MCP_PORT: v.optional(intFromEnv(0, 65535)),
  ORGSCAN_MCP_VERSIONS: v.optional(v.string()),
  ORGSCAN_MCP_MAX_BODY_BYTES: v.optional(intFromEnv(1024, 100_000_000), '1048576'),
  ORGSCAN_MCP_SESSION_IDLE_MS: v.optional(intFromEnv(1000, 2_592_000_000), '3600000'),
  ORGSCAN_MCP_SESSIONS_PER_ACCOUNT: v.optional(intFromEnv(1, 1_000_000), '1000'),
  ORGSCAN_MCP_SESSIONS_PER_CREDENTIAL: v.optional(intFromEnv(1, 1_000_000), '100'),
  ORGSCAN_MCP_CLIENT_ANSWER_MS: v.optional(intFromEnv(100, 3_600_000), '60000'),
  ORGSCAN_MCP_ALLOWED_ORIGINS: v.optional(v.string(), ''),
  ORGSCAN_ALLOWED_HOSTS: v.optional(v.string(), ''),
  ORGSCAN_PUBLIC_URL: v.optional(v.pipe(v.string(), v.url('must be a URL'), v.regex(/^https?:\/\/[^/?#]+$/, 'must be scheme and host only, e.g. https://orgscan.example.com'))),
  ORGSCAN_ACCESS_TOKEN_TTL_S: v.optional(intFromEnv(60, 86_400), '900'),
  ORGSCAN_REFRESH_TOKEN_TTL_DAYS: v.optional(intFromEnv(1, 365), '30'),
  ORGSCAN_SIGNING_KEY_ROTATION_DAYS: v.optional(intFromEnv(1, 3650), '30'),
  ORGSCAN_OAUTH_REGISTRATIONS_PER_HOUR: v.optional(intFromEnv(1, 1_000_000), '20'),
  ORGSCAN_PASSWORD_SIGNIN: v.optional(v.picklist(['on', 'off']), 'on'),
  ORGSCAN_OIDC_ISSUER: v.optional(v.pipe(v.string(), v.url('must be a URL'))),
  ORGSCAN_OIDC_CLIENT_ID: v.optional(v.pipe(v.string(), v.minLength(1))),
  ORGSCAN_OIDC_CLIENT_SECRET: v.optional(v.pipe(v.string(), v.minLength(1))),
  ORGSCAN_OIDC_NAME: v.optional(v.pipe(v.string(), v.maxLength(60)), 'your identity provider'),
  ORGSCAN_AGENT_CLIENTS: v.optional(v.string(), ''),
  SMTP_URL: v.optional(v.pipe(v.string(), v.regex(/^smtps?:\/\/[^/?#\s]+/, 'must be an smtp:// or smtps:// URL, e.g. smtp://user:password@mail.example.com:587'))),
  SMTP_FROM: v.optional(v.pipe(v.string(), v.maxLength(320), v.regex(/^([^<>]*<[^\s@<>]+@[^\s@<>]+>|[^\s@<>]+@[^\s@<>]+)$/, 'must be an address, e.g. api@example.com or orgscan <api@example.com>'))),
  ORGSCAN_DOCS_URL: v.optional(v.pipe(v.string(), v.url('must be a URL'), v.regex(/^https?:\/\//, 'must be an http(s) URL'))),
  TLS_CERT: v.optional(v.pipe(v.string(), v.minLength(1))),
  TLS_KEY: v.optional(v.pipe(v.string(), v.minLength(1))),
  ORGSCAN_WORKERS: v.optional(intFromEnv(1, MAX_WORKERS), '1'),
})

const list = (s: string) => s.split(',').map((x) => x.trim()).filter((x) => x !== '')

export class ConfigError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ConfigError'
  }
}

export function validateVersions(list: unknown): VersionEntry[] {
  const parsed = v.safeParse(v.pipe(v.array(VersionSchema), v.minLength(1)), list)
  if (!parsed.success) throw new ConfigError(`Invalid version table: ${v.summarize(parsed.issues)}`)
  const out = parsed.output as VersionEntry[]
  for (const e of out) {
    if (e.status === 'deprecated' && !e.sunsetDate) throw new ConfigError(`Version ${e.name} is deprecated but has no sunsetDate`)
    if (e.sunsetDate && Number.isNaN(Date.parse(`${e.sunsetDate}T00:00:00Z`))) throw new ConfigError(`Version ${e.name}: invalid sunsetDate`)
  }
  return out
}

/**
 * Why this configuration cannot run `workers` processes, or undefined when it can: the embedded database can be
 * opened by one process only (runtime/platform/db/lock.ts), so several workers need a PostgreSQL server.
 */
export function workersProblem(c: Pick<Config, 'workers' | 'databaseUrl'>): string | undefined {
  if (c.workers <= 1 || c.databaseUrl) return undefined
  return `${c.workers} workers need a PostgreSQL server (DATABASE_URL): the embedded database can be opened by one process only. Set DATABASE_URL=postgres://…, or run one process (--workers 1, ORGSCAN_WORKERS=1).`
}

/**
 * Two listeners on one port (PORT or --port, MCP_PORT, ORGSCAN_ADMIN_PORT; 0 picks a free one and never clashes),
 * named before the start — it would otherwise fail with "port in use" after migrating and seeding. Checked by
 * `orgscan serve` only, as `workersProblem`.
 */
export function portsProblem(c: Pick<Config, 'port' | 'mcp' | 'admin'>): string | undefined {
  const taken = new Map<number, string>()
  for (const [name, port] of [['the public port (PORT or --port)', c.port], ['MCP_PORT', c.mcp.port], ['ORGSCAN_ADMIN_PORT', c.admin.port]] as const) {
    if (port === undefined || port === 0) continue
    const first = taken.get(port)
    if (first) return `${name} and ${first} are both ${port}: each listener needs a port of its own (leave MCP_PORT unset to serve MCP on the public port).`
    taken.set(port, name)
  }
  return undefined
}

/**
 * The pepper (runtime/platform/secrets.ts): ORGSCAN_PEPPER, or the contents of the file ORGSCAN_PEPPER_FILE names (a mounted
 * secret), never both; undefined when neither is set. Problems are added to `problems`, the file's contents never.
 */
function pepperFromEnv(env: Record<string, string | undefined>, problems: string[]): string | undefined {
  const file = env.ORGSCAN_PEPPER_FILE
  if (!file) return env.ORGSCAN_PEPPER || undefined
  if (env.ORGSCAN_PEPPER !== undefined) {
    problems.push('ORGSCAN_PEPPER and ORGSCAN_PEPPER_FILE are both set: give the pepper one way only')
    return undefined
  }
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (err) {
    problems.push(`ORGSCAN_PEPPER_FILE: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`)
    return undefined
  }
  const pepper = trimPepper(text)
  if (pepper.length < MIN_PEPPER_LENGTH) problems.push(`ORGSCAN_PEPPER_FILE: ${file} must hold at least ${MIN_PEPPER_LENGTH} characters (openssl rand -base64 48 > ${file})`)
  return pepper
}

/** The settings whose default is the empty string (the lists): for them empty means what it says. */
const EMPTY_ALLOWED = new Set(Object.entries(EnvSchema.entries).filter(([, schema]) => v.getDefault(schema as never) === '').map(([name]) => name))

/** Reads configuration from the environment; throws ConfigError with every problem listed. */
export function loadConfig(env: Record<string, string | undefined> = process.env, overrides: Partial<Config> = {}): Config {
  // Every problem is collected and reported at once, the cross-field ones too.
  const problems: string[] = []
  const parsed = v.safeParse(EnvSchema, env)
  // Set but empty (an unresolved `${VAR}` in a compose or env file, say) is refused, never read as unset nor as a value:
  // an empty DATABASE_URL or TLS_CERT must not start a server on demo data or over plain HTTP, nor an empty HOST one
  // listening on every interface. Only the lists may be empty.
  for (const name of Object.keys(EnvSchema.entries)) {
    if (env[name] === '' && !EMPTY_ALLOWED.has(name)) problems.push(`${name}: is set but empty; give a value, or unset it for the default`)
  }
  if (!parsed.success) {
    for (const i of parsed.issues) {
      const name = v.getDotPath(i) ?? '?'
      if (env[name] !== '' || EMPTY_ALLOWED.has(name)) problems.push(`${name}: ${i.message}`)
    }
  }
  const versionTable = (name: string, raw: string | undefined): VersionEntry[] | undefined => {
    if (!raw) return undefined
    try {
      let json: unknown
      try {
        json = JSON.parse(raw)
      } catch {
        throw new ConfigError('must be JSON, e.g. [{"name":"v1","status":"current"}]')
      }
      return validateVersions(json)
    } catch (err) {
      problems.push(`${name}: ${(err as Error).message}`)
      return undefined
    }
  }
  const versions = versionTable('ORGSCAN_VERSIONS', env.ORGSCAN_VERSIONS)
  const mcpVersions = versionTable('ORGSCAN_MCP_VERSIONS', env.ORGSCAN_MCP_VERSIONS)
  const oidc = [env.ORGSCAN_OIDC_ISSUER, env.ORGSCAN_OIDC_CLIENT_ID, env.ORGSCAN_OIDC_CLIENT_SECRET]
  if (oidc.some((x) => x !== undefined) && !oidc.every((x) => x !== undefined)) {
    problems.push('ORGSCAN_OIDC_ISSUER, ORGSCAN_OIDC_CLIENT_ID and ORGSCAN_OIDC_CLIENT_SECRET go together: set all three or none')
  }
  if (env.DATABASE_REPLICA_URL !== undefined && env.DATABASE_URL === undefined) {
    problems.push('DATABASE_REPLICA_URL needs DATABASE_URL: a replica is a PostgreSQL server streaming from the primary DATABASE_URL names; the embedded database has none')
  }
  if ((env.SMTP_URL === undefined) !== (env.SMTP_FROM === undefined)) problems.push('SMTP_URL and SMTP_FROM go together: set both (the mail server and the From address of notices) or neither')
  if ((env.TLS_CERT === undefined) !== (env.TLS_KEY === undefined)) problems.push('TLS_CERT and TLS_KEY go together: set both (PEM files) or neither')
  const pem = (name: string, path: string | undefined): Buffer | undefined => {
    if (!path) return undefined
    try {
      return readFileSync(path)
    } catch (err) {
      problems.push(`${name}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`)
      return undefined
    }
  }
  const pepper = pepperFromEnv(env, problems)
  const cert = pem('TLS_CERT', env.TLS_CERT)
  const key = pem('TLS_KEY', env.TLS_KEY)
  // OpenSSL loads a key that does not belong to the certificate and fails only at the first handshake: check here.
  if (cert && key) {
    try {
      if (!new X509Certificate(cert).checkPrivateKey(createPrivateKey(key))) problems.push('TLS_KEY is not the private key of the certificate in TLS_CERT')
    } catch {
      problems.push('TLS_CERT and TLS_KEY must be a PEM certificate and its PEM private key')
    }
  }
  if (problems.length || !parsed.success) throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`)
  const e = parsed.output
  const tls = cert && key ? { cert, key } : undefined
  return {
    port: e.PORT,
    host: e.HOST,
    dataDir: e.ORGSCAN_DATA_DIR,
    databaseUrl: e.DATABASE_URL,
    replicaUrl: e.DATABASE_REPLICA_URL,
    poolSize: e.ORGSCAN_POOL_SIZE,
    pepper,
    versions,
    defaultDailyLimit: e.ORGSCAN_DEFAULT_DAILY_LIMIT,
    defaultMonthlyLimit: e.ORGSCAN_DEFAULT_MONTHLY_LIMIT,
    authCacheMs: e.ORGSCAN_AUTH_CACHE_MS,
    seedDemo: e.ORGSCAN_SEED_DEMO === 'true',
    seedScale: e.ORGSCAN_SEED_SCALE,
    burstGuard: { enabled: e.ORGSCAN_BURST_GUARD === 'on', ratePerSecond: e.ORGSCAN_BURST_RATE, burst: e.ORGSCAN_BURST_SIZE },
    authFailures: { ratePerSecond: e.ORGSCAN_AUTH_FAILURE_RATE, burst: e.ORGSCAN_AUTH_FAILURE_BURST },
    statementTimeoutMs: e.ORGSCAN_STATEMENT_TIMEOUT_MS,
    cache: { maxBytes: e.ORGSCAN_CACHE_MB * 1024 * 1024, orgStateMs: e.ORGSCAN_ORG_CACHE_MS },
    drainMs: e.ORGSCAN_DRAIN_MS,
    idleSocketMs: e.ORGSCAN_IDLE_SOCKET_MS,
    keepAliveMs: e.ORGSCAN_KEEP_ALIVE_MS,
    requestTimeoutMs: e.ORGSCAN_REQUEST_TIMEOUT_MS,
    accessLog: e.ORGSCAN_ACCESS_LOG === 'on',
    admin: { port: e.ORGSCAN_ADMIN_PORT, host: e.ORGSCAN_ADMIN_HOST },
    retention: { keepScans: e.ORGSCAN_KEEP_SCANS, everyMs: e.ORGSCAN_PRUNE_EVERY_MS },
    fairShare: { perAccount: e.ORGSCAN_ACCOUNT_CONCURRENCY, queueDepth: e.ORGSCAN_ACCOUNT_QUEUE, maxWaitMs: e.ORGSCAN_ACCOUNT_QUEUE_WAIT_MS },
    mcp: {
      port: e.MCP_PORT,
      versions: mcpVersions,
      maxBodyBytes: e.ORGSCAN_MCP_MAX_BODY_BYTES,
      sessionIdleMs: e.ORGSCAN_MCP_SESSION_IDLE_MS,
      sessionsPerAccount: e.ORGSCAN_MCP_SESSIONS_PER_ACCOUNT,
      sessionsPerCredential: e.ORGSCAN_MCP_SESSIONS_PER_CREDENTIAL,
      clientAnswerMs: e.ORGSCAN_MCP_CLIENT_ANSWER_MS,
      allowedOrigins: list(e.ORGSCAN_MCP_ALLOWED_ORIGINS).map((o) => o.toLowerCase().replace(/\/+$/, '')),
      allowedHosts: list(e.ORGSCAN_ALLOWED_HOSTS).map((h) => h.toLowerCase()),
    },
    oauth: {
      publicUrl: e.ORGSCAN_PUBLIC_URL,
      accessTokenTtlMs: e.ORGSCAN_ACCESS_TOKEN_TTL_S * 1000,
      refreshTokenTtlMs: e.ORGSCAN_REFRESH_TOKEN_TTL_DAYS * 86_400_000,
      signingKeyRotationMs: e.ORGSCAN_SIGNING_KEY_ROTATION_DAYS * 86_400_000,
      registrationsPerHour: e.ORGSCAN_OAUTH_REGISTRATIONS_PER_HOUR,
      passwordSignIn: e.ORGSCAN_PASSWORD_SIGNIN === 'on',
      upstream: e.ORGSCAN_OIDC_ISSUER
        ? { issuer: e.ORGSCAN_OIDC_ISSUER, clientId: e.ORGSCAN_OIDC_CLIENT_ID!, clientSecret: e.ORGSCAN_OIDC_CLIENT_SECRET!, name: e.ORGSCAN_OIDC_NAME }
        : undefined,
      agentClients: list(e.ORGSCAN_AGENT_CLIENTS),
    },
    mail: e.SMTP_URL && e.SMTP_FROM ? { url: e.SMTP_URL, from: e.SMTP_FROM } : undefined,
    docsUrl: e.ORGSCAN_DOCS_URL?.replace(/\/+$/, ''),
    tls,
    workers: e.ORGSCAN_WORKERS,
    ...overrides,
  }
}
