/**
 * The service's settings as the runtime reads them (runtime/platform/config.ts makes them from the environment and checks them).
 */
import type { VersionEntry } from './version-state.ts'

export interface Config {
  port: number
  host: string
  /** Embedded PGlite folder, used when databaseUrl is unset. */
  dataDir: string
  databaseUrl?: string
  /**
   * A streaming replica of `databaseUrl` (PostgreSQL only): the records of completed scans are read there; everything
   * that decides access or writes stays on the primary (docs/adr/0037-read-replica-for-completed-scans.md).
   */
  replicaUrl?: string
  poolSize: number
  /**
   * Server-side secret mixed into API key hashes (HMAC-SHA-256 key), from ORGSCAN_PEPPER or ORGSCAN_PEPPER_FILE;
   * undefined: the embedded database's own (runtime/platform/secrets.ts), and PostgreSQL refuses to start.
   */
  pepper?: string
  /**
   * REST version table of a database whose table was never set (ORGSCAN_VERSIONS): adopted by the first start, then
   * ignored (runtime/platform/versions/adopt.ts); undefined: the migration's default, v1 current.
   */
  versions?: VersionEntry[]
  /** Default quota of new accounts. */
  defaultDailyLimit: number
  defaultMonthlyLimit: number
  /** How long a verified API key stays cached in a process (revocation delay), ms. */
  authCacheMs: number
  /** Seed demo data on first start of an empty database. */
  seedDemo: boolean
  /** Size of the demo seed (1 = one large org with 20,000+ fields). */
  seedScale: number
  /** Edge shedding (a bare 429): per-client token bucket before authentication; off by default. */
  burstGuard: { enabled: boolean; ratePerSecond: number; burst: number }
  /** Failed authentications per client address: a bucket of `burst`, refilled at `ratePerSecond` (0: no limit). */
  authFailures: { ratePerSecond: number; burst: number }
  /** Request reads on PostgreSQL are cancelled by the server after this long (0: never). Ignored by the embedded database. */
  statementTimeoutMs: number
  /** How long a stopping process lets answers in progress finish (SIGTERM), ms. */
  drainMs: number
  /**
   * A connection with nothing read or written for this long is closed (0: never), ms: a client that stops reading its
   * answers holds them in the server (and pins response-cache segments) no longer than this.
   */
  idleSocketMs: number
  /**
   * How long a keep-alive connection may wait for its next request, ms (`Keep-Alive: timeout=` in whole seconds): keep
   * it above a load balancer's idle timeout. While a connection waits for its next request this replaces
   * `idleSocketMs`.
   */
  keepAliveMs: number
  /** The time a request's head and body have to arrive, ms: past it, a 400 and the connection closed. */
  requestTimeoutMs: number
  /** One JSON line per request on stderr (`orgscan serve`). */
  accessLog: boolean
  /** Retention: scans kept per org (0: all), and how often older ones are pruned, ms. */
  retention: { keepScans: number; everyMs: number }
  /** The admin listener (Prometheus metrics): off unless a port is given; loopback unless a host is given. */
  admin: { port?: number; host: string }
  /** Hot reads (runtime/core/cache/): the response cache's bound in bytes (0: off), and how long an org's state is trusted. */
  cache: { maxBytes: number; orgStateMs: number }
  /** Fair share per process (docs/adr/0100-fair-share.md): reads of one account at once (held below the read pool), waiting, and the longest wait for a read to start. */
  fairShare: { perAccount: number | 'auto'; queueDepth: number; maxWaitMs: number }
  /** MCP server (docs/mcp.md). */
  mcp: McpConfig
  /** OAuth 2.0 authorization server (docs/authentication.md). */
  oauth: OAuthConfig
  /** The SMTP server deprecation notices go through (`orgscan versions notify`); undefined: none configured. */
  mail?: MailConfig
  /** Where the documentation (docs/) is published, for links in notices; undefined: notices name docs/versioning.md. */
  docsUrl?: string
  /** Serve HTTPS directly (TLS 1.2+, AES-GCM suites) with this certificate and key; undefined: plain HTTP. */
  tls?: { cert: Buffer; key: Buffer }
  /** `orgscan serve`: processes sharing the port (node:cluster; docs/operating.md "Several processes"); 1: one process, no primary. */
  workers: number
}

export interface OAuthConfig {
  /** The service's public base URL (issuer, resource identifiers); default: the MCP listener's own address. */
  publicUrl?: string
  accessTokenTtlMs: number
  refreshTokenTtlMs: number
  /** Signing keys are replaced after this age. */
  signingKeyRotationMs: number
  /** Automatic registrations one client address may make per hour. */
  registrationsPerHour: number
  /** The built-in e-mail and password sign-in page. */
  passwordSignIn: boolean
  /** Sign-in delegated to an upstream OpenID Connect provider. */
  upstream?: { issuer: string; clientId: string; clientSecret: string; name: string }
  /** Client ids of the service's own assistant agents: their verified tokens consume no quota. */
  agentClients: string[]
}

export interface MailConfig {
  /** smtp:// or smtps:// URL, credentials included (never printed). */
  url: string
  /** The From address of notices, e.g. `orgscan <api@example.com>`. */
  from: string
}

export interface McpConfig {
  /** A listener of its own for MCP (and its `GET /`); undefined: MCP is served on the REST listener. */
  port?: number
  /** MCP's first-start version table (ORGSCAN_MCP_VERSIONS), as `Config.versions` is REST's. */
  versions?: VersionEntry[]
  /** Largest request body, bytes. */
  maxBodyBytes: number
  /** A session idle this long has expired, ms. */
  sessionIdleMs: number
  /** Live sessions one account may hold. */
  sessionsPerAccount: number
  /**
   * Live sessions one credential (an API key, or one user's sign-in through one OAuth client) may hold; opening one more
   * ends that credential's least recently used session, so one client that never ends its sessions cannot fill the
   * account's allowance for the others.
   */
  sessionsPerCredential: number
  /**
   * How long a tool call of a 2025-era session waits for the client's answer to a request it sent it (sampling,
   * elicitation) before it fails, ms.
   */
  clientAnswerMs: number
  /** Browser origins allowed to call MCP besides loopback ones (DNS-rebinding protection). */
  allowedOrigins: string[]
  /** Host names MCP answers to; empty: any when listening beyond loopback, loopback names only on a loopback listener. */
  allowedHosts: string[]
}

export type { Clock } from './clock.ts'
