/** `orgscan serve`: starts the service, seeds demo data on an empty database, prints how to call it. */
import pino from 'pino'
import { createAccessSink } from '../../runtime/http/access-sink.ts'
import { prompts, registry } from '../../resources/index.ts'
import { seedDemo } from '../../demo/seed.ts'
import type { Config } from '../../runtime/config.ts'
import { startService } from '../../runtime/service.ts'
import { createAccount, createKey } from '../../runtime/admin.ts'
import { demoCredentials, demoPassword } from '../../runtime/secrets.ts'
import { hashPassword } from '../../runtime/oauth/crypto.ts'
import { DEMO_USER } from '../../demo/orgs.ts'
import { createLogger } from '../../runtime/log.ts'
import { installProcessGuard } from '../../runtime/process-guard.ts'

/** A listener that cannot bind: which address, and how to choose another. */
export class PortInUseError extends Error {
  constructor(host: string, port: number) {
    super(`Port ${port} on ${host} is already in use (another orgscan or another program). Stop it, or choose another port: PORT=${port + 1} npm start, or orgscan serve --port ${port + 1}.`)
    this.name = 'PortInUseError'
  }
}

export async function serve(config: Config, opts: { json: boolean }): Promise<void> {
  const log = createLogger()
  installProcessGuard(log)
  const say = (s: string) => process.stderr.write(s + '\n')
  // The access log: pino lines gathered and written on stderr in blocks (flushed on exit); `time` in epoch
  // milliseconds (pino's default, the cheapest).
  const accessOut = config.accessLog ? createAccessSink((block) => void process.stderr.write(block)) : undefined
  const access = accessOut ? pino({ base: undefined }, accessOut) : undefined
  const svc = await startService(config, {
    registry,
    prompts,
    log,
    accessLog: access ? (line) => access.info(line) : undefined,
    onEmptyDatabase: async ({ db, pepper, resources }) => {
      if (!config.seedDemo) return
      say(`First start: seeding demo data into ${db.describe} (scale ${config.seedScale}; set ORGSCAN_SEED_DEMO=false to skip)…`)
      const t0 = Date.now()
      const seeded = await seedDemo(db.sql, resources, { scale: config.seedScale, progress: (l) => say(`  ${l}`) })
      const main = seeded.accounts[0] ?? (await createAccount(db.sql, { name: 'Demo', dailyLimit: config.defaultDailyLimit, monthlyLimit: config.defaultMonthlyLimit }))
      const demo = demoCredentials(pepper)
      await createKey(db.sql, pepper, main.id, { keyId: demo.keyId, secret: demo.secret, name: 'demo key' })
      await db.sql`INSERT INTO server_settings (name, value) VALUES ('demo_key_id', ${demo.keyId}) ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value`
      // The demo user signs in (OAuth) with a password derived from the pepper, printed on every start.
      await db.sql`UPDATE users SET password_hash = ${await hashPassword(demoPassword(pepper))} WHERE lower(email) = lower(${DEMO_USER.email}) AND password_hash IS NULL`
      say(`Seeded in ${((Date.now() - t0) / 1000).toFixed(1)} s.`)
    },
  }).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'EADDRINUSE') throw new PortInUseError(config.host, (e as { port?: number }).port ?? config.port)
    throw e
  })
  const [setting] = await svc.db.sql`SELECT value FROM server_settings WHERE name = 'demo_key_id'`
  let demo: { keyId: string; secret: string } | undefined
  if (setting) {
    const creds = demoCredentials(svc.pepper)
    const [alive] = await svc.db.sql`SELECT 1 FROM api_keys WHERE key_id = ${creds.keyId} AND revoked_at IS NULL`
    if (alive && creds.keyId === setting.value) demo = creds
  }
  const [demoUser] = demo ? await svc.db.sql`SELECT email FROM users WHERE lower(email) = lower(${DEMO_USER.email}) AND password_hash IS NOT NULL` : []
  const signIn = demoUser ? { email: demoUser.email as string, password: demoPassword(svc.pepper) } : null
  const [firstOrg] = await svc.db.sql`SELECT o.salesforce_id FROM orgs o JOIN api_keys k ON k.account_id = o.account_id
    WHERE k.key_id = ${demo?.keyId ?? ''} AND o.latest_scan_id IS NOT NULL ORDER BY o.name LIMIT 1`
  if (opts.json) {
    process.stdout.write(JSON.stringify({ url: svc.url, mcpUrl: svc.mcpUrl, database: svc.db.describe, demoKey: demo ?? null, demoSignIn: signIn }) + '\n')
  } else {
    say(`orgscan listening on ${svc.url} (database: ${svc.db.describe})`)
    if (demo) {
      say(`Demo API key (local demo data only): ${demo.keyId}:${demo.secret}`)
      say(`Try:\n  curl -u '${demo.keyId}:${demo.secret}' ${svc.url}/v1/orgs`)
      if (firstOrg) say(`  curl -u '${demo.keyId}:${demo.secret}' '${svc.url}/v1/orgs/${firstOrg.salesforce_id}/fields?limit=5'`)
      const basic = 'Basic ' + Buffer.from(`${demo.keyId}:${demo.secret}`).toString('base64')
      const block = { mcpServers: { orgscan: { type: 'http', url: svc.mcpUrl, headers: { Authorization: basic } } } }
      say(`MCP (Streamable HTTP) for an assistant's config (see docs/mcp.md):\n${JSON.stringify(block, null, 2)}`)
      if (signIn) say(`Or connect with OAuth (no key in the config: ${svc.mcpUrl}) and sign in as the demo user ${signIn.email} with password ${signIn.password} (sees two orgs; docs/authentication.md).`)
    }
  }
  let stopping = false
  const stop = (signal: string) => {
    if (stopping) return
    stopping = true
    say(`${signal} received: draining (answers in progress finish, up to ${config.drainMs} ms), then shutting down…`)
    svc.close(config.drainMs).then(
      () => {
        accessOut?.flush()
        process.exit(0)
      },
      (e) => {
        accessOut?.flush()
        log.error({ msg: 'shutdown failed', err: e })
        process.exit(1)
      },
    )
  }
  process.on('SIGINT', () => stop('SIGINT'))
  process.on('SIGTERM', () => stop('SIGTERM'))
}
