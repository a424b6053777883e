/**
 * `orgscan serve --workers N` (docs/operating.md "Several processes"): one spawned `--workers 2` service on PostgreSQL
 * for the whole file — one banner; requests, /healthz and /readyz answered by both workers (counted by the per-worker
 * metric), on the REST listener and on MCP_PORT; the quota exact across them; a worker killed with SIGKILL is restarted while the other answers; one scrape
 * shows both workers and the restart; SIGTERM lets the answers in progress finish and the primary exits 0; the access
 * log arrives in whole lines. On the embedded database the command refuses more than one worker. The restart policy
 * is checked as a function.
 */
import { t } from '../helpers/file-test.ts'
import { get as httpGet } from 'node:http'
import postgres from 'postgres'
import { basic } from '../helpers/service.ts'
import { spawnServer, type ServerProcess } from '../helpers/server-process.ts'
import { createTestDatabase } from '../helpers/test-db.ts'
import { childPids } from '../helpers/proc.ts'
import { SEED_SCALE } from '../helpers/templates.ts'
import { run } from '../../bin/cli/main.ts'
import { migrate } from '../../runtime/platform/db/migrate.ts'
import { seedDemo } from '../../demo/seed.ts'
import { compileRegistry } from '../../runtime/core/registry.ts'
import { registry } from '../../resources/index.ts'
import { createAccount, createKey } from '../../runtime/platform/admin.ts'
import { decideRestart, RESTART_POLICY } from '../../runtime/platform/cluster/restart-policy.ts'

const PG = process.env.TEST_DATABASE_URL

/** A GET on a connection of its own (node:cluster hands out connections, not requests, to the workers). */
function getFresh(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    httpGet(url, { agent: false, headers }, (res) => {
      let body = ''
      res.on('data', (d) => (body += d))
      res.on('end', () => resolve({ status: res.statusCode!, body }))
    }).on('error', reject)
  })
}

/** The value of one sample line (`name{labels} value`) of a scrape, or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+)(\{(.*)\})? (\S+)$/.exec(line)
    if (!m || m[1] !== name) continue
    const got = Object.fromEntries([...(m[3] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]))
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[4])
  }
  return undefined
}

/** The sum of every sample of `name` in a scrape. */
function total(text: string, name: string): number {
  return text.split('\n').filter((l) => l.startsWith(name + '{') || l.startsWith(name + ' ')).reduce((a, l) => a + Number(l.split(' ').at(-1)), 0)
}

async function until<T>(probe: () => Promise<T | undefined> | T | undefined, what: string, maxMs = 20_000): Promise<T> {
  const t0 = Date.now()
  for (;;) {
    const v = await probe()
    if (v !== undefined) return v
    if (Date.now() - t0 > maxMs) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

t.test('the restart policy: at once after a good run, doubling waits for failed starts, then it gives up', async (t) => {
  t.same(decideRestart(0, 60_000), { failures: 0, delayMs: 0 }, 'a worker that served for a minute is restarted at once')
  t.same(decideRestart(3, 60_000), { failures: 0, delayMs: 0 }, 'and the count of failed starts starts over')
  const waits: number[] = []
  let failures = 0
  for (;;) {
    const d = decideRestart(failures, failures % 2 ? 1000 : undefined)
    failures = d.failures
    if ('giveUp' in d) break
    waits.push(d.delayMs)
  }
  t.same(waits, [500, 1000, 2000, 4000, 8000, 16000], 'a worker dying at start (or within 10 s) waits twice as long each time')
  t.equal(failures, RESTART_POLICY.maxFailures + 1, 'then the primary gives up')
})

t.test('more than one worker needs PostgreSQL: the command refuses on the embedded database', async (t) => {
  const io = (env: Record<string, string>) => {
    const lines = { out: '', err: '' }
    return { lines, io: { out: (l: string) => void (lines.out += l + '\n'), err: (l: string) => void (lines.err += l + '\n'), env: { ORGSCAN_DATA_DIR: '/nonexistent/orgscan-workers', ...env } } }
  }
  const flag = io({})
  t.equal(await run(['serve', '--workers', '2'], flag.io), 1)
  t.equal(flag.lines.err, 'orgscan: 2 workers need a PostgreSQL server (DATABASE_URL): the embedded database can be opened by one process only. Set DATABASE_URL=postgres://…, or run one process (--workers 1, ORGSCAN_WORKERS=1).\n')
  const env = io({ ORGSCAN_WORKERS: '3' })
  t.equal(await run(['serve'], env.io), 1)
  t.match(env.lines.err, /^orgscan: 3 workers need a PostgreSQL server/, 'ORGSCAN_WORKERS too')
  const zero = io({})
  t.equal(await run(['serve', '--workers', '0'], zero.io), 2, '--workers 0 is a usage error')
  t.match(zero.lines.err, /--workers must be a whole number ≥ 1/)
  const bad = io({ ORGSCAN_WORKERS: 'many', DATABASE_URL: 'postgres://x@127.0.0.1:1/x' })
  t.equal(await run(['serve'], bad.io), 1)
  t.match(bad.lines.err, /ORGSCAN_WORKERS: must be a whole number/)
})

t.test('orgscan serve --workers 2 on PostgreSQL', { skip: PG ? false : 'needs TEST_DATABASE_URL (PostgreSQL): the embedded database belongs to one process' }, async (t) => {
  const tdb = await createTestDatabase({ template: 'seeded' })
  t.teardown(() => tdb.drop())
  const sql = postgres(tdb.databaseUrl!, { max: 2, onnotice: () => undefined })
  t.teardown(() => sql.end())
  let seed = tdb.seed
  if (!seed) {
    await migrate(sql)
    seed = await seedDemo(sql, compileRegistry(registry), { scale: SEED_SCALE })
  }
  const pepper = 'workers-test-pepper-0123456789abcdefgh'
  const org = seed.orgs.find((o) => o.large)!
  const key = await createKey(sql, pepper, org.accountId)
  const auth = { authorization: basic(key.keyId, key.secret) }
  const env = { ...process.env, DATABASE_URL: tdb.databaseUrl, ORGSCAN_PEPPER: pepper, ORGSCAN_SEED_DEMO: 'false', ORGSCAN_WORKERS: '2', ORGSCAN_ADMIN_PORT: '0', MCP_PORT: '0', ORGSCAN_KEEP_SCANS: '0' }

  const srv: ServerProcess = await spawnServer(env)
  t.teardown(() => srv.stop(0))
  const scrape = async () => (await getFresh(`${srv.info.adminUrl}/metrics`)).body
  const fields = (offset: number) => `${srv.url}/v1/orgs/${org.salesforceId}/fields?limit=5&offset=${offset}`

  t.test('one banner; requests and health checks are answered by both workers', async (t) => {
    t.equal(srv.stdout().trim().split('\n').length, 1, 'one banner line')
    t.match(srv.info, { workers: 2, adminUrl: /^http:\/\/127\.0\.0\.1:\d+$/, demoKey: null })
    const mcpBase = srv.info.mcpUrl.replace(/\/v1\/mcp$/, '')
    t.not(new URL(mcpBase).port, new URL(srv.url).port, 'MCP_PORT=0: a port of its own')
    for (let i = 0; i < 4; i++) t.equal((await getFresh(`${mcpBase}/healthz`)).status, 200, 'answered on the MCP listener')
    for (let i = 0; i < 6; i++) {
      t.equal((await getFresh(`${srv.url}/healthz`)).status, 200)
      t.equal((await getFresh(`${srv.url}/readyz`)).status, 200)
      t.equal((await getFresh(fields(i), auth)).status, 200)
    }
    const m = await scrape()
    const perWorker = [sample(m, 'orgscan_worker_http_requests_total', { worker: '1' }), sample(m, 'orgscan_worker_http_requests_total', { worker: '2' })]
    t.ok(perWorker.every((n) => n !== undefined && n > 0), `both workers answered (${perWorker.join(' and ')})`)
    t.equal(total(m, 'orgscan_http_requests_total'), perWorker[0]! + perWorker[1]!, 'the request counts of both are summed')
    t.equal(sample(m, 'orgscan_http_requests_total', { method: 'GET', route: '/readyz', status: '200' }), 6)
    t.equal(sample(m, 'orgscan_http_requests_total', { method: 'GET', route: '/healthz', status: '200' }), 10, 'both listeners')
    t.equal(sample(m, 'orgscan_workers_serving'), 2)
    t.ok(sample(m, 'orgscan_worker_resident_memory_bytes', { worker: '2' })! > 10_000_000, 'memory per worker')
  })

  t.test('the quota is exact across the workers', async (t) => {
    const small = await createAccount(sql, { name: 'Small', dailyLimit: 5, monthlyLimit: 100 })
    const k = await createKey(sql, pepper, small.id)
    const answers = await Promise.all(Array.from({ length: 12 }, () => getFresh(`${srv.url}/v1/orgs`, { authorization: basic(k.keyId, k.secret) })))
    const statuses = answers.map((a) => a.status).sort()
    t.same(statuses, [...Array(5).fill(200), ...Array(7).fill(429)], 'exactly the limit of 200s')
  })

  t.test('a worker killed with SIGKILL is restarted; the other answers meanwhile', async (t) => {
    const before = childPids(srv.pid)
    t.equal(before.length, 2, 'two workers')
    process.kill(before[0], 'SIGKILL')
    await until(() => (srv.stderr().includes('"msg":"worker exited; restarting it"') ? true : undefined), 'the primary to see the exit')
    for (let i = 0; i < 4; i++) t.equal((await getFresh(fields(10 + i), auth)).status, 200, 'answered')
    const after = await until(() => {
      const now = childPids(srv.pid)
      return now.length === 2 && !now.includes(before[0]) ? now : undefined
    }, 'a replacement')
    t.ok(after.includes(before[1]), 'the other worker kept running')
    const m = await until(async () => {
      const text = await scrape()
      return sample(text, 'orgscan_workers_serving') === 2 ? text : undefined
    }, 'the replacement to serve')
    t.equal(sample(m, 'orgscan_worker_restarts_total'), 1, 'one restart counted')
    t.match(srv.stderr(), /"msg":"worker exited; restarting it","worker":\d,"pid":\d+,"code":null,"signal":"SIGKILL"/)
    for (let i = 0; i < 4; i++) t.equal((await getFresh(fields(20 + i), auth)).status, 200, 'answered after the restart')
  })

  t.test('SIGTERM: the answers in progress finish, then the primary exits 0', async (t) => {
    // Slow answers: the test holds a lock on the fields table, so the workers' reads of it wait.
    let release!: () => void
    const held = new Promise<void>((r) => (release = r))
    const locked = new Promise<void>((resolve, reject) => {
      sql.begin(async (tx) => {
        await tx`LOCK TABLE fields IN ACCESS EXCLUSIVE MODE`
        resolve()
        await held
      }).catch(reject)
    })
    await locked
    const inProgress = Array.from({ length: 4 }, (_, i) => getFresh(fields(100 + i), auth))
    await until(async () => {
      const [{ n }] = await sql`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`
      return n >= 4 ? true : undefined
    }, 'four reads waiting on the lock')
    const exited = srv.stop(15_000)
    await until(() => (srv.stderr().includes('SIGTERM received: draining 2 workers') ? true : undefined), 'the drain')
    await new Promise((r) => setTimeout(r, 300))
    release()
    for (const [i, p] of inProgress.entries()) t.equal((await p).status, 200, `answer ${i + 1} in progress finished`)
    t.equal(await exited, 0, 'the primary exited 0')
    t.same(childPids(srv.pid), [], 'no worker left')
    // The access log: whole lines, each from one worker.
    const lines = srv.stderr().split('\n').filter((l) => l.startsWith('{'))
    const broken = lines.filter((l) => {
      try {
        JSON.parse(l)
        return false
      } catch {
        return true
      }
    })
    t.same(broken, [], 'every JSON line is whole')
    const access = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request')
    t.ok(access.length >= 12, `the access log has the requests (${access.length})`)
    t.same([...new Set(access.map((l) => l.worker))].sort(), [1, 2], 'each line names its worker')
  })
})
