/**
 * `orgscan` — serve, migrate, seed, import, accounts, keys. Every command takes --json and --help; errors
 * are one line on stderr with a non-zero exit (2 for usage errors, 1 otherwise).
 */
import { readFileSync } from 'node:fs'
import { registry } from '../../resources/index.ts'
import { seedDemo } from '../../demo/seed.ts'
import { ConfigError, loadConfig, type Config } from '../../runtime/config.ts'
import { compileRegistry } from '../../runtime/registry.ts'
import { openDatabase, type Database } from '../../runtime/db/connect.ts'
import { migrate } from '../../runtime/db/migrate.ts'
import { resolvePepper } from '../../runtime/secrets.ts'
import { createLogger } from '../../runtime/log.ts'
import { AdminError, createAccount, createKey, listAccounts, listKeys, revokeKey, updateAccount } from '../../runtime/admin.ts'
import { importScan, ImportError, type ScanBundle } from '../../runtime/import.ts'
import { intOption, numOption, parse, UsageError } from './args.ts'
import { serve } from './serve.ts'

const HELP: Record<string, string> = {
  '': `orgscan — Organization Scan Data Service

Usage: orgscan <command> [options]

Commands:
  serve [--port N]                         start the REST service (embedded database unless DATABASE_URL is set)
  migrate                                  apply database migrations
  seed [--scale X]                         fill deterministic demo data (scale 1 = one large org with 20,000+ fields)
  import --account ID FILE                 import one scan bundle (JSON) for an org of the account
  accounts create --name N [--daily-limit N --monthly-limit N]
  accounts list
  accounts update ID [--name N --daily-limit N --monthly-limit N]
  keys create --account ID [--name N]      create an API key; the secret is printed once
  keys list --account ID
  keys revoke KEYID

Every command accepts --json (machine-readable output) and --help.
Environment: DATABASE_URL, ORGSCAN_DATA_DIR (default ./data), PORT, ORGSCAN_PEPPER, … (see README).`,
  serve: 'Usage: orgscan serve [--port N] [--json]\nStarts the service; seeds demo data on the first start of an empty embedded database.',
  migrate: 'Usage: orgscan migrate [--json]\nApplies pending migrations.',
  seed: 'Usage: orgscan seed [--scale X] [--json]\nFills deterministic demo data (accounts, orgs, scans). --scale between 0 and 10, default 1.',
  import: 'Usage: orgscan import --account ID FILE [--json]\nImports one scan bundle ({org, scan, data}) in one transaction.',
  accounts: 'Usage:\n  orgscan accounts create --name N [--daily-limit N] [--monthly-limit N] [--json]\n  orgscan accounts list [--json]\n  orgscan accounts update ID [--name N] [--daily-limit N] [--monthly-limit N] [--json]',
  keys: 'Usage:\n  orgscan keys create --account ID [--name N] [--json]\n  orgscan keys list --account ID [--json]\n  orgscan keys revoke KEYID [--json]',
}

const out = (s: string): void => void process.stdout.write(s + '\n')
const progress = (s: string): void => void process.stderr.write(s + '\n')

async function withDb<T>(config: Config, fn: (db: Database) => Promise<T>): Promise<T> {
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 2 })
  try {
    await migrate(db.sql)
    return await fn(db)
  } finally {
    await db.close()
  }
}

function table(rows: Array<Record<string, unknown>>, cols: string[]): string {
  if (rows.length === 0) return '(none)'
  const cell = (v: unknown) => (v === null || v === undefined ? '-' : Array.isArray(v) ? v.join(',') : String(v))
  const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)))
  const line = (vals: string[]) => vals.map((v, i) => v.padEnd(widths[i])).join('  ').trimEnd()
  return [line(cols), ...rows.map((r) => line(cols.map((c) => cell(r[c]))))].join('\n')
}

async function main(argv: string[]): Promise<void> {
  const [cmd = '', sub, ...rest] = argv
  if (cmd === '' || cmd === '--help' || cmd === '-h' || cmd === 'help') return out(HELP[''])
  if (!(cmd in HELP)) throw new UsageError(`Unknown command "${cmd}". Run "orgscan --help".`)
  const args = sub === undefined ? [] : [sub, ...rest]
  if (args.includes('--help') || args.includes('-h')) return out(HELP[cmd])
  const config = loadConfig()
  const resources = compileRegistry(registry)

  switch (cmd) {
    case 'serve': {
      const { values } = parse(args, { port: { type: 'string' } })
      const port = intOption(values.port, 'port')
      return serve({ ...config, port: port ?? config.port }, { json: !!values.json })
    }
    case 'migrate': {
      const { values } = parse(args, {})
      const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 1 })
      try {
        const applied = await migrate(db.sql, progress)
        const [row] = await db.sql`SELECT max(version)::int AS v, count(*)::int AS n FROM schema_migrations`
        out(values.json ? JSON.stringify({ version: row.v, applied }) : `database is at migration ${row.v} (${applied.length} applied now)`)
      } finally {
        await db.close()
      }
      return
    }
    case 'seed': {
      const { values } = parse(args, { scale: { type: 'string' } })
      const scale = numOption(values.scale, 'scale') ?? 1
      const result = await withDb(config, async (db) => {
        const [{ n }] = await db.sql`SELECT count(*)::int AS n FROM orgs`
        if (n > 0) throw new AdminError('The database already holds orgs; seed only fills an empty database.')
        return seedDemo(db.sql, resources, { scale, progress })
      })
      if (values.json) out(JSON.stringify(result))
      else out(table(result.orgs as never, ['salesforceId', 'name', 'accountId', 'scans']))
      return
    }
    case 'import': {
      const { values, positionals } = parse(args, { account: { type: 'string' } }, 1)
      if (!values.account || !positionals[0]) throw new UsageError('import needs --account ID and a FILE.')
      let bundle: ScanBundle
      try {
        bundle = JSON.parse(readFileSync(positionals[0], 'utf8'))
      } catch (e) {
        throw new ImportError(`Cannot read ${positionals[0]}: ${(e as Error).message.split('\n')[0]}`)
      }
      const r = await withDb(config, (db) => importScan(db.sql, resources, String(values.account), bundle, progress))
      if (values.json) out(JSON.stringify(r))
      else out(`imported scan ${r.scanId} of org ${r.orgId}`)
      return
    }
    case 'accounts': {
      const action = args[0]
      const { values, positionals } = parse(args.slice(1), { name: { type: 'string' }, 'daily-limit': { type: 'string' }, 'monthly-limit': { type: 'string' } }, action === 'update' ? 1 : 0)
      const daily = intOption(values['daily-limit'], 'daily-limit')
      const monthly = intOption(values['monthly-limit'], 'monthly-limit')
      if (action === 'create') {
        if (!values.name) throw new UsageError('accounts create needs --name.')
        const a = await withDb(config, (db) => createAccount(db.sql, { name: String(values.name), dailyLimit: daily ?? config.defaultDailyLimit, monthlyLimit: monthly ?? config.defaultMonthlyLimit }))
        return out(values.json ? JSON.stringify(a) : `created account ${a.id} (${a.name}), daily limit ${a.dailyLimit}, monthly limit ${a.monthlyLimit}`)
      }
      if (action === 'list') {
        const list = await withDb(config, (db) => listAccounts(db.sql))
        return out(values.json ? JSON.stringify(list) : table(list as never, ['id', 'name', 'dailyLimit', 'monthlyLimit', 'orgs']))
      }
      if (action === 'update') {
        if (!positionals[0]) throw new UsageError('accounts update needs the account ID.')
        if (values.name === undefined && daily === undefined && monthly === undefined) throw new UsageError('accounts update needs --name, --daily-limit or --monthly-limit.')
        const a = await withDb(config, (db) => updateAccount(db.sql, positionals[0], { name: values.name === undefined ? undefined : String(values.name), dailyLimit: daily, monthlyLimit: monthly }))
        return out(values.json ? JSON.stringify(a) : `updated account ${a.id} (${a.name}), daily limit ${a.dailyLimit}, monthly limit ${a.monthlyLimit}`)
      }
      throw new UsageError('accounts takes create, list or update. Run "orgscan accounts --help".')
    }
    case 'keys': {
      const action = args[0]
      const { values, positionals } = parse(args.slice(1), { account: { type: 'string' }, name: { type: 'string' } }, action === 'revoke' ? 1 : 0)
      if (action === 'create') {
        if (!values.account) throw new UsageError('keys create needs --account ID.')
        const k = await withDb(config, async (db) => {
          const pepper = await resolvePepper({ configured: config.pepper, dataDir: config.dataDir, embedded: db.kind === 'embedded', sql: db.sql, log: createLogger() })
          return createKey(db.sql, pepper, String(values.account), { name: values.name === undefined ? null : String(values.name) })
        })
        return out(values.json ? JSON.stringify({ keyId: k.keyId, secret: k.secret, accountId: k.accountId }) : `keyId:  ${k.keyId}\nsecret: ${k.secret}\n(the secret is shown only now; store it safely)`)
      }
      if (action === 'list') {
        if (!values.account) throw new UsageError('keys list needs --account ID.')
        const list = await withDb(config, (db) => listKeys(db.sql, String(values.account)))
        return out(values.json ? JSON.stringify(list) : table(list as never, ['keyId', 'name', 'createdAt', 'lastUsedAt', 'revokedAt']))
      }
      if (action === 'revoke') {
        if (!positionals[0]) throw new UsageError('keys revoke needs the KEYID.')
        const k = await withDb(config, (db) => revokeKey(db.sql, positionals[0]))
        return out(values.json ? JSON.stringify(k) : `revoked ${k.keyId}`)
      }
      throw new UsageError('keys takes create, list or revoke. Run "orgscan keys --help".')
    }
  }
}

main(process.argv.slice(2)).catch((e: unknown) => {
  const known = e instanceof UsageError || e instanceof ConfigError || e instanceof AdminError || e instanceof ImportError
  const msg = e instanceof Error ? e.message : String(e)
  // Database errors from the driver: show their message (no SQL text is in it), never a stack.
  process.stderr.write(`orgscan: ${known ? msg : msg.split('\n')[0]}\n`)
  process.exit(e instanceof UsageError ? 2 : 1)
})
