/**
 * What `orgscan serve` does around the service, the same with one process and with `--workers N`: the access log,
 * the demo seed of a first start, the start-up banner (the `--json` line tools and tests read), and draining on
 * SIGTERM/SIGINT.
 */
import { stderrAccessSink } from '../../runtime/platform/http/access-sink.ts'
import type postgres from 'postgres'
import { deferredSeed, seedDemoIn, seedDeferred, SeedStopped, vacuumSeeded } from '../../demo/seed.ts'
import { DEMO_ACCOUNTS, DEMO_USER } from '../../demo/orgs.ts'
import type { Config } from '../../runtime/platform/config.ts'
import type { RunningService, ServiceOptions } from '../../runtime/service/service.ts'
import type { PendingOrgs } from '../../runtime/core/pending-orgs.ts'
import { createAccount, createKey } from '../../runtime/platform/admin.ts'
import { demoCredentials, demoPassword } from '../../runtime/platform/secrets.ts'
import { hashPassword } from '../../runtime/platform/oauth/crypto.ts'
import type { Logger } from '../../runtime/core/log.ts'

export const say = (s: string) => void process.stderr.write(s + '\n')

/** A listener that cannot bind: which address, and how to choose another. */
export class PortInUseError extends Error {
  constructor(host: string, port: number) {
    super(`Port ${port} on ${host} is already in use (another orgscan or another program). Stop it, or choose another port: PORT=${port + 1} npm start, or orgscan serve --port ${port + 1}.`)
    this.name = 'PortInUseError'
  }
}

/** Turns a listener's EADDRINUSE into the PortInUseError of `host`/`port`. */
export function portInUse(host: string, port: number): (e: NodeJS.ErrnoException) => never {
  return (e) => {
    if (e.code === 'EADDRINUSE') throw new PortInUseError(host, (e as { port?: number }).port ?? port)
    throw e
  }
}

/**
 * The access log: pino's JSON lines (runtime/platform/http/access-log.ts `encodeAccessLine`), gathered and written on stderr
 * in atomic blocks of whole lines (runtime/platform/http/access-sink.ts; flushed on exit). `worker`: the worker's slot, on
 * every line.
 */
export function accessLogger(config: Config, worker?: number): { line: NonNullable<ServiceOptions['accessLog']>; flush(): void } | undefined {
  if (!config.accessLog) return undefined
  const out = stderrAccessSink()
  return { line: (l) => out.line(l, Date.now(), worker), flush: () => out.flush() }
}

/**
 * The first start on an empty database: the demo data, a demo key and the demo user's password (ORGSCAN_SEED_DEMO),
 * all in ONE transaction. A first start stopped anywhere in it (Ctrl-C, kill -9, a full disk, a power cut) leaves
 * the database without accounts, so the next start seeds it again; never a part of the demo that no start completes.
 * With `defer` (one `orgscan serve` process) the large org's scans are left out of it, named by a setting written in
 * the same transaction, for `startDeferredSeed` to write once the server serves (docs/adr/0175-first-run-under-a-minute.md).
 */
export function seedOnFirstStart(config: Config, opts: { defer?: boolean } = {}): NonNullable<ServiceOptions['onEmptyDatabase']> {
  return async ({ db, pepper, resources }) => {
    if (!config.seedDemo) return
    say(`First start: seeding demo data into ${db.describe} (scale ${config.seedScale}; set ORGSCAN_SEED_DEMO=false to skip)…`)
    const t0 = Date.now()
    // Derived before the transaction: hashing the password holds no connection (the embedded database has one).
    const demo = demoCredentials(pepper)
    const passwordHash = await hashPassword(demoPassword(pepper))
    if (db.kind === 'embedded') await reclaimInterruptedSeed(db.sql)
    await db.sql.begin(async (tx) => {
      const seeded = await seedDemoIn(tx, resources, { scale: config.seedScale, progress: (l) => say(`  ${l}`), defer: opts.defer })
      const main = seeded.accounts[0] ?? (await createAccount(tx, { name: 'Demo', dailyLimit: config.defaultDailyLimit, monthlyLimit: config.defaultMonthlyLimit }))
      await createKey(tx, pepper, main.id, { keyId: demo.keyId, secret: demo.secret, name: 'demo key' })
      await tx`INSERT INTO server_settings (name, value) VALUES ('demo_key_id', ${demo.keyId}) ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value`
      // The demo user signs in (OAuth) with a password derived from the pepper, printed on every start.
      await tx`UPDATE users SET password_hash = ${passwordHash} WHERE lower(email) = lower(${DEMO_USER.email}) AND password_hash IS NULL`
    })
    await vacuumSeeded(db.sql)
    say(`Seeded in ${((Date.now() - t0) / 1000).toFixed(1)} s.`)
  }
}

/**
 * The part of a first start's seed left for after the start (`seedOnFirstStart` with `defer`): this start's, or what
 * an interrupted start left, found by its setting. It is written in the background while the server serves; until it
 * is published its org is in `pending` (reads answer 503, /readyz lists it). Returns what the banner says about it and
 * the function that stops it (the drain calls it before closing the service: what was staged waits for the next
 * start), or undefined when there is nothing to do.
 */
export async function startDeferredSeed(svc: RunningService, pending: PendingOrgs, log: Logger): Promise<{ note: string; stop(): Promise<void> } | undefined> {
  const deferred = await deferredSeed(svc.db.sql)
  if (!deferred) return undefined
  const label = `${deferred.name} (${deferred.orgId})`
  pending.add(deferred.orgId, deferred.name)
  say(`Seeding the large demo org ${label} in the background; until it is done its reads answer 503 and /readyz lists it…`)
  const t0 = Date.now()
  const stopping = new AbortController()
  const done = seedDeferred(svc.db.sql, svc.ctx.resources, deferred, { signal: stopping.signal, progress: (l) => say(`  ${l}`) }).then(
    (records) => {
      pending.delete(deferred.orgId)
      // The org's latest scan changed: the org-state cache drops its copy.
      svc.adminChanged({})
      say(`Seeded the large demo org ${label}, ${records.toLocaleString('en-US')} records, in ${((Date.now() - t0) / 1000).toFixed(1)} s: the demo data is complete.`)
    },
    (e: unknown) => {
      if (stopping.signal.aborted || e instanceof SeedStopped) say(`Stopped seeding ${label}: the next start seeds it again.`)
      else log.error({ msg: `seeding the large demo org ${label} failed; the next start tries again`, err: e })
    },
  )
  return {
    note: `${deferred.name}, the large demo org, is being seeded in the background (its reads answer 503 until then; /readyz says when it is done).`,
    stop: async () => {
      stopping.abort(new SeedStopped())
      await done
    },
  }
}

/**
 * An interrupted seed rolled back leaves its rows dead in the tables, and the embedded database never vacuums by
 * itself: with no account left, whatever the data tables still occupy is such a leftover, vacuumed before seeding
 * again so the folder does not keep the space of every interrupted attempt.
 */
async function reclaimInterruptedSeed(sql: postgres.Sql): Promise<void> {
  const [{ bytes }] = await sql<{ bytes: number }[]>`SELECT coalesce(sum(pg_relation_size(c.oid)), 0)::float8 AS bytes
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind = 'r'`
  if (bytes < LEFTOVER_BYTES) return
  say(`  an earlier first start was interrupted: reclaiming the ${Math.round(bytes / 1024 / 1024)} MB its rolled-back seed left…`)
  await sql`VACUUM`
}

/** Below this, the tables of an empty database hold nothing worth a vacuum (a fresh database's settings and versions). */
const LEFTOVER_BYTES = 1024 * 1024

/**
 * A folder left by a first start of an earlier orgscan, interrupted in the middle of its seed (which was not one
 * transaction then): the demo accounts and some of their orgs, but no API key at all. Nothing seeds it again (it has
 * accounts), so the start says how to start over.
 */
export async function warnIncompleteDemo(config: Config, sql: postgres.Sql, facts: DemoFacts): Promise<void> {
  if (!config.seedDemo || facts.demo || config.databaseUrl) return
  const [row] = await sql<{ demo: boolean }[]>`SELECT
    (SELECT array_agg(name ORDER BY name) FROM accounts) = ${Object.values(DEMO_ACCOUNTS).map((a) => a.name).sort()}::text[]
    AND NOT EXISTS (SELECT 1 FROM api_keys) AS demo`
  if (!row?.demo) return
  say(`This data folder (${config.dataDir}) holds part of the demo data of a first start that was interrupted, and no demo key. To start over with the complete demo, stop orgscan, delete the folder (rm -rf ${config.dataDir}) and start again.`)
}

/** The demo key, sign-in and first org the banner shows, when the demo data is there. */
export interface DemoFacts {
  demo?: { keyId: string; secret: string }
  signIn: { email: string; password: string } | null
  firstOrg?: string
}

export async function demoFacts(sql: postgres.Sql, pepper: string): Promise<DemoFacts> {
  const [setting] = await sql`SELECT value FROM server_settings WHERE name = 'demo_key_id'`
  let demo: { keyId: string; secret: string } | undefined
  if (setting) {
    const creds = demoCredentials(pepper)
    const [alive] = await sql`SELECT 1 FROM api_keys WHERE key_id = ${creds.keyId} AND revoked_at IS NULL`
    if (alive && creds.keyId === setting.value) demo = creds
  }
  const [demoUser] = demo ? await sql`SELECT email FROM users WHERE lower(email) = lower(${DEMO_USER.email}) AND password_hash IS NOT NULL` : []
  const signIn = demoUser ? { email: demoUser.email as string, password: demoPassword(pepper) } : null
  const [firstOrg] = await sql`SELECT o.salesforce_id FROM orgs o JOIN api_keys k ON k.account_id = o.account_id
    WHERE k.key_id = ${demo?.keyId ?? ''} AND o.latest_scan_id IS NOT NULL ORDER BY o.name LIMIT 1`
  return { demo, signIn, firstOrg: firstOrg?.salesforce_id as string | undefined }
}

export interface Listening {
  url: string
  mcpUrl: string
  database: string
  adminUrl?: string
  /** Worker processes (`--workers N`); absent for one process. */
  workers?: number
}

/**
 * The start-up banner, on stdout: one JSON line with --json, else how to call the service. It is the command's
 * output, not a log line: stderr carries the JSON log, which goes to log collectors, and the demo credentials must
 * not end up there.
 */
export function printBanner(at: Listening, facts: DemoFacts, json: boolean, seeding?: string): void {
  const tell = (s: string) => void process.stdout.write(s + '\n')
  const { demo, signIn, firstOrg } = facts
  if (json) {
    const extra = { ...(at.adminUrl ? { adminUrl: at.adminUrl } : {}), ...(at.workers ? { workers: at.workers } : {}), ...(seeding ? { seeding } : {}) }
    process.stdout.write(JSON.stringify({ url: at.url, mcpUrl: at.mcpUrl, database: at.database, demoKey: demo ?? null, demoSignIn: signIn, ...extra }) + '\n')
    return
  }
  tell(`orgscan listening on ${at.url} (database: ${at.database}${at.workers ? `; ${at.workers} worker processes` : ''})`)
  if (!demo) return
  tell(`Demo API key (local demo data only): ${demo.keyId}:${demo.secret}`)
  tell(`Try:\n  curl -u '${demo.keyId}:${demo.secret}' ${at.url}/v1/orgs`)
  if (firstOrg) tell(`  curl -u '${demo.keyId}:${demo.secret}' '${at.url}/v1/orgs/${firstOrg}/fields?limit=5'`)
  const basic = 'Basic ' + Buffer.from(`${demo.keyId}:${demo.secret}`).toString('base64')
  const block = { mcpServers: { orgscan: { type: 'http', url: at.mcpUrl, headers: { Authorization: basic } } } }
  tell(`MCP (Streamable HTTP) for an assistant's config (see docs/mcp.md):\n${JSON.stringify(block, null, 2)}`)
  if (signIn) tell(`Or connect with OAuth (no key in the config: ${at.mcpUrl}) and sign in as the demo user ${signIn.email} with password ${signIn.password} (sees two orgs; docs/authentication.md).`)
  if (seeding) tell(seeding)
}

/**
 * SIGTERM/SIGINT drain the service (`close(config.drainMs)`), flush the access log and exit 0 (1 if closing failed);
 * returns the stop function, for other reasons to stop (a worker whose primary is gone). `quiet`: no line on stderr.
 * `before`: awaited first (the first start's background seed stops, leaving what it staged to the next start).
 */
export function drainOnSignals(
  svc: { close(graceMs?: number): Promise<void> },
  o: { drainMs: number; log: Logger; flush?: () => void; quiet?: boolean; before?: () => Promise<void> },
): (reason: string) => void {
  let stopping = false
  const stop = (reason: string) => {
    if (stopping) return
    stopping = true
    if (!o.quiet) say(`${reason}: draining (answers in progress finish, up to ${o.drainMs} ms), then shutting down…`)
    Promise.resolve(o.before?.()).then(() => svc.close(o.drainMs)).then(
      () => {
        o.flush?.()
        process.exit(0)
      },
      (e) => {
        o.log.error({ msg: 'shutdown failed', err: e })
        process.exit(1)
      },
    )
  }
  process.on('SIGINT', () => stop('SIGINT received'))
  process.on('SIGTERM', () => stop('SIGTERM received'))
  return stop
}
