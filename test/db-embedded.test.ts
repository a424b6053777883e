/**
 * The embedded database (PGlite in a worker thread behind a socket server), on real PGlite folders:
 * persistence, the data-folder lock (same process, other process, stale, crash), concurrency through the
 * single-connection pool, transactions, session time zone, memory://, and worker death.
 * On the run on the embedded database only (test/helpers/runs.ts); connecting to PostgreSQL is db-connect.test.ts's business.
 */
import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { openDatabase, embeddedHostOf, type Database } from '../runtime/platform/db/connect.ts'
import { LOCK_FILE_NAME } from '../runtime/platform/db/lock.ts'
import { findTemplate } from './helpers/templates.ts'
import { scratchFolderPrefix } from './helpers/test-db.ts'
import { TEST_NODE_FLAGS } from './helpers/node-flags.ts'
import { embeddedRunOnly } from './helpers/runs.ts'

embeddedRunOnly(t, 'The embedded database')

const CONNECT_URL = new URL('../runtime/platform/db/connect.ts', import.meta.url).href
const REPO = fileURLToPath(new URL('..', import.meta.url))

const LOCK_MESSAGE = /^The embedded database in .+ is (already )?in use by (another|this) orgscan process \(pid \d+, lock file \/.+\/orgscan\.lock\)\. .+ or set DATABASE_URL to use a PostgreSQL server\.$/

/**
 * A new folder of its own. `initialized`: a copy of the run's empty template (an existing PostgreSQL data folder,
 * templates.ts) so the test does not pay PGlite's initdb; otherwise (or outside tap) an empty folder.
 */
function freshDir(opts: { initialized?: boolean } = {}): string {
  const dir = fs.mkdtempSync(scratchFolderPrefix())
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  const template = opts.initialized ? findTemplate('empty', false) : undefined
  if (template) fs.cpSync(template.dir, dir, { recursive: true })
  return dir
}

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now()
  const v = await fn()
  return [v, Math.round(performance.now() - t0)]
}

/** A child running an ES module snippet, with the tests' TypeScript loader; `connect` is bound to runtime/platform/db/connect.ts. */
function child(code: string): ChildProcess {
  const env = { ...process.env }
  delete env.NODE_OPTIONS // no tap instrumentation in the child
  return spawn(
    process.execPath,
    [...TEST_NODE_FLAGS, '--import', './test/helpers/ts-loader.mjs', '--input-type=module', '-e', `const connect = await import(${JSON.stringify(CONNECT_URL)});\n${code}`],
    { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] },
  )
}

function collect(cp: ChildProcess): { out: () => string; err: () => string; exit: Promise<number | null> } {
  let out = ''
  let err = ''
  cp.stdout!.on('data', (d) => (out += d))
  cp.stderr!.on('data', (d) => (err += d))
  const exit = new Promise<number | null>((resolve) => cp.on('exit', (code) => resolve(code)))
  return { out: () => out, err: () => err, exit }
}

function waitForLine(cp: ChildProcess, line: string, timeoutMs = 60_000): Promise<void> {
  return new Promise((resolve, reject) => {
    let buf = ''
    const timer = setTimeout(() => reject(new Error(`child did not print ${line} within ${timeoutMs} ms`)), timeoutMs)
    cp.stdout!.on('data', (d) => {
      buf += d
      if (buf.split('\n').includes(line)) {
        clearTimeout(timer)
        resolve()
      }
    })
    cp.on('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`child exited (${code}) before printing ${line}`))
    })
  })
}

const readLockPid = (dir: string) => Number(fs.readFileSync(path.join(dir, LOCK_FILE_NAME), 'utf8').split('\n')[0])

t.test('folder: data survives close and reopen; lock and socket are cleaned up', async (t) => {
  const dir = freshDir()
  const [db, firstOpenMs] = await timed(() => openDatabase({ dataDir: dir }))
  t.comment(`open of a new folder (initdb): ${firstOpenMs} ms (PGlite in worker: ${Math.round(embeddedHostOf(db)!.openMs)} ms)`)
  t.equal(db.kind, 'embedded')
  t.equal(db.describe, `embedded PGlite at ${dir}`)
  t.same(embeddedHostOf(db)!.endpoint, { path: path.join(dir, '.s.PGSQL.5432') })
  t.equal(readLockPid(dir), process.pid, 'lock file holds our pid')

  await db.sql`CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL, at timestamptz NOT NULL)`
  await db.sql`INSERT INTO items ${db.sql([
    { id: 1, name: 'one', at: new Date('2024-01-02T03:04:05Z') },
    { id: 2, name: 'two', at: new Date('2024-06-30T23:59:59Z') },
  ])}`
  await db.close()
  await db.close() // idempotent
  t.notOk(fs.existsSync(path.join(dir, LOCK_FILE_NAME)), 'lock released on close')
  t.notOk(fs.existsSync(path.join(dir, '.s.PGSQL.5432')), 'socket file removed on close')
  await t.rejects(db.sql`SELECT 1`, 'the pool is ended after close')

  const [db2, reopenMs] = await timed(() => openDatabase({ dataDir: dir }))
  t.comment(`reopen of an existing folder: ${reopenMs} ms (PGlite in worker: ${Math.round(embeddedHostOf(db2)!.openMs)} ms)`)
  t.teardown(() => db2.close())
  const rows = await db2.sql<{ id: number; name: string; at: Date }[]>`SELECT id, name, at FROM items ORDER BY id`
  t.same(
    rows.map((r) => [r.id, r.name, r.at.toISOString()]),
    [
      [1, 'one', '2024-01-02T03:04:05.000Z'],
      [2, 'two', '2024-06-30T23:59:59.000Z'],
    ],
  )
})

t.test('folder: the lock', async (t) => {
  const dir = freshDir({ initialized: true })
  const db = await openDatabase({ dataDir: dir })
  await db.sql`CREATE TABLE marks (who text NOT NULL)`

  await t.test('a second open in the same process fails with the lock message', async (t) => {
    const err = await openDatabase({ dataDir: dir }).then(
      () => t.fail('second open succeeded'),
      (e: Error) => e,
    )
    t.ok(err instanceof Error)
    t.match((err as Error).message, LOCK_MESSAGE)
    t.match((err as Error).message, `in ${dir} `)
    t.match((err as Error).message, `(pid ${process.pid}, lock file ${path.join(dir, LOCK_FILE_NAME)})`)
    t.notOk((err as Error).message.includes('\n'), 'one line')
    // the first one is unaffected
    t.same(await db.sql`SELECT count(*)::int AS n FROM marks`, [{ n: 0 }])
  })

  await t.test('another process cannot open it while we hold it', async (t) => {
    const cp = child(`
      try { await connect.openDatabase({ dataDir: ${JSON.stringify(dir)} }); console.log('OPENED'); process.exit(0) }
      catch (e) { console.error(e.message); process.exit(3) }`)
    const io = collect(cp)
    const code = await io.exit
    t.equal(code, 3, io.out() + io.err())
    t.equal(io.out(), '')
    t.match(io.err().trim(), LOCK_MESSAGE)
    t.match(io.err(), `is in use by another orgscan process (pid ${process.pid}, lock file ${path.join(dir, LOCK_FILE_NAME)})`)
    t.equal(readLockPid(dir), process.pid, 'our lock is untouched')
  })

  await db.close()

  await t.test('a stale lock (dead pid) is taken over', async (t) => {
    const done = spawn(process.execPath, ['-e', ''])
    const deadPid = done.pid!
    await new Promise((r) => done.on('exit', r))
    fs.writeFileSync(path.join(dir, LOCK_FILE_NAME), `${deadPid}\n`)
    const db2 = await openDatabase({ dataDir: dir })
    t.equal(readLockPid(dir), process.pid, 'lock now ours')
    t.same(await db2.sql`SELECT count(*)::int AS n FROM marks`, [{ n: 0 }])
    await db2.close()
    t.notOk(fs.existsSync(path.join(dir, LOCK_FILE_NAME)))
  })

  await t.test('a lock naming a live process that is not the one that wrote it (a reused pid, a reboot) is taken over', async (t) => {
    // An unrelated live process: the pid a lock names after the machine rebooted or the pid was reused.
    const sleeper = spawn('sleep', ['60'], { stdio: 'ignore' })
    t.teardown(() => void sleeper.kill('SIGKILL'))
    await new Promise((r) => sleeper.once('spawn', r))
    const pid = sleeper.pid!
    const bootId = fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]
    const locks = {
      'a lock of an older orgscan (its pid only), naming a live process that is not Node.js': `${pid}\n`,
      'a lock whose process started at another time (the pid was reused)': `${pid}\nboot ${bootId}\nstart 1\n`,
      'a lock written in another boot': `${pid}\nboot 00000000-0000-0000-0000-000000000000\nstart ${start}\n`,
    }
    const logged: string[] = []
    const log = { info: () => undefined, warn: (o: Record<string, unknown>) => void logged.push(String(o.msg)), error: () => undefined }
    for (const [what, content] of Object.entries(locks)) {
      fs.writeFileSync(path.join(dir, LOCK_FILE_NAME), content)
      const db2 = await openDatabase({ dataDir: dir, log })
      t.equal(readLockPid(dir), process.pid, `${what}: taken over`)
      await db2.close()
    }
    t.equal(logged.length, 3, 'each takeover is logged')
    t.match(logged[0], `the orgscan process that last used ${dir} (pid ${pid}) stopped without closing it`)
    // The same live process with its own identity holds the folder.
    fs.writeFileSync(path.join(dir, LOCK_FILE_NAME), `${pid}\nboot ${bootId}\nstart ${start}\n`)
    const err = await openDatabase({ dataDir: dir }).then(
      () => t.fail('opened a folder whose lock names its live writer'),
      (e: Error) => e,
    )
    t.match((err as Error).message, `is in use by another orgscan process (pid ${pid}, lock file ${path.join(dir, LOCK_FILE_NAME)})`, 'the lock file is named')
    t.match((err as Error).message, 'if no orgscan process is running, delete the lock file')
    fs.rmSync(path.join(dir, LOCK_FILE_NAME))
  })

  await t.test('a lock with our own pid that this process does not hold (container restart) is stale', async (t) => {
    fs.writeFileSync(path.join(dir, LOCK_FILE_NAME), `${process.pid}\n`)
    const db2 = await openDatabase({ dataDir: dir })
    t.equal(readLockPid(dir), process.pid)
    await db2.close()
    t.notOk(fs.existsSync(path.join(dir, LOCK_FILE_NAME)))
  })

  await t.test('a process killed with SIGKILL: locked while alive, taken over after, its data kept', async (t) => {
    const cp = child(`
      const db = await connect.openDatabase({ dataDir: ${JSON.stringify(dir)} })
      await db.sql\`INSERT INTO marks VALUES ('child')\`
      console.log('READY')
      setInterval(() => {}, 1000)`)
    const io = collect(cp)
    t.teardown(() => void cp.kill('SIGKILL'))
    await waitForLine(cp, 'READY').catch((e) => {
      throw new Error(`${e.message}: ${io.err()}`)
    })
    t.equal(readLockPid(dir), cp.pid, 'child holds the lock')

    const err = await openDatabase({ dataDir: dir }).then(
      () => t.fail('opened a folder another process holds'),
      (e: Error) => e,
    )
    t.match((err as Error).message, LOCK_MESSAGE)
    t.match((err as Error).message, `is in use by another orgscan process (pid ${cp.pid}, lock file ${path.join(dir, LOCK_FILE_NAME)})`)

    cp.kill('SIGKILL')
    t.equal(await io.exit, null, 'killed by signal')
    t.equal(readLockPid(dir), cp.pid, 'lock left behind')

    const db2 = await openDatabase({ dataDir: dir })
    t.equal(readLockPid(dir), process.pid)
    t.same(await db2.sql`SELECT who FROM marks`, [{ who: 'child' }], 'committed data of the killed process is there')
    await db2.close()
  })
})

t.test('folder: durable, and private whatever the umask; a folder with looser modes is made private on open, once, saying so', async (t) => {
  const dir = freshDir({ initialized: true })
  const loose = [path.join(dir, 'PG_VERSION'), path.join(dir, 'global'), path.join(dir, 'pepper')]
  fs.writeFileSync(loose[2], 'x\n')
  for (const p of loose) fs.chmodSync(p, fs.statSync(p).isDirectory() ? 0o777 : 0o666)
  fs.chmodSync(dir, 0o755)
  const lines: string[] = []
  const log = { info: (o: Record<string, unknown>) => void lines.push(String(o.msg)), warn: () => undefined, error: () => undefined }
  const previous = process.umask(0)
  let db: Database
  try {
    db = await openDatabase({ dataDir: dir, log })
    await db.sql`CREATE TABLE after_umask (i int)` // new relation files, under umask 000
    await db.sql`INSERT INTO after_umask VALUES (1)`
    await db.sql`CHECKPOINT`
    const [settings] = await db.sql`SELECT current_setting('fsync') AS fsync, current_setting('wal_sync_method') AS method`
    t.same({ ...settings }, { fsync: 'on', method: 'fsync' }, 'durable: fsync on, and the WAL synced with fsync() (fdatasync() is a no-op in PGlite)')
  } finally {
    process.umask(previous)
  }
  const open: string[] = []
  const visit = (p: string) => {
    const st = fs.lstatSync(p)
    if ((st.mode & 0o077) !== 0) open.push(`${p} ${(st.mode & 0o777).toString(8)}`)
    if (st.isDirectory()) for (const n of fs.readdirSync(p)) visit(path.join(p, n))
  }
  visit(dir)
  t.same(open, [], 'no file, folder or socket is open to the group or others (the socket and lock included, while open)')
  t.same(lines, [`data folder ${dir}: 4 files and folders could be read or written by other users; they are now the owner's alone (0600 files, 0700 folders)`])
  await db.close()
  const again = await openDatabase({ dataDir: dir, log })
  await again.close()
  t.equal(lines.length, 1, 'said once: a private folder has nothing to change')
})

t.test('folder with a long path (TCP fallback): 200 concurrent queries, transactions, time zone', async (t) => {
  // A socket path over 100 bytes does not fit sun_path: the server listens on 127.0.0.1 instead.
  const dir = path.join(freshDir(), 'a-rather-long-folder-name-'.repeat(4))
  const template = findTemplate('empty', false)
  if (template) fs.cpSync(template.dir, dir, { recursive: true })
  const db = await openDatabase({ dataDir: dir, poolSize: 8 })
  t.teardown(() => db.close())
  const endpoint = embeddedHostOf(db)!.endpoint
  t.ok('port' in endpoint && endpoint.host === '127.0.0.1' && endpoint.port > 0, `TCP endpoint ${JSON.stringify(endpoint)}`)
  t.ok(fs.existsSync(path.join(dir, LOCK_FILE_NAME)), 'folder created, lock taken')
  const { sql } = db
  await sql`CREATE TABLE n (i int PRIMARY KEY)`

  await t.test('200 concurrent queries all succeed with their own results', async (t) => {
    const [results, ms] = await timed(() =>
      Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          i % 4 === 0
            ? sql`INSERT INTO n VALUES (${i}) RETURNING i`.then((r) => r[0]!.i as number)
            : sql<{ v: number }[]>`SELECT ${i}::int * 2 AS v`.then((r) => r[0]!.v / 2),
        ),
      ),
    )
    t.comment(`200 concurrent queries: ${ms} ms`)
    t.same(results, Array.from({ length: 200 }, (_, i) => i))
    t.same(await sql`SELECT count(*)::int AS c, sum(i)::int AS s FROM n`, [{ c: 50, s: 4900 }])
  })

  await t.test('sql.begin commits several statements; a throw rolls them all back', async (t) => {
    const inTx = await sql.begin(async (tx) => {
      await tx`INSERT INTO n VALUES (1001)`
      await tx`INSERT INTO n VALUES (1002)`
      await tx`UPDATE n SET i = 1003 WHERE i = 1002`
      const [r] = await tx`SELECT count(*)::int AS c FROM n WHERE i > 1000`
      return r!.c as number
    })
    t.equal(inTx, 2)
    t.same(await sql`SELECT i FROM n WHERE i > 1000 ORDER BY i`, [{ i: 1001 }, { i: 1003 }])

    await t.rejects(
      sql.begin(async (tx) => {
        await tx`INSERT INTO n VALUES (2001)`
        await tx`DELETE FROM n WHERE i = 1001`
        throw new Error('boom')
      }),
      { message: 'boom' },
    )
    t.same(await sql`SELECT i FROM n WHERE i > 1000 ORDER BY i`, [{ i: 1001 }, { i: 1003 }], 'rolled back')

    // A failing statement aborts the transaction; the next transaction is clean.
    await t.rejects(
      sql.begin(async (tx) => {
        await tx`INSERT INTO n VALUES (3001)`
        await tx`INSERT INTO n VALUES (1001)` // duplicate key
      }),
      { code: '23505' },
    )
    t.same(await sql`SELECT count(*)::int AS c FROM n WHERE i = 3001`, [{ c: 0 }])
  })

  await t.test('queries issued while a transaction is open wait for it and see its commit', async (t) => {
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    const tx = sql.begin(async (tx) => {
      await tx`INSERT INTO n VALUES (4001)`
      await gate
      await tx`INSERT INTO n VALUES (4002)`
    })
    await new Promise((r) => setTimeout(r, 20))
    const outside = sql`SELECT count(*)::int AS c FROM n WHERE i > 4000`
    let outsideDone = false
    void outside.then(() => (outsideDone = true))
    await new Promise((r) => setTimeout(r, 100))
    t.equal(outsideDone, false, 'the pool connection is held by the transaction')
    release()
    await tx
    t.same(await outside, [{ c: 2 }])
  })

  await t.test('session time zone is UTC', async (t) => {
    t.same(await sql`SHOW TimeZone`, [{ TimeZone: 'UTC' }])
    t.same(await sql`SELECT '2024-01-02 03:04:05'::timestamptz::text AS ts`, [{ ts: '2024-01-02 03:04:05+00' }])
    t.same(await sql`SHOW application_name`, [{ application_name: 'orgscan' }])
  })
})

t.test('memory://', async (t) => {
  const [db, ms] = await timed(() => openDatabase({ dataDir: 'memory://' }))
  t.comment(`open memory:// (initdb): ${ms} ms`)
  t.equal(db.kind, 'embedded')
  t.equal(db.describe, 'embedded PGlite (in memory)')
  await db.sql`CREATE TABLE m (v text)`
  await db.sql`INSERT INTO m VALUES ('x'), ('y')`
  t.same(await db.sql`SELECT v FROM m ORDER BY v`, [{ v: 'x' }, { v: 'y' }])
  t.same(await db.sql`SHOW TimeZone`, [{ TimeZone: 'UTC' }])
  const endpoint = embeddedHostOf(db)!.endpoint
  t.ok('path' in endpoint, 'unix socket in a temp folder')
  await db.close()
  if ('path' in endpoint) t.notOk(fs.existsSync(path.dirname(endpoint.path)), 'temp socket folder removed')
})

t.test('an unexpected worker death rejects pending and later work with a clear error', async (t) => {
  const dir = freshDir({ initialized: true })
  const db: Database = await openDatabase({ dataDir: dir })
  const host = embeddedHostOf(db)!
  await db.sql`SELECT 1`
  const t0 = performance.now()
  const inFlight = db.sql`SELECT pg_sleep(10)`
  const queued = Array.from({ length: 5 }, (_, i) => db.sql`SELECT ${i}::int AS i`)
  setTimeout(() => void host.worker.terminate(), 200)
  const DEATH = /^The embedded database worker \(PGlite for .+\) stopped unexpectedly \(exit code \d+\)/
  await t.rejects(inFlight, { message: DEATH })
  for (const q of queued) await t.rejects(q, { message: DEATH })
  t.ok(performance.now() - t0 < 5_000, 'rejected promptly, not after the 10 s sleep')
  await t.rejects(db.sql`SELECT 1`, { message: DEATH }, 'later queries fail the same way')
  t.match(host.failure?.message, DEATH)
  const [, closeMs] = await timed(() => db.close())
  t.ok(closeMs < 2_000, `close() after a death is quick (${closeMs} ms)`)
  t.notOk(fs.existsSync(path.join(dir, LOCK_FILE_NAME)), 'lock released')
})

t.test('a database closed cleanly leaves its thread to the next open in the process', async (t) => {
  const a = freshDir({ initialized: true })
  const b = freshDir({ initialized: true })
  const dbA = await openDatabase({ dataDir: a })
  const thread = embeddedHostOf(dbA)!.worker.threadId
  await dbA.sql`CREATE TABLE only_in_a (v int)`
  await dbA.sql`INSERT INTO only_in_a VALUES (1)`
  await dbA.close()
  t.notOk(fs.existsSync(path.join(a, LOCK_FILE_NAME)), 'the folder is released at close')

  const dbB = await openDatabase({ dataDir: b })
  t.equal(embeddedHostOf(dbB)!.worker.threadId, thread, 'the next open runs on the same thread')
  t.equal(readLockPid(b), process.pid, 'with its own folder lock')
  t.same(await dbB.sql`SELECT to_regclass('only_in_a') IS NULL AS absent`, [{ absent: true }], 'and its own data only')
  t.same(await dbB.sql`SHOW TimeZone`, [{ TimeZone: 'UTC' }], 'and the session settings')
  await dbB.close()

  const again = await openDatabase({ dataDir: a })
  t.equal(embeddedHostOf(again)!.worker.threadId, thread)
  t.same(await again.sql`SELECT v FROM only_in_a`, [{ v: 1 }], 'the first folder reopens with what was written to it')
  await again.close()

  // Three open at once, then closed: two threads are kept, the third is terminated.
  const dirs = [1, 2, 3].map(() => freshDir({ initialized: true }))
  const three = await Promise.all(dirs.map((dataDir) => openDatabase({ dataDir })))
  const threads = three.map((d) => embeddedHostOf(d)!.worker)
  for (const d of three) await d.close()
  const exited = threads.filter((w) => w.threadId === -1)
  t.equal(exited.length, 1, 'one of three threads terminated (a thread that has exited has no id)')
  const next = await Promise.all(dirs.map((dataDir) => openDatabase({ dataDir })))
  const reused = next.filter((d) => threads.some((w) => w.threadId !== -1 && w.threadId === embeddedHostOf(d)!.worker.threadId))
  t.equal(reused.length, 2, 'the next three opens: two on kept threads, one on a new thread')
  for (const d of next) await d.close()
})

t.test('a thread whose worker died is never given another database', async (t) => {
  const dbA = await openDatabase({ dataDir: freshDir({ initialized: true }) })
  const dead = embeddedHostOf(dbA)!.worker
  await dead.terminate()
  await dbA.close()
  const dbB = await openDatabase({ dataDir: freshDir({ initialized: true }) })
  t.not(embeddedHostOf(dbB)!.worker, dead, 'a new thread')
  t.same(await dbB.sql`SELECT 1 AS one`, [{ one: 1 }])
  await dbB.close()
})

t.test('a kept thread does not keep the process alive', async (t) => {
  const cp = child(`
    const db = await connect.openDatabase({ dataDir: ${JSON.stringify(freshDir({ initialized: true }))} })
    await db.sql\`SELECT 1\`
    await db.close()
    console.log('closed')`)
  const io = collect(cp)
  const t0 = performance.now()
  const killer = setTimeout(() => cp.kill(), 25_000)
  const code = await io.exit
  clearTimeout(killer)
  t.equal(code, 0, io.err())
  t.equal(io.out(), 'closed\n')
  t.ok(performance.now() - t0 < 20_000, 'the process ends once its work is done (its close timer of 30 s does not hold it)')
})

t.test('open fails cleanly when PGlite cannot start, and releases the lock', async (t) => {
  const dir = freshDir()
  fs.writeFileSync(path.join(dir, 'PG_VERSION'), '7\n') // not a data folder PGlite can open
  const err = await openDatabase({ dataDir: dir }).then(
    () => t.fail('opened a broken folder'),
    (e: Error) => e,
  )
  t.match((err as Error).message, `The embedded database (PGlite for ${dir}) could not be started: PGlite failed to initialize`)
  t.notOk(fs.existsSync(path.join(dir, LOCK_FILE_NAME)), 'lock released')
})

t.test('no configuration, or a URL-like data folder, is an error', async (t) => {
  await t.rejects(openDatabase({}), { message: /^No database configured/ })
  await t.rejects(openDatabase({ dataDir: 'idb://x' }), { message: /^Unsupported data folder idb:\/\/x/ })
})
