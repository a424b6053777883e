/**
 * openDatabase on a real PostgreSQL server, the display URL (never a password), and the test-database
 * helper. The server is TEST_DATABASE_URL; without it the server tests are skipped, saying so (the PostgreSQL run
 * covers them), and an unreachable TEST_DATABASE_URL fails.
 */
import { t } from '../helpers/file-test.ts'
import fs from 'node:fs'
import postgres from 'postgres'
import { openDatabase, describeDatabaseUrl } from '../../runtime/platform/db/connect.ts'
import { createTestDatabase, createFreshPostgresDatabase, NEEDS_POSTGRES, withDatabase } from '../helpers/test-db.ts'
import { dropOrphanTestDatabases } from '../helpers/template-databases.ts'
import { randomBytes } from 'node:crypto'

const FAKE_PASSWORD = 'Not-A-Real-Secret-4711'

async function reachable(url: string): Promise<string | undefined> {
  const sql = postgres(url, { max: 1, connect_timeout: 3, onnotice: () => {} })
  try {
    await sql`SELECT 1`
    return undefined
  } catch (err) {
    return (err as Error).message
  } finally {
    await sql.end({ timeout: 0 })
  }
}

function withPassword(url: string, password: string): string {
  // postgres://user@host... → postgres://user:password@host...; only for URLs without a password
  return url.replace(/^([a-z]+:\/\/)([^:@/]+)@/i, `$1$2:${encodeURIComponent(password)}@`)
}

t.test('describeDatabaseUrl never shows a password', async (t) => {
  const cases: Array<[string, string, string[]]> = [
    ['postgres://app:s3cret@db.example:5433/orgscan?sslmode=require', 'postgres://app@db.example:5433/orgscan', ['s3cret']],
    ['postgresql://app:p%40ss%2Fw0rd@db/orgscan', 'postgres://app@db:5432/orgscan', ['p@ss/w0rd', 'p%40ss%2Fw0rd']],
    ['postgres://app@db/orgscan?password=hunter22', 'postgres://app@db:5432/orgscan', ['hunter22']],
    ['postgres://app:p@ss@db/orgscan', 'postgres://app@db:5432/orgscan', ['p@ss']],
    ['postgres://postgres:postgres@localhost/app', 'postgres://***@localhost:5432/app', []],
    ['postgres://app:pa/ss@db/orgscan', '(invalid database URL)', ['pa/ss']],
    ['postgres://app:s3cret@h1:5432,h2:5433/orgscan', 'postgres://app@h1:5432,h2:5433/orgscan', ['s3cret']],
    // libpq's host and port parameters, which postgres.js alone would send to the server as unknown settings.
    ['postgres://app:s3cret@/orgscan?host=/run/postgresql', 'postgres://app@/run/postgresql/.s.PGSQL.5432/orgscan', ['s3cret']],
    ['postgres://app@db.example/orgscan?sslmode=require&host=db2.example&port=6432', 'postgres://app@db2.example:6432/orgscan', []],
    ['postgres://app@db.example:5433/orgscan?host=%2Fvar%2Frun%2Fpostgresql', 'postgres://app@/var/run/postgresql/.s.PGSQL.5433/orgscan', []],
  ]
  for (const [url, expected, secrets] of cases) {
    const d = describeDatabaseUrl(url)
    t.equal(d, expected, url)
    for (const s of secrets) t.notOk(d.includes(s), `${url}: no ${s}`)
  }
})

t.test('a PostgreSQL server that cannot be reached: clear error, no password', async (t) => {
  const err = await openDatabase({ databaseUrl: `postgres://app:${FAKE_PASSWORD}@127.0.0.1:1/orgscan` }).then(
    () => t.fail('connected to port 1'),
    (e: Error) => e,
  )
  t.match((err as Error).message, /^Cannot connect to PostgreSQL at postgres:\/\/app@127\.0\.0\.1:1\/orgscan: .*ECONNREFUSED/)
  t.notOk((err as Error).message.includes(FAKE_PASSWORD))
  await t.rejects(openDatabase({ databaseUrl: `postgres://app:pa/ss@db/x` }), {
    message: /^Invalid database URL/,
  })
})

t.test('no configuration is an error; databaseUrl wins over dataDir', async (t) => {
  await t.rejects(openDatabase({}), { message: /^No database configured: set DATABASE_URL/ })
  // dataDir is not touched when a URL is given (the URL fails first, the folder is never created)
  const dir = `/tmp/orgscan-never-created-${process.pid}`
  await t.rejects(openDatabase({ databaseUrl: 'postgres://x@127.0.0.1:1/x', dataDir: dir }), {
    message: /^Cannot connect to PostgreSQL/,
  })
  t.notOk(fs.existsSync(dir))
})

t.test('createTestDatabase without TEST_DATABASE_URL: a fresh empty folder, removed by drop()', async (t) => {
  const saved = process.env.TEST_DATABASE_URL
  delete process.env.TEST_DATABASE_URL
  t.teardown(() => {
    if (saved !== undefined) process.env.TEST_DATABASE_URL = saved
  })
  const a = await createTestDatabase()
  const b = await createTestDatabase()
  t.equal(a.databaseUrl, undefined)
  t.ok(a.dataDir && fs.statSync(a.dataDir).isDirectory())
  t.same(fs.readdirSync(a.dataDir!), [])
  t.not(a.dataDir, b.dataDir)
  t.equal(a.label, `embedded PGlite at ${a.dataDir}`)
  await a.drop()
  await b.drop()
  t.notOk(fs.existsSync(a.dataDir!))
  t.notOk(fs.existsSync(b.dataDir!))
})

t.test('withDatabase swaps the database name only', async (t) => {
  t.equal(withDatabase('postgres://u:p@h:5432/test', 'x_1'), 'postgres://u:p@h:5432/x_1')
  t.equal(withDatabase('postgres://u@h/test?sslmode=disable', 'x_1'), 'postgres://u@h/x_1?sslmode=disable')
  t.equal(withDatabase('postgres://u@h', 'x_1'), 'postgres://u@h/x_1')
})

const adminUrl = process.env.TEST_DATABASE_URL ?? ''
const unreachable = adminUrl ? await reachable(adminUrl) : undefined
if (unreachable) t.fail(`TEST_DATABASE_URL is set but not reachable: ${unreachable}`)
const skip = !adminUrl ? NEEDS_POSTGRES : unreachable ? 'TEST_DATABASE_URL is not reachable (see the failure above)' : false

t.test('PostgreSQL server', { skip }, async (t) => {
  await t.test('createTestDatabase with TEST_DATABASE_URL: a fresh database, dropped by drop()', async (t) => {
    const saved = process.env.TEST_DATABASE_URL
    process.env.TEST_DATABASE_URL = adminUrl
    t.teardown(() => {
      if (saved === undefined) delete process.env.TEST_DATABASE_URL
      else process.env.TEST_DATABASE_URL = saved
    })
    const fresh = await createTestDatabase()
    const name = /\/(orgscan_t_\d+_[0-9a-f]{8})$/.exec(fresh.databaseUrl ?? '')?.[1]
    t.ok(name, `fresh database name in ${fresh.databaseUrl}`)
    t.equal(fresh.dataDir, undefined)
    t.equal(fresh.label, `postgres database ${name}`)
    const admin = postgres(adminUrl, { max: 1, onnotice: () => {} })
    t.teardown(() => admin.end())
    t.same(await admin`SELECT count(*)::int AS n FROM pg_database WHERE datname = ${name!}`, [{ n: 1 }])
    // drop() works even with a connection still open on it
    const lingering = postgres(fresh.databaseUrl!, { max: 1, onnotice: () => {} })
    t.same(await lingering`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'`, [{ n: 0 }], 'empty')
    await fresh.drop()
    await lingering.end({ timeout: 0 }).catch(() => {})
    t.same(await admin`SELECT count(*)::int AS n FROM pg_database WHERE datname = ${name!}`, [{ n: 0 }])
  })

  const fresh = await createFreshPostgresDatabase(adminUrl)
  t.teardown(() => fresh.drop())
  // With a password in the URL. With trust auth the server never asks for it; otherwise the URL
  // already had one and we keep it.
  const hasPassword = /^[a-z]+:\/\/[^:@/]+:[^@/]*@/i.test(fresh.databaseUrl!)
  const url = hasPassword ? fresh.databaseUrl! : withPassword(fresh.databaseUrl!, FAKE_PASSWORD)
  const password = hasPassword ? decodeURIComponent(/^[a-z]+:\/\/[^:@/]+:([^@/]*)@/i.exec(url)![1]!) : FAKE_PASSWORD

  await t.test('openDatabase: pool, session settings, notices, describe without password', async (t) => {
    const [db, ms] = await (async () => {
      const t0 = performance.now()
      return [await openDatabase({ databaseUrl: url }), Math.round(performance.now() - t0)] as const
    })()
    t.comment(`open PostgreSQL pool: ${ms} ms`)
    t.teardown(() => db.close())
    t.equal(db.kind, 'postgres')
    t.notOk(db.describe.includes(password), 'describe has no password')
    const u = new URL(fresh.databaseUrl!)
    t.equal(db.describe, `postgres://${u.username}@${u.hostname}:${u.port || 5432}${u.pathname}`)

    t.same(await db.sql`SHOW TimeZone`, [{ TimeZone: 'UTC' }])
    t.same(await db.sql`SHOW application_name`, [{ application_name: 'orgscan' }])
    t.same(await db.sql`SELECT current_database() AS d`, [{ d: u.pathname.slice(1) }])

    // Default pool: 4 connections. 8 concurrent 200 ms queries run on exactly 4 backends.
    const pids = await Promise.all(
      Array.from({ length: 8 }, () => db.sql<{ pid: number }[]>`SELECT pg_backend_pid() AS pid, pg_sleep(0.2)`.then((r) => r[0]!.pid)),
    )
    t.equal(new Set(pids).size, 4, 'pool of 4')

    // Notices are silenced (postgres.js prints them with console.log by default).
    const logged: unknown[] = []
    const orig = console.log
    console.log = (...args: unknown[]) => void logged.push(args)
    try {
      await db.sql`DO $$ BEGIN RAISE NOTICE 'hello from the server'; END $$`
    } finally {
      console.log = orig
    }
    t.same(logged, [])

    // Transactions: commit and rollback.
    await db.sql`CREATE TABLE tx_t (i int PRIMARY KEY)`
    await db.sql.begin(async (tx) => {
      await tx`INSERT INTO tx_t VALUES (1)`
      await tx`INSERT INTO tx_t VALUES (2)`
    })
    await t.rejects(
      db.sql.begin(async (tx) => {
        await tx`INSERT INTO tx_t VALUES (3)`
        throw new Error('boom')
      }),
      { message: 'boom' },
    )
    t.same(await db.sql`SELECT i FROM tx_t ORDER BY i`, [{ i: 1 }, { i: 2 }])

    await db.close()
    await db.close() // idempotent
    await t.rejects(db.sql`SELECT 1`, { code: 'CONNECTION_ENDED' })
  })

  // The server's Unix-domain socket, when the server is on this machine.
  const u = new URL(fresh.databaseUrl!)
  const port = u.port || '5432'
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} })
  const [{ unix_socket_directories: dirs }] = await admin`SHOW unix_socket_directories`
  await admin.end()
  const dir = String(dirs).split(',').map((d) => d.trim()).find((d) => d.startsWith('/') && fs.existsSync(`${d}/.s.PGSQL.${port}`))
  const noSocket = dir ? false : `the server's sockets (${dirs}) are not on this machine`
  await t.test("libpq's host parameter: a Unix-domain socket, with the session settings, both pools", { skip: noSocket }, async (t) => {
    const socketUrl = `${u.protocol}//${u.username}@${u.pathname}?host=${encodeURIComponent(dir!)}`
    const db = await openDatabase({ databaseUrl: socketUrl, readPool: { size: 1, statementTimeoutMs: 1234 } })
    t.teardown(() => db.close())
    t.equal(db.describe, `postgres://${u.username}@${dir}/.s.PGSQL.${port}${u.pathname}`)
    for (const [name, pool] of [['control', db.sql], ['read', db.reads[0]]] as const) {
      const [row] = await pool`SELECT inet_server_addr() AS addr, current_setting('application_name') AS app, current_setting('TimeZone') AS tz, current_database() AS d`
      t.same(row, { addr: null, app: 'orgscan', tz: 'UTC', d: u.pathname.slice(1) }, `${name} pool: through the socket (no server address), with the settings`)
    }
    t.same(await db.reads[0]`SHOW statement_timeout`, [{ statement_timeout: '1234ms' }], 'the read pool keeps its own settings')
    await t.rejects(openDatabase({ databaseUrl: `postgres://app:${FAKE_PASSWORD}@/orgscan?host=/nonexistent-dir` }), {
      message: /^Cannot connect to PostgreSQL at postgres:\/\/app@\/nonexistent-dir\/\.s\.PGSQL\.5432\/orgscan: .*ENOENT/,
    })
  })

  await t.test('poolSize is honoured', async (t) => {
    const db = await openDatabase({ databaseUrl: url, poolSize: 2 })
    t.teardown(() => db.close())
    const pids = await Promise.all(
      Array.from({ length: 6 }, () => db.sql<{ pid: number }[]>`SELECT pg_backend_pid() AS pid, pg_sleep(0.1)`.then((r) => r[0]!.pid)),
    )
    t.equal(new Set(pids).size, 2)
  })

  await t.test('the before script drops the databases of test processes that are gone, and no other', async (t) => {
    const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined })
    t.teardown(() => admin.end({ timeout: 1 }))
    const gone = `orgscan_t_999999999_${randomBytes(4).toString('hex')}`
    const mine = `orgscan_t_${process.pid}_${randomBytes(4).toString('hex')}`
    for (const d of [gone, mine]) await admin.unsafe(`CREATE DATABASE "${d}"`)
    t.teardown(() => admin.unsafe(`DROP DATABASE IF EXISTS "${mine}" WITH (FORCE)`))
    // Only the made-up pid is gone: other test processes may be using their databases on this server right now.
    const dropped = await dropOrphanTestDatabases(adminUrl, (pid) => pid !== 999_999_999)
    t.ok(dropped.includes(gone), 'the database of a process that is gone is dropped')
    t.notOk(dropped.includes(mine), 'a live process keeps its database')
    const left = (await admin<{ datname: string }[]>`SELECT datname FROM pg_database WHERE datname IN (${gone}, ${mine})`).map((r) => r.datname)
    t.same(left, [mine])
  })
})
