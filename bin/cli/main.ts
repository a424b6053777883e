/**
 * `orgscan` — serve, migrate, seed, import, export, accounts, keys, users, clients, versions, pepper. Every command takes --json and --help; errors are one line
 * on stderr with a non-zero exit (2 for usage errors, 1 otherwise). `run` is the whole command, in process (tests call
 * it); bin/orgscan.js calls it with the real process's streams.
 *
 * While a server holds the embedded database, `accounts`, `keys`, `users`, `clients`, `versions`, `import` and `export`
 * go to that server's admin socket (runtime/platform/admin-socket.ts); `seed` and `migrate` refuse.
 *
 * The pepper (runtime/platform/secrets.ts) is needed by `serve`, `keys create` and `clients create` only (they hash secrets);
 * on PostgreSQL they refuse to run without ORGSCAN_PEPPER or ORGSCAN_PEPPER_FILE, every other command runs without.
 */
import { registry } from '../../resources/index.ts'
import { seedDemo } from '../../demo/seed.ts'
import { ConfigError, loadConfig, MAX_WORKERS, portsProblem, workersProblem, type Config } from '../../runtime/platform/config.ts'
import { compileRegistry } from '../../runtime/core/registry.ts'
import { openDatabase, type Database, type OpenOptions } from '../../runtime/platform/db/connect.ts'
import { DataDirInUseError, isAlive } from '../../runtime/platform/db/lock.ts'
import { migrate } from '../../runtime/platform/db/migrate.ts'
import { resolvePepper } from '../../runtime/platform/secrets.ts'
import { createLogger, type Logger } from '../../runtime/core/log.ts'
import { AdminError } from '../../runtime/platform/admin.ts'
import { ImportError, renderIgnored, type IgnoredFields } from '../../runtime/platform/import.ts'
import { adminArgsProblem, NEEDS_PEPPER, runAdminOp, type AdminOp } from '../../runtime/platform/admin-ops.ts'
import { adminSocketPath, callAdminSocket } from '../../runtime/platform/admin-socket.ts'
import { AdminSocketLost, callAdminSocketFramed } from '../../runtime/platform/admin-frames.ts'
import type { ProgressSink } from '../../runtime/platform/bundle/progress.ts'
import { exportCommand, OutputError } from './export-command.ts'
import { progressRenderer, type Terminal } from './progress.ts'
import { intOption, numOption, parse, UsageError } from './args.ts'
import { HELP, helpFor, table } from './help.ts'
import { PortInUseError, serve } from './serve.ts'
import { clientsCommand, usersCommand } from './oauth-commands.ts'
import { versionsCommand } from './versions-command.ts'
import { pepperCommand } from './pepper-command.ts'
import { prompts } from '../../resources/index.ts'

/** Where the command writes, and the environment it reads. */
export interface CliIO {
  out(line: string): void
  err(line: string): void
  env: Record<string, string | undefined>
  /** The whole standard input (`users create --password-stdin`). */
  stdin?: () => Promise<string>
  /**
   * Opens the database a command works on (default: `openDatabase`). Tests that run many commands in one process
   * pass an opener that hands out one database held open for them (closing it is theirs), instead of starting the
   * embedded database for every command.
   */
  openDatabase?: (opts: OpenOptions) => Promise<Database>
  /** Standard output as a stream (`export` without --out writes its bundle there); without it the bundle goes to out(). */
  stdout?: NodeJS.WritableStream
  /** Standard error when it is a terminal: progress is drawn as a bar there. */
  terminal?: Terminal
  /** Asks a yes-or-no question, when standard input and error are a terminal (`pepper export`); otherwise absent. */
  confirm?: (question: string) => Promise<boolean>
}

/** What a streaming operation hands back while it runs: output bytes and progress. */
interface Streams {
  output?: (chunk: string) => Promise<void> | void
  events?: ProgressSink
}

/** What opening the embedded database has to say (a folder taken over from a killed process, a full disk), as lines on stderr. */
function commandLog(io: CliIO): Logger {
  const say = (o: Record<string, unknown>) => io.err(`orgscan: ${String(o.msg)}`)
  return { info: () => undefined, warn: say, error: say }
}

async function withDb<T>(config: Config, io: CliIO, fn: (db: Database) => Promise<T>): Promise<T> {
  const db = await (io.openDatabase ?? openDatabase)({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 2, log: commandLog(io) })
  try {
    await migrate(db.sql)
    return await fn(db)
  } finally {
    await db.close()
  }
}

/** One administrative operation; `streams`: it streams output or progress (framed replies through an admin socket). */
type AdminCall = (op: AdminOp, args: Record<string, unknown>, streams?: Streams) => Promise<unknown>

/**
 * Runs `fn` with administrative operations carried out on the database (opened once for all of them), or through the
 * admin socket of the server that holds it.
 */
async function adminSession<T>(config: Config, io: CliIO, fn: (call: AdminCall) => Promise<T>): Promise<T> {
  let opened = false
  try {
    return await withDb(config, io, async (db) => {
      opened = true
      // Resolved for the operations that need it only, so the others run on PostgreSQL without ORGSCAN_PEPPER.
      let pepper: Promise<string> | undefined
      const pepperFor = (op: AdminOp) =>
        NEEDS_PEPPER.has(op) ? (pepper ??= resolvePepper({ configured: config.pepper, dataDir: config.dataDir, embedded: db.kind === 'embedded', sql: db.sql, log: createLogger() })) : undefined
      const resources = compileRegistry(registry)
      const ctx = { sql: db.sql, resources, defaults: { dailyLimit: config.defaultDailyLimit, monthlyLimit: config.defaultMonthlyLimit }, progress: io.err, dbKind: db.kind }
      return fn(async (op, args, streams) => runAdminOp({ ...ctx, pepper: await pepperFor(op), events: streams?.events, output: streams?.output }, op, args))
    })
  } catch (e) {
    const socket = !opened && e instanceof DataDirInUseError ? adminSocketPath(e.dir) : undefined
    if (!socket) throw e
    const held = e as DataDirInUseError
    let reached = false
    return fn(async (op, args, streams) => {
      let reply
      try {
        reply = streams
          ? await callAdminSocketFramed(socket, op, args, { onData: streams.output && ((b) => streams.output!(b.toString('utf8'))), onProgress: streams.events })
          : await callAdminSocket(socket, op, args)
      } catch (err) {
        if (err instanceof OutputError || reached) throw err
        if (err instanceof AdminSocketLost) throw await lostServer(op, held)
        throw e // no admin socket (an older or stopping server): the lock message says what to do
      }
      reached = true
      if (reply.ok) return reply.result
      if (reply.kind === 'import') throw new ImportError(reply.error ?? 'Import failed.', reply.problems ? { problems: reply.problems, unlisted: reply.unlisted ?? 0 } : undefined)
      throw new AdminError(reply.error ?? 'The server refused the operation.')
    })
  }
}

/**
 * The server that holds the folder was reached, then went away before answering `op`: what became of the operation. An
 * import is one transaction, so a server that stopped did not save it; a server still running may have (its log says).
 */
async function lostServer(op: AdminOp, held: DataDirInUseError): Promise<Error> {
  // The socket closes as the process exits: give it a moment to be gone.
  for (let i = 0; i < 20 && isAlive(held.pid); i++) await new Promise((r) => setTimeout(r, 50))
  const who = `The orgscan server (pid ${held.pid}) that holds ${held.dir}`
  const stopped = !isAlive(held.pid)
  if (op === 'import') {
    return new ImportError(
      stopped
        ? `${who} stopped during the import: the import was not saved (an import is one transaction, undone unless it completes). Run the import again.`
        : `${who} closed the connection before the import ended; see its log. If the scan is not there, run the import again (a scan the org already has is never imported twice).`,
    )
  }
  return new AdminError(
    stopped
      ? `${who} stopped before it answered: the operation may not have been carried out. Check, then run the command again.`
      : `${who} closed the connection before it answered; see its log.`,
  )
}

/** The command-line name of an operation's argument: its option (`dailyLimit` → `--daily-limit`), or its positional. */
const POSITIONAL: Record<string, string> = { id: 'the account ID', user: 'the USER id', keyId: 'the KEYID', clientId: 'the CLIENT id', name: '--name', redirectUris: '--redirect-uri', scopes: '--scope' }
function cliName(op: AdminOp, argument: string): string {
  if (op.startsWith('versions.') && argument === 'name') return 'the version (v1, v2, …)'
  return POSITIONAL[argument] ?? `--${argument.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`
}

/**
 * Runs one administrative operation on the database, or through the admin socket of the server that holds it. Its
 * arguments are checked first, so a malformed one is a usage error (exit 2) naming the option, before any connection.
 */
function admin(config: Config, io: CliIO, op: AdminOp, args: Record<string, unknown>, streams?: Streams): Promise<unknown> {
  const bad = adminArgsProblem(op, args)
  if (bad) {
    const given = typeof bad.given === 'string' || typeof bad.given === 'number' ? `, got ${JSON.stringify(bad.given).slice(0, 80)}` : ''
    throw new UsageError(`${cliName(op, bad.argument)} ${bad.problem}${given}.`)
  }
  return adminSession(config, io, (call) => call(op, args, streams))
}

async function command(argv: string[], io: CliIO): Promise<void> {
  const [cmd = '', sub, ...rest] = argv
  const help = helpFor(argv)
  if (help !== undefined) return io.out(help)
  if (cmd === '--version' || cmd === '-v' || cmd === 'version') {
    const { readFileSync } = await import('node:fs')
    const version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version
    return io.out(argv.includes('--json') ? JSON.stringify({ version }) : `orgscan ${version}`)
  }
  if (!Object.hasOwn(HELP, cmd)) throw new UsageError(`Unknown ${cmd.startsWith('-') ? 'option' : 'command'} "${cmd}".`, { pointsToHelp: true })
  const args = sub === undefined ? [] : [sub, ...rest]
  const config = loadConfig(io.env)
  const print = (json: boolean, value: unknown, text: () => string) => io.out(json ? JSON.stringify(value) : text())

  switch (cmd) {
    case 'docs': {
      const { values } = parse(args, { out: { type: 'string' } })
      const { mkdirSync, writeFileSync } = await import('node:fs')
      const { dirname, join, resolve } = await import('node:path')
      // Loaded here only: the generator needs the MCP server's code, which the primary of `serve --workers N` does not.
      const { generateDocs } = await import('../../runtime/surfaces/docs/generate.ts')
      const dir = values.out ? resolve(String(values.out)) : new URL('../../', import.meta.url).pathname
      const files = generateDocs(compileRegistry(registry), prompts)
      for (const [rel, text] of files) {
        mkdirSync(dirname(join(dir, rel)), { recursive: true })
        writeFileSync(join(dir, rel), text)
      }
      return print(!!values.json, { dir, files: [...files.keys()] }, () => `wrote ${[...files.keys()].map((f) => join(dir, f)).join(', ')}`)
    }
    case 'scaffold': {
      const { positionals, values } = parse(args, {}, 2)
      if (positionals[0] !== 'resource' || !positionals[1]) throw new UsageError('Usage: orgscan scaffold resource NAME (e.g. validationRules).')
      const { scaffoldResource } = await import('./scaffold.ts')
      const root = new URL('../../', import.meta.url).pathname
      const wrote = scaffoldResource(root, positionals[1], registry)
      return print(!!values.json, wrote, () => [
        `wrote ${wrote.declaration} (edit its fields to what the scanner reports)`,
        `wrote ${wrote.migration} (the table the declaration expects; regenerate it with the drift test's DDL if you change the fields)`,
        `updated ${wrote.index}`,
        'next: npm run regen (OpenAPI, references, examples, MCP wire table, typed client, example bundle), then npm test',
      ].join('\n'))
    }
    case 'serve': {
      const { values } = parse(args, { port: { type: 'string' }, workers: { type: 'string' } })
      const port = intOption(values.port, 'port')
      const workers = intOption(values.workers, 'workers', 1)
      if (workers !== undefined && workers > MAX_WORKERS) throw new UsageError(`--workers must be at most ${MAX_WORKERS}, got ${workers}.`)
      const serving = { ...config, port: port ?? config.port, workers: workers ?? config.workers }
      const problem = workersProblem(serving) ?? portsProblem(serving)
      if (problem) throw new ConfigError(problem)
      return serve(serving, { json: !!values.json })
    }
    case 'migrate': {
      const { values } = parse(args, {})
      const db = await (io.openDatabase ?? openDatabase)({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 1, log: commandLog(io) })
      try {
        const applied = await migrate(db.sql, io.err)
        const [row] = await db.sql`SELECT max(version)::int AS v, count(*)::int AS n FROM schema_migrations`
        return print(!!values.json, { version: row.v, applied }, () => `database is at migration ${row.v} (${applied.length} applied now)`)
      } finally {
        await db.close()
      }
    }
    case 'seed': {
      const { values } = parse(args, { scale: { type: 'string' } })
      const scale = numOption(values.scale, 'scale') ?? 1
      const result = await withDb(config, io, async (db) => {
        const [{ n }] = await db.sql`SELECT count(*)::int AS n FROM orgs`
        if (n > 0) throw new AdminError('The database already holds orgs; seed only fills an empty database.')
        return seedDemo(db.sql, compileRegistry(registry), { scale, progress: io.err })
      })
      return print(!!values.json, result, () => table(result.orgs as never, ['salesforceId', 'name', 'accountId', 'scans']))
    }
    case 'import': {
      const { values, positionals } = parse(args, { account: { type: 'string' }, again: { type: 'boolean' } }, 1)
      if (!values.account || !positionals[0]) throw new UsageError('import needs --account ID and a FILE.')
      const { resolve } = await import('node:path')
      const events = progressRenderer(io.err, io.terminal, !!values.json)
      const again = values.again === true ? { again: true } : {}
      const r = (await admin(config, io, 'import', { account: String(values.account), file: resolve(positionals[0]), ...again }, { events })) as { scanId: string; orgId: string; alreadyImported?: true; ignored?: IgnoredFields[] }
      if (r.ignored && !values.json) for (const line of renderIgnored(r.ignored)) io.err(line)
      return print(!!values.json, r, () =>
        r.alreadyImported
          ? `org ${r.orgId} already has this scan (scan ${r.scanId}: the same start time and status); nothing written. --again imports it as another scan.`
          : `imported scan ${r.scanId} of org ${r.orgId}`)
    }
    case 'export':
      return exportCommand(args, io, (a, streams) => admin(config, io, 'export', a, streams))
    case 'accounts': {
      const action = args[0]
      const { values, positionals } = parse(
        args.slice(1),
        { name: { type: 'string' }, 'daily-limit': { type: 'string' }, 'monthly-limit': { type: 'string' }, 'enhanced-mcp-security': { type: 'string' }, 'email-domain': { type: 'string' }, email: { type: 'string' } },
        action === 'update' ? 1 : 0,
      )
      const ems = values['enhanced-mcp-security']
      if (ems !== undefined && ems !== 'on' && ems !== 'off') throw new UsageError('--enhanced-mcp-security takes on or off.')
      const emailDomain = values['email-domain'] === undefined ? undefined : String(values['email-domain'])
      const daily = intOption(values['daily-limit'], 'daily-limit')
      const monthly = intOption(values['monthly-limit'], 'monthly-limit')
      const name = values.name === undefined ? undefined : String(values.name)
      const email = values.email === undefined ? undefined : String(values.email).trim()
      type Acct = { id: string; name: string; dailyLimit: number; monthlyLimit: number; enhancedMcpSecurity: boolean; email: string | null }
      const line = (verb: string, a: Acct) =>
        `${verb} account ${a.id} (${a.name}), daily limit ${a.dailyLimit}, monthly limit ${a.monthlyLimit}, Enhanced MCP Security ${a.enhancedMcpSecurity ? 'on' : 'off'}, contact e-mail ${a.email ?? 'none'}`
      if (action === 'create') {
        if (!name) throw new UsageError('accounts create needs --name.')
        if (email === '') throw new UsageError('--email needs an address.')
        const a = (await admin(config, io, 'accounts.create', { name, dailyLimit: daily, monthlyLimit: monthly, email })) as Acct
        return print(!!values.json, a, () => line('created', a))
      }
      if (action === 'list') {
        const list = (await admin(config, io, 'accounts.list', {})) as Array<Record<string, unknown>>
        return print(!!values.json, list, () => table(list, ['id', 'name', 'dailyLimit', 'monthlyLimit', 'email', 'orgs']))
      }
      if (action === 'update') {
        if (!positionals[0]) throw new UsageError('accounts update needs the account ID.')
        if (name === undefined && daily === undefined && monthly === undefined && ems === undefined && emailDomain === undefined && email === undefined) {
          throw new UsageError('accounts update needs --name, --daily-limit, --monthly-limit, --enhanced-mcp-security, --email-domain or --email.')
        }
        const a = (await admin(config, io, 'accounts.update', {
          id: positionals[0],
          name,
          dailyLimit: daily,
          monthlyLimit: monthly,
          enhancedMcpSecurity: ems === undefined ? undefined : ems === 'on',
          emailDomain,
          email,
        })) as Acct
        return print(!!values.json, a, () => line('updated', a))
      }
      throw new UsageError('accounts takes create, list or update. Run "orgscan accounts --help".')
    }
    case 'keys': {
      const action = args[0]
      const { values, positionals } = parse(args.slice(1), { account: { type: 'string' }, name: { type: 'string' } }, action === 'revoke' ? 1 : 0)
      if (action === 'create') {
        if (!values.account) throw new UsageError('keys create needs --account ID.')
        const k = (await admin(config, io, 'keys.create', { account: String(values.account), name: values.name === undefined ? undefined : String(values.name) })) as { keyId: string; secret: string }
        return print(!!values.json, k, () => `keyId:  ${k.keyId}\nsecret: ${k.secret}\n(the secret is shown only now; store it safely)`)
      }
      if (action === 'list') {
        if (!values.account) throw new UsageError('keys list needs --account ID.')
        const list = (await admin(config, io, 'keys.list', { account: String(values.account) })) as Array<Record<string, unknown>>
        return print(!!values.json, list, () => table(list, ['keyId', 'name', 'createdAt', 'lastUsedAt', 'revokedAt']))
      }
      if (action === 'revoke') {
        if (!positionals[0]) throw new UsageError('keys revoke needs the KEYID.')
        const k = (await admin(config, io, 'keys.revoke', { keyId: positionals[0] })) as { keyId: string; revokedAt: string; alreadyRevoked: boolean }
        return print(!!values.json, k, () => (k.alreadyRevoked ? `${k.keyId} was already revoked at ${k.revokedAt}; nothing changed` : `revoked ${k.keyId}`))
      }
      throw new UsageError('keys takes create, list or revoke. Run "orgscan keys --help".')
    }
    case 'users':
      return usersCommand(args, (op, a) => admin(config, io, op as AdminOp, a), print, io.stdin)
    case 'clients':
      return clientsCommand(args, (op, a) => admin(config, io, op as AdminOp, a), print)
    case 'pepper':
      return pepperCommand(args, io, () => (io.openDatabase ?? openDatabase)({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 1 }))
    case 'versions':
      return versionsCommand(args, config, io, (fn) => adminSession(config, io, (call) => fn((op, a) => call(op as AdminOp, a))), print)
  }
}

/** The help of the command a command line names (`orgscan keys --help`), or of orgscan itself. */
function helpCommand(argv: string[]): string {
  const cmd = argv[0] ?? ''
  return cmd !== '' && Object.hasOwn(HELP, cmd) ? `orgscan ${cmd} --help` : 'orgscan --help'
}

/** The whole `orgscan` command; resolves with its exit code (serve keeps running and resolves once listening). */
export async function run(argv: string[], io: CliIO): Promise<number> {
  try {
    await command(argv, io)
    return 0
  } catch (e) {
    const known = e instanceof PortInUseError || e instanceof UsageError || e instanceof ConfigError || e instanceof AdminError || e instanceof ImportError || e instanceof DataDirInUseError || e instanceof OutputError
    const msg = e instanceof Error ? e.message : String(e)
    const code = e instanceof UsageError ? 2 : 1
    // Database errors from the driver: their message (no SQL text is in it), never a stack.
    const text = (known ? msg : msg.split('\n')[0]) + (e instanceof UsageError && e.pointsToHelp ? ` Run "${helpCommand(argv)}".` : '')
    // An invalid bundle's problems, each with its place, for a program to read.
    const detail = e instanceof ImportError && e.problems ? { problems: e.problems, unlisted: e.unlisted } : {}
    if (argv.includes('--json')) io.err(JSON.stringify({ error: { kind: e instanceof Error ? e.name : 'Error', message: text, exitCode: code, ...detail } }))
    else io.err(`orgscan: ${text}`)
    return code
  }
}
