/**
 * A real streaming replica of the local PostgreSQL server (TEST_DATABASE_URL), for the replica tests and the bench:
 * `pg_basebackup -R` into a temporary folder owned by the `postgres` user, started with `pg_ctl` on a free port as
 * that user (tests run as root: through `runuser`), caught up before it is handed over, stopped and removed at
 * teardown — and at exit, and by the next replica made when a run was killed (folders carry the creating pid).
 *
 * It needs the server to accept replication connections from this machine, which a default pg_hba.conf does not:
 * then it skips, saying what to add. It never changes the server's configuration itself (`.ci/run` does, before the
 * PostgreSQL suite). Why a replica of the local server rather than a throwaway primary of our own:
 * docs/adr/0044-test-databases-from-templates.md.
 */
import type { Test } from 'tap'
import { execFile, execFileSync } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync, readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { withDatabase } from './test-db.ts'
import { alive } from './templates.ts'

export interface Replica {
  port: number
  /** The URL of the same database on the replica. */
  urlOf(primaryDatabaseUrl: string): string
  /** Waits until the replica has replayed everything the primary had written when this was called. */
  catchUp(timeoutMs?: number): Promise<void>
  /** Stops replay (`pg_wal_replay_pause()`): the replica keeps answering, with what it had. */
  pause(): Promise<void>
  resume(): Promise<void>
  /** A connection to a database on the replica (ended by `stop`). */
  connect(database: string): postgres.Sql
  /** Stops the server and removes its folder; idempotent. */
  stop(): Promise<void>
}

const PREFIX = 'orgscan-replica-'
const HBA_FILE = '/etc/postgresql/15/main/pg_hba.conf'
/** What to enable on the server, as the skip message says it. */
export const ENABLE_REPLICATION = `allow replication connections: add "host replication all 127.0.0.1/32 trust" and "local replication all trust" to the server's pg_hba.conf (${HBA_FILE} here) and reload it (SELECT pg_reload_conf()); .ci/run does this`

/** Settings a hot standby must have at least as large as its primary's, or it refuses to start. */
const AT_LEAST_PRIMARY = ['max_connections', 'max_worker_processes', 'max_wal_senders', 'max_prepared_transactions', 'max_locks_per_transaction']

function run(cmd: string, args: string[], asPostgres: boolean, timeoutMs = 60_000): Promise<{ ok: boolean; out: string }> {
  const [file, argv] = asPostgres ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args]
  return new Promise((resolve) => {
    execFile(file, argv, { timeout: timeoutMs, cwd: '/' }, (err, stdout, stderr) => resolve({ ok: !err, out: `${stdout}${stderr}`.trim() }))
  })
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number }
      s.close(() => resolve(port))
    })
  })
}

/** Stops and removes replicas left by processes that are gone (a killed test); tap's after script calls it too. */
export function removeStaleReplicas(): void {
  for (const f of readdirSync(tmpdir())) {
    const m = new RegExp(`^${PREFIX}(\\d+)-`).exec(f)
    if (m && !alive(Number(m[1]))) stopSync(join(tmpdir(), f))
  }
}

/** Stops the replica in `dir` if it runs (immediately: it is thrown away) and removes the folder. */
function stopSync(dir: string): void {
  const data = join(dir, 'data')
  if (existsSync(join(data, 'postmaster.pid'))) {
    const pgCtl = `/usr/lib/postgresql/${readFileSync(join(data, 'PG_VERSION'), 'utf8').trim()}/bin/pg_ctl`
    const [file, argv] = process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', pgCtl]] : [pgCtl, []]
    try {
      execFileSync(file, [...argv, '-D', data, '-m', 'immediate', '-w', 'stop'], { stdio: 'ignore', timeout: 30_000, cwd: '/' })
    } catch {
      // already stopped
    }
  }
  rmSync(dir, { recursive: true, force: true })
}

/**
 * Makes a replica of the server `adminUrl` names, or says why it cannot (`{ skip }`): not a local server, not root or
 * postgres, no PostgreSQL binaries, or replication connections refused.
 */
export async function createReplica(adminUrl: string): Promise<Replica | { skip: string }> {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined })
  let handedOver = false
  /** What removes the server and folder made so far, until the replica is handed over. */
  let undo: (() => void) | undefined
  let replicaSql: postgres.Sql[] = []
  try {
    const host = admin.options.host[0]
    if (!['127.0.0.1', 'localhost', '::1'].includes(host)) return { skip: `the replica is copied from a server on this machine; TEST_DATABASE_URL names ${host}` }
    const uid = process.getuid?.()
    let pgUid: number
    let pgGid: number
    try {
      pgUid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }))
      pgGid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }))
    } catch {
      return { skip: 'no postgres user on this machine to run the replica as' }
    }
    if (uid !== 0 && uid !== pgUid) return { skip: 'the replica runs as the postgres user: run the tests as root or as postgres' }
    const asPostgres = uid === 0
    const settings = await admin<{ name: string; setting: string }[]>`
      SELECT name, setting FROM pg_settings WHERE name = ANY(${['server_version_num', 'wal_level', ...AT_LEAST_PRIMARY]})`
    const setting = (n: string) => settings.find((s) => s.name === n)!.setting
    const bin = `/usr/lib/postgresql/${Math.floor(Number(setting('server_version_num')) / 10000)}/bin`
    if (!existsSync(`${bin}/pg_basebackup`) || !existsSync(`${bin}/pg_ctl`)) return { skip: `no PostgreSQL server binaries in ${bin}` }
    if (setting('wal_level') === 'minimal') return { skip: 'the server runs with wal_level = minimal: set it to replica (the default) and restart it' }
    if (Number(setting('max_wal_senders')) < 1) return { skip: 'the server runs with max_wal_senders = 0: set it to 10 (the default) and restart it' }
    removeStaleReplicas()

    const folder = mkdtempSync(join(tmpdir(), `${PREFIX}${process.pid}-`))
    const data = join(folder, 'data')
    if (asPostgres) chownSync(folder, pgUid, pgGid)
    const stopAtExit = () => stopSync(folder)
    process.on('exit', stopAtExit)
    undo = () => {
      process.off('exit', stopAtExit)
      stopAtExit()
    }
    // --no-sync and fsync = off: a throwaway copy; -c fast: do not wait for a spread checkpoint on the primary.
    const backup = await run(`${bin}/pg_basebackup`, ['-d', adminUrl, '-D', data, '-R', '-X', 'stream', '-c', 'fast', '--no-sync', '-w'], asPostgres)
    if (!backup.ok) {
      if (/pg_hba\.conf|replication connection|not permitted to (start|log in)|replication role/i.test(backup.out)) {
        return { skip: `the server refuses replication connections (${backup.out.split('\n').pop()}): ${ENABLE_REPLICATION}` }
      }
      throw new Error(`pg_basebackup failed: ${backup.out}`)
    }
    const port = await freePort()
    const conf = [
      `port = ${port}`,
      `listen_addresses = '127.0.0.1'`,
      `unix_socket_directories = '${folder}'`,
      'hot_standby = on',
      // The primary keeps the rows the replica's queries still read, so a test's read is never cancelled by replay.
      'hot_standby_feedback = on',
      'fsync = off',
      'shared_buffers = 16MB',
      ...AT_LEAST_PRIMARY.map((n) => `${n} = ${setting(n)}`),
    ]
    writeFileSync(join(data, 'postgresql.conf'), conf.join('\n') + '\n')
    writeFileSync(join(data, 'pg_hba.conf'), 'local all all trust\nhost all all 127.0.0.1/32 trust\n')
    if (asPostgres) for (const f of ['postgresql.conf', 'pg_hba.conf']) chownSync(join(data, f), pgUid, pgGid)
    const log = join(folder, 'server.log')
    const started = await run(`${bin}/pg_ctl`, ['-D', data, '-l', log, '-w', '-t', '30', 'start'], asPostgres)
    if (!started.ok) throw new Error(`the replica did not start: ${started.out}\n${existsSync(log) ? readFileSync(log, 'utf8').slice(-2000) : ''}`)

    const replicaUrl = (database: string) => withDatabase(`postgres://postgres@127.0.0.1:${port}/postgres`, database)
    const control = postgres(replicaUrl('postgres'), { max: 1, onnotice: () => undefined })
    replicaSql.push(control)
    let stopped: Promise<void> | undefined
    const replica: Replica = {
      port,
      urlOf: (primaryDatabaseUrl) => replicaUrl(decodeURIComponent(new URL(primaryDatabaseUrl).pathname.slice(1))),
      async catchUp(timeoutMs = 20_000) {
        const [{ lsn }] = await admin<{ lsn: string }[]>`SELECT pg_current_wal_lsn()::text AS lsn`
        const until = Date.now() + timeoutMs
        for (;;) {
          const [r] = await control<{ done: boolean; behind: string }[]>`
            SELECT pg_last_wal_replay_lsn() >= ${lsn}::pg_lsn AS done, pg_wal_lsn_diff(${lsn}::pg_lsn, pg_last_wal_replay_lsn())::text AS behind`
          if (r.done) return
          if (Date.now() > until) throw new Error(`the replica did not catch up within ${timeoutMs} ms (${r.behind} bytes behind)`)
          await new Promise((res) => setTimeout(res, 20))
        }
      },
      async pause() {
        await control`SELECT pg_wal_replay_pause()`
      },
      async resume() {
        await control`SELECT pg_wal_replay_resume()`
      },
      connect(database) {
        const sql = postgres(replicaUrl(database), { max: 2, onnotice: () => undefined })
        replicaSql.push(sql)
        return sql
      },
      stop() {
        return (stopped ??= (async () => {
          await Promise.all(replicaSql.map((s) => s.end({ timeout: 1 }))).catch(() => undefined)
          replicaSql = []
          await admin.end({ timeout: 1 }).catch(() => undefined)
          process.off('exit', stopAtExit)
          await run(`${bin}/pg_ctl`, ['-D', data, '-m', 'immediate', '-w', 'stop'], asPostgres, 30_000)
          rmSync(folder, { recursive: true, force: true })
        })())
      },
    }
    await replica.catchUp()
    handedOver = true // stop() removes everything from now on
    return replica
  } finally {
    if (!handedOver) {
      // Skipped or failed: nothing may stay behind.
      await Promise.all([...replicaSql, admin].map((s) => s.end({ timeout: 1 }))).catch(() => undefined)
      undo?.()
    }
  }
}

/**
 * A replica for a test, stopped and removed at its teardown; undefined (with a skip line saying why) without
 * TEST_DATABASE_URL or where one cannot be made — a failure instead where ORGSCAN_REQUIRE_REPLICA=1.
 */
export async function startReplica(t: Test): Promise<Replica | undefined> {
  const url = process.env.TEST_DATABASE_URL
  if (!url) {
    t.pass('skipped: a streaming replica needs PostgreSQL (TEST_DATABASE_URL); the embedded database has none', { skip: true })
    return undefined
  }
  const r = await createReplica(url)
  if ('skip' in r) {
    // .ci/run allows replication connections and then sets ORGSCAN_REQUIRE_REPLICA=1: there, a replica that cannot be
    // made fails the run instead of skipping (as ORGSCAN_REQUIRE_BROWSER does for the page tests).
    if (process.env.ORGSCAN_REQUIRE_REPLICA === '1') t.fail(`no streaming replica can be made, and ORGSCAN_REQUIRE_REPLICA=1 requires one: ${r.skip}`)
    else t.pass(`skipped: no streaming replica can be made: ${r.skip}`, { skip: true })
    return undefined
  }
  t.teardown(() => r.stop())
  return r
}
