/**
 * The database connection layer: one postgres.js `Sql` for the rest of orgscan, backed either by a
 * PostgreSQL server (`databaseUrl`) or by an embedded PGlite database in a local folder (`dataDir`).
 *
 * Embedded mode (see embedded.ts): PGlite runs in a worker thread behind a Postgres-protocol socket
 * server, and the pool has exactly ONE connection. PGlite is a single Postgres session:
 * - a transaction is global to it, so an open transaction blocks every other connection;
 * - the socket server multiplexes connections onto that session, so two connections could interleave
 *   protocol messages and prepared statements.
 * One pooled connection avoids both. Consequence for callers (applies to both modes, to keep code
 * portable): NEVER run work on the pool (`sql`) while inside `sql.begin(tx => ...)` or `sql.reserve()`
 * — use `tx` only. In embedded mode the transaction holds the only connection, so an `await sql`...``
 * inside it waits for that connection forever (deadlock). Likewise, do not change session settings
 * with plain `SET` (use `SET LOCAL` inside a transaction): in embedded mode the session is shared by
 * everything and outlives connections.
 */
import type net from 'node:net'
import postgres from 'postgres'
import { acquireDataDirLock, type DataDirLock } from './lock.ts'
import { startEmbeddedHost, type EmbeddedHost } from './embedded.ts'
import { assertDriverPatched } from './driver-check.ts'
import { makePrivate } from './data-folder.ts'
import { DiskSpaceWatch } from './disk-space.ts'
import type { Logger } from '../../core/log.ts'

export interface OpenOptions {
  /** PostgreSQL connection URL; takes precedence over `dataDir`. */
  databaseUrl?: string
  /** Folder of the embedded PGlite database (created if missing), or 'memory://' for an in-memory one. */
  dataDir?: string
  /** Pool size for `databaseUrl` (default 4). Ignored for embedded: always 1 connection. */
  poolSize?: number
  /**
   * Separate connections for request reads (`Database.reads`), so that the quota, key lookups and administration on
   * `sql` never wait behind data queries. Its statements are cancelled by the server after `statementTimeoutMs`
   * (0: no limit). PostgreSQL only: the embedded database has a single connection, and PGlite ignores
   * `statement_timeout` (measured), so there `read` is `sql` (docs/adr/0016-fair-share-per-account.md).
   */
  readPool?: { size: number; statementTimeoutMs: number }
  /**
   * A streaming replica of `databaseUrl`: a pool like the read pool (same size and statement timeout) on it, as
   * `Database.replica`. PostgreSQL only. Not contacted here: a replica that is down must not stop the primary from
   * serving (runtime/core/db/replica.ts reads from it and falls back to the primary).
   */
  replicaUrl?: string
  /**
   * Where the embedded database says what it did to its folder (made it private) and that its disk is full. Without
   * it, that is not said (commands).
   */
  log?: Logger
}

export interface Database {
  /** Control pool: quota, authentication, administration, migrations, imports. */
  sql: postgres.Sql
  /**
   * Request reads: with `readPool` on PostgreSQL, `readPool.size` connections, each a pool of one with the statement
   * timeout, so that fair share chooses the connection a read runs on (runtime/platform/pipeline/fair-share.ts); else
   * `[sql]`.
   */
  reads: postgres.Sql[]
  /** Reads of completed scans on a replica (`replicaUrl`), with its display form; absent without one. */
  replica?: { sql: postgres.Sql; describe: string }
  kind: 'postgres' | 'embedded'
  /** Human-readable target, never with a password: 'embedded PGlite at ./data', 'postgres://user@host:5432/db'. */
  describe: string
  /** Why writes fail right now (the embedded database's disk is full), for /readyz; undefined when they do not. */
  writeProblem?: () => string | undefined
  /** Ends the pool; in embedded mode also stops PGlite (data flushed) and releases the folder lock. Idempotent. */
  close(): Promise<void>
}

export const MEMORY_DATA_DIR = 'memory://'

/** Session settings for every connection. Sent as startup parameters (PGlite ignores them; its worker sets them). */
const CONNECTION_PARAMS = { TimeZone: 'UTC', application_name: 'orgscan' }
/**
 * And on the pools of request reads (the read pool, a replica's): prepared statements keep one plan made without
 * their values. By default PostgreSQL plans a prepared statement again for every execution until a plan made
 * without its values is estimated no dearer than those, and a list's `LIMIT $n OFFSET $m` never is (a value-blind
 * plan assumes a tenth of the rows): every list request paid for planning its statement (about 0.3 ms, a quarter
 * of a page's database time), which preparing it was meant to save. The plan made without values is the same
 * index scan, because every index of the scan tables leads with `scan_id`, which no value makes more or less
 * selective (docs/adr/0007-prepared-statements-generic-plans.md).
 */
const READ_PARAMS = { ...CONNECTION_PARAMS, plan_cache_mode: 'force_generic_plan' }
const silent = () => {}

export async function openDatabase(opts: OpenOptions): Promise<Database> {
  assertDriverPatched()
  if (opts.replicaUrl && !opts.databaseUrl) throw new Error('A replica needs a PostgreSQL primary (DATABASE_URL): the embedded database has no replicas.')
  if (opts.databaseUrl) return openPostgres(opts.databaseUrl, opts.poolSize ?? 4, opts.readPool, opts.replicaUrl)
  if (opts.dataDir) return openEmbedded(opts.dataDir, opts.log)
  throw new Error(
    'No database configured: set DATABASE_URL to use a PostgreSQL server, or a data folder for the embedded database.',
  )
}

/** Seconds to wait for a replica's connection: reads fall back to the primary meanwhile, so it is short. */
const REPLICA_CONNECT_TIMEOUT_S = 3

/** A pool of the control connections; with `reads`, of request reads (READ_PARAMS, and the statement timeout). */
function pool(url: string, max: number, reads?: { statementTimeoutMs: number }, connectTimeout = 10): postgres.Sql {
  try {
    const params = reads ? READ_PARAMS : CONNECTION_PARAMS
    const connection = reads && reads.statementTimeoutMs > 0 ? { ...params, statement_timeout: reads.statementTimeoutMs } : params
    return postgresAt(url, { max, idle_timeout: 60, connect_timeout: connectTimeout, connection, onnotice: silent })
  } catch (err) {
    // No `cause`: URL parse errors carry the whole URL (password included) in `input`.
    throw new Error(`Invalid database URL: ${(err as Error).message}`)
  }
}

async function openPostgres(url: string, poolSize: number, readPool: OpenOptions['readPool'], replicaUrl?: string): Promise<Database> {
  const sql = pool(url, poolSize)
  const reads = readPool ? Array.from({ length: readPool.size }, () => pool(url, 1, readPool)) : [sql]
  let replica: Database['replica']
  try {
    replica = replicaUrl ? { sql: pool(replicaUrl, readPool?.size ?? poolSize, { statementTimeoutMs: readPool?.statementTimeoutMs ?? 0 }, REPLICA_CONNECT_TIMEOUT_S), describe: describeDatabaseUrl(replicaUrl) } : undefined
  } catch (err) {
    await Promise.all([sql, ...reads].map((p) => p.end({ timeout: 0 }))).catch(silent)
    throw new Error(`Invalid replica URL: ${(err as Error).message.replace(/^Invalid database URL: /, '')}`)
  }
  const pools = [...new Set([sql, ...reads, replica?.sql])].filter((p) => p !== undefined)
  const end = () => Promise.all(pools.map((p) => p.end({ timeout: 5 }))).then(() => undefined)
  const describe = describeParsed(sql.options, url)
  try {
    await sql`select 1`
    if (reads[0] !== sql) await reads[0]`select 1`
  } catch (err) {
    await Promise.all(pools.map((p) => p.end({ timeout: 0 }))).catch(silent)
    throw new Error(`Cannot connect to PostgreSQL at ${describe}: ${(err as Error).message}`, { cause: err })
  }
  return { sql, reads, replica, kind: 'postgres', describe, close: once(end) }
}

/** Embedded hosts by Database, for tests and diagnostics (`embeddedHostOf`). */
const hosts = new WeakMap<Database, EmbeddedHost>()

/** The worker host behind an embedded Database (tests use it to simulate a worker crash). */
export function embeddedHostOf(db: Database): EmbeddedHost | undefined {
  return hosts.get(db)
}

async function openEmbedded(dataDir: string, log?: Logger): Promise<Database> {
  const memory = dataDir === MEMORY_DATA_DIR
  if (!memory && /^[a-z][a-z0-9+.-]*:\/\//i.test(dataDir)) {
    throw new Error(`Unsupported data folder ${dataDir}: give a folder path, or ${MEMORY_DATA_DIR} for an in-memory database.`)
  }
  const describe = memory ? 'embedded PGlite (in memory)' : `embedded PGlite at ${dataDir}`
  // The lock is taken by this process (the worker is one of its threads) before PGlite touches the folder.
  const lock: DataDirLock | undefined = memory ? undefined : acquireDataDirLock(dataDir)
  const target = lock ? lock.dir : MEMORY_DATA_DIR
  const space = lock ? new DiskSpaceWatch(lock.dir, log) : undefined

  let host: EmbeddedHost
  try {
    if (lock?.takenOver !== undefined) {
      log?.warn({ msg: `the orgscan process that last used ${lock.dir} (pid ${lock.takenOver}) stopped without closing it: what it had not committed was rolled back (an import it was running was not saved: run it again; an interrupted first start is seeded again)` })
    }
    if (lock) {
      const changed = makePrivate(lock.dir)
      if (changed > 0) log?.info({ msg: `data folder ${lock.dir}: ${changed} files and folders could be read or written by other users; they are now the owner's alone (0600 files, 0700 folders)` })
    }
    host = await startEmbeddedHost(target, { onNoSpace: space && (() => space.noteFull()) })
  } catch (err) {
    lock?.release()
    throw err
  }
  const { endpoint } = host

  // `socket` (returns a connected socket) is supported by postgres.js at runtime (connection.js,
  // createSocket) but missing from its type declarations.
  const options: postgres.Options<{}> & { socket: () => Promise<net.Socket> } = {
    // Our own connected sockets: a dead worker then rejects queries with a clear error (embedded.ts).
    socket: host.connect,
    // Only used by postgres.js in error messages when `socket` is given.
    ...('path' in endpoint ? { path: endpoint.path } : { host: endpoint.host, port: endpoint.port }),
    database: 'postgres',
    username: 'postgres',
    // Exactly one connection, see the file comment. Never closed on idle or age: the socket server
    // accepts one connection, and a reconnect could race the server's cleanup of the old one.
    max: 1,
    idle_timeout: 0,
    max_lifetime: 0,
    connect_timeout: 30,
    connection: CONNECTION_PARAMS,
    onnotice: silent,
  }
  const sql = postgres(options)

  const close = once(async () => {
    try {
      // After a worker death nothing can complete: don't wait for the queries it took down.
      await sql.end({ timeout: host.failure ? 0 : 5 })
    } finally {
      try {
        await host.stop()
      } finally {
        lock?.release() // only after PGlite is closed (or its worker gone): nobody holds the folder any more
      }
    }
  })

  try {
    const [row] = await sql<{ TimeZone: string }[]>`show TimeZone`
    if (row?.TimeZone !== 'UTC') throw new Error(`session TimeZone is ${row?.TimeZone}, expected UTC`)
  } catch (err) {
    await close().catch(silent)
    throw new Error(`Cannot open the ${describe}: ${(err as Error).message}`, { cause: err })
  }

  const db: Database = { sql, reads: [sql], kind: 'embedded', describe, close, writeProblem: space && (() => space.problem()) }
  hosts.set(db, host)
  return db
}

/**
 * A connection URL for display, without the password: 'postgres://app:secret@db:5432/orgscan' →
 * 'postgres://app@db:5432/orgscan'. Built from what postgres.js parsed (so it shows what will really be
 * used, PG* environment fallbacks included), not by editing the URL. Safety net for malformed URLs (an
 * unencoded '/', '?' or '@' in a password can shift parts around): any field equal to a password-looking
 * fragment of the input, and any occurrence of one of 4+ characters, is masked as '***'.
 */
export function describeDatabaseUrl(url: string): string {
  let options: postgres.ParsedOptions
  try {
    // Parsing only: a postgres.js instance opens no connection before its first query.
    options = postgresAt(url, { max: 1 }).options
  } catch {
    return INVALID_URL
  }
  return describeParsed(options, url)
}

const INVALID_URL = '(invalid database URL)'

/**
 * libpq's `host` and `port` query parameters, which postgres.js does not read (it would send them to the server as
 * settings, refused as unknown): `postgres://app@/orgscan?host=/var/run/postgresql` connects through the Unix-domain
 * socket `/var/run/postgresql/.s.PGSQL.5432`, as psql does. They win over the URL's own host and port, as in libpq. A
 * URL with a user but no host (`app@/orgscan`), which the URL parser refuses, is given a stand-in host that the
 * parameter then replaces. Returns the URL without them, and them as postgres.js options.
 */
function libpqTarget(url: string): { url: string; where: { host?: string; port?: number } } {
  const q = url.indexOf('?')
  if (q < 0) return { url, where: {} }
  const where: { host?: string; port?: number } = {}
  const kept: string[] = []
  for (const pair of url.slice(q + 1).split('&')) {
    const eq = pair.indexOf('=')
    const name = eq < 0 ? pair : pair.slice(0, eq)
    let value: string
    try {
      value = decodeURIComponent(eq < 0 ? '' : pair.slice(eq + 1))
    } catch {
      value = ''
    }
    if (name === 'host' && value) where.host = value
    else if (name === 'port' && /^\d{1,5}$/.test(value)) where.port = Number(value)
    else kept.push(pair)
  }
  if (where.host === undefined && where.port === undefined) return { url, where }
  let base = url.slice(0, q)
  if (where.host !== undefined) base = base.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/?#]*@)(?=\/|$)/i, '$1localhost')
  return { url: kept.length ? `${base}?${kept.join('&')}` : base, where }
}

/** A postgres.js pool on `url`, with libpq's `host` and `port` parameters read (`libpqTarget`). */
function postgresAt(url: string, options: postgres.Options<{}>): postgres.Sql {
  const { url: rest, where } = libpqTarget(url)
  return postgres(rest, { ...options, ...where })
}

function describeParsed(o: postgres.ParsedOptions, url: string): string {
  const secrets = secretsIn(url, (o as { pass?: unknown }).pass)
  const mask = (field: string) => {
    if (secrets.includes(field)) return '***'
    for (const secret of secrets) if (secret.length >= 4) field = field.split(secret).join('***')
    return field
  }
  const target = o.path ? String(o.path) : o.host.map((h, i) => `${h}:${o.port[i] ?? o.port[0]}`).join(',')
  return `postgres://${o.user ? `${mask(o.user)}@` : ''}${mask(target)}/${mask(o.database)}`
}

/** The parsed password plus every raw form a password can take in the URL. */
function secretsIn(url: string, parsedPass: unknown): string[] {
  const out = new Set<string>()
  const add = (v: string) => {
    out.add(v)
    try {
      out.add(decodeURIComponent(v))
    } catch {
      // not percent-decodable: the raw form is enough
    }
  }
  if (typeof parsedPass === 'string' && parsedPass) add(parsedPass)
  const scheme = url.indexOf('://')
  const rest = scheme >= 0 ? url.slice(scheme + 3) : url
  const at = rest.lastIndexOf('@')
  if (at >= 0) {
    const userinfo = rest.slice(0, at)
    const colon = userinfo.indexOf(':')
    if (colon >= 0 && colon < userinfo.length - 1) add(userinfo.slice(colon + 1))
  }
  for (const m of url.matchAll(/[?&][^=&#]*pass[^=&#]*=([^&#]*)/gi)) if (m[1]) add(m[1])
  out.delete('')
  return [...out]
}

function once(fn: () => Promise<void>): () => Promise<void> {
  let p: Promise<void> | undefined
  return () => (p ??= fn())
}
