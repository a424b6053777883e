/**
 * A database that blinks (docs/adr/0110-database-errors.md): every backend of the service's database is terminated
 * every 3 s for 15 s while a served process takes mixed traffic — REST reads through the org-state and key caches
 * (ORGSCAN_ORG_CACHE_MS at its default, so entries expire during the test), first requests of new keys (uncached key
 * lookups), a user's key (grant lookups), quota reads, MCP sessions being opened and tool calls, and OAuth token
 * requests. Every answer is the request's normal one or a 503 with Retry-After and the retryable body of its surface;
 * none is a 500; and once the terminations stop, every kind of request is answered normally again within 5 s. Needs a
 * PostgreSQL server (the backends are terminated from a session of the test's own).
 */
import { t } from './helpers/file-test.ts'
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { basic } from './helpers/service.ts'
import { spawnServer } from './helpers/server-process.ts'
import { createFreshPostgresDatabase } from './helpers/test-db.ts'
import { servedPostgres } from './helpers/served-postgres.ts'
import { initializeBody, rpc } from './helpers/mcp.ts'
import { pkce } from './helpers/oauth.ts'
import { createKey, updateAccount } from '../runtime/platform/admin.ts'
import { REPEAT_MS } from '../runtime/core/log.ts'

const PG = process.env.TEST_DATABASE_URL
const ROOT = new URL('../', import.meta.url).pathname
const BLINK_EVERY_MS = 3_000
const BLINKS = 6
const BACK_WITHIN_MS = 5_000

/** One answer as a client saw it. */
interface Seen {
  kind: string
  status: number
  retryAfter: string | null
  body: any
  text: string
}

t.test('a database whose backends are all terminated every 3 s: 503s with Retry-After, never a 500', { skip: PG ? false : 'needs TEST_DATABASE_URL (PostgreSQL): the embedded database has no second session to terminate backends from' }, async (t) => {
  const pepper = 'blink-pepper-0123456789abcdefghijklmnop'
  // One connection of the test's own: the one every other backend of the database is terminated from.
  const { sql, seed, env } = await servedPostgres(t, await createFreshPostgresDatabase(PG!), pepper, { max: 1 })
  const large = seed.orgs.find((o) => o.large)!
  const orgs = seed.orgs.filter((o) => o.accountId === large.accountId && o.scans > 0).map((o) => o.salesforceId)
  const user = seed.users.find((u) => u.accountId === large.accountId && u.orgs.length > 0)!
  await updateAccount(sql, large.accountId, { dailyLimit: 1_000_000, monthlyLimit: 10_000_000 })
  const key = await createKey(sql, pepper, large.accountId)
  const auth = basic(key.keyId, key.secret)
  const userKey = await createKey(sql, pepper, large.accountId, { userId: user.id })
  const userAuth = basic(userKey.keyId, userKey.secret)
  // Keys the server has not seen (or not within its key cache's 5 s): each one's request looks it up in the database.
  const fresh = await Promise.all(Array.from({ length: 150 }, () => createKey(sql, pepper, large.accountId)))
  let nextFresh = 0
  const freshAuth = () => {
    const k = fresh[nextFresh++ % fresh.length]
    return basic(k.keyId, k.secret)
  }
  // The production caches: the org-state cache at its default (1 s), the key cache at its default (5 s). The MCP session
  // limits are raised: the load opens sessions faster than an account may hold them.
  const server = await spawnServer(env({ ORGSCAN_MCP_SESSIONS_PER_CREDENTIAL: '100000', ORGSCAN_MCP_SESSIONS_PER_ACCOUNT: '100000', ORGSCAN_AUTH_FAILURE_RATE: '0' }))
  t.teardown(() => server.stop(0))
  const base = server.url
  const mcpUrl = server.info.mcpUrl

  // ---- the requests, each with its normal answer
  const json = (text: string) => {
    try {
      return JSON.parse(text)
    } catch {
      return undefined
    }
  }
  const seen = (kind: string, status: number, headers: Headers, text: string): Seen => ({ kind, status, retryAfter: headers.get('retry-after'), body: json(text), text })
  const get = async (kind: string, path: string, authorization: string) => {
    const r = await fetch(base + path, { headers: { authorization }, signal: AbortSignal.timeout(30_000) })
    return seen(kind, r.status, r.headers, await r.text())
  }
  let org = 0
  const restList = () => get('rest list', `/v1/orgs/${orgs[org++ % orgs.length]}/fields?limit=5`, auth)
  const userList = () => get('rest list (user)', `/v1/orgs/${user.orgs[org++ % user.orgs.length]}/objects?limit=5`, userAuth)
  const quotaRead = () => get('quota', `/v1/orgs/${orgs[org++ % orgs.length]}/quota`, auth)
  const newKey = () => get('new key', '/v1/orgs?limit=5', freshAuth())
  const initialize = async () => {
    const r = await rpc(mcpUrl, initializeBody(), { authorization: freshAuth() })
    return seen('mcp initialize', r.status, r.headers, r.text)
  }
  const opened = await rpc(mcpUrl, initializeBody(), { authorization: auth })
  t.equal(opened.status, 200, 'an MCP session is opened before the faults')
  const sid = opened.headers.get('mcp-session-id')!
  let callId = 10
  const toolCall = async () => {
    const body = { jsonrpc: '2.0', id: callId++, method: 'tools/call', params: { name: 'list_org_objects', arguments: { orgId: orgs[org++ % orgs.length], limit: 2 } } }
    const r = await rpc(mcpUrl, body, { authorization: auth, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' })
    return seen('mcp tool call', r.status, r.headers, r.text)
  }
  const registered = await fetch(`${base}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: 'Blink', redirect_uris: ['http://127.0.0.1/callback'] }) })
  t.equal(registered.status, 201, 'an OAuth client is registered before the faults')
  const clientId = ((await registered.json()) as { client_id: string }).client_id
  const token = async () => {
    // A code that was never issued: the client and the code are looked up, and the grant is refused (400).
    const form = new URLSearchParams({ grant_type: 'authorization_code', client_id: clientId, code: 'never-issued', redirect_uri: 'http://127.0.0.1/callback', code_verifier: pkce().verifier })
    const r = await fetch(`${base}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form, signal: AbortSignal.timeout(30_000) })
    return seen('oauth token', r.status, r.headers, await r.text())
  }
  const requests = [restList, restList, userList, quotaRead, newKey, initialize, toolCall, token]

  /** The request's normal answer (no fault). */
  const normal = (s: Seen): boolean => {
    switch (s.kind) {
      case 'mcp initialize':
        return s.status === 200 && s.body?.result?.protocolVersion !== undefined
      case 'mcp tool call':
        return s.status === 200 && s.body?.result !== undefined && s.body.result.isError !== true
      case 'oauth token':
        return s.status === 400 && s.body?.error === 'invalid_grant'
      default:
        return s.status === 200 && s.body?.data !== undefined
    }
  }
  const retryable = (s: Seen): boolean => {
    if (s.kind === 'mcp tool call' && s.status === 200) {
      const sc = s.body?.result?.structuredContent
      return s.body?.result?.isError === true && sc?.error === 'server_error' && sc?.retryable === true
    }
    if (s.status !== 503 || !/^[12]$/.test(s.retryAfter ?? '')) return false
    if (s.kind === 'oauth token') return s.body?.error === 'temporarily_unavailable' && typeof s.body?.error_description === 'string'
    if (s.kind.startsWith('mcp')) return s.body?.jsonrpc === '2.0' && s.body?.error?.data?.status === 503 && s.body?.error?.data?.code === 'service_unavailable'
    return s.body?.error?.status === 503 && s.body?.error?.code === 'service_unavailable'
  }
  /** A request that got no answer (the connection closed, or nothing within 30 s) is one of the wrong answers. */
  const answer = (r: () => Promise<Seen>): Promise<Seen> => r().catch((e: Error) => ({ kind: r.name, status: 0, retryAfter: null, body: undefined, text: `no answer: ${e.message}` }))
  const verdict = (s: Seen) => (normal(s) ? 'normal' : retryable(s) ? 'retryable' : 'wrong')

  for (const r of requests) t.equal(verdict(await answer(r)), 'normal', `before the faults: ${r.name} answers normally`)

  // ---- the load, while the backends are terminated every 3 s
  const answers: Seen[] = []
  let loading = true
  const worker = async (i: number) => {
    for (let n = i; loading; n++) answers.push(await answer(requests[n % requests.length]))
  }
  const workers = Array.from({ length: 8 }, (_, i) => worker(i))
  const terminate = () => sql`SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`
  let terminated = 0
  let lastBlink = 0
  for (let i = 0; i < BLINKS; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, BLINK_EVERY_MS))
    terminated += (await terminate())[0].n as number
    lastBlink = Date.now()
  }
  await new Promise((r) => setTimeout(r, 500))
  loading = false
  await Promise.all(workers)

  const wrong = answers.filter((s) => verdict(s) === 'wrong')
  const by = (v: string) => {
    const counts: Record<string, number> = {}
    for (const s of answers) if (verdict(s) === v) counts[`${s.kind} ${s.status}`] = (counts[`${s.kind} ${s.status}`] ?? 0) + 1
    return JSON.stringify(counts)
  }
  if (wrong.length) t.comment(server.stderr().split('\n').filter((l) => /"level":"(error|warn)"/.test(l)).slice(0, 5).join('\n'))
  t.ok(terminated >= BLINKS, `backends were terminated (${terminated} in ${BLINKS} rounds)`)
  t.ok(answers.some((s) => verdict(s) === 'retryable'), `the faults were seen: retryable answers ${by('retryable')}`)
  t.equal(answers.filter((s) => s.status === 500).length, 0, `no 500 among ${answers.length} answers (normal: ${by('normal')})`)
  t.same(wrong.map((s) => `${s.kind} ${s.status} retry-after=${s.retryAfter} ${s.text.slice(0, 200)}`).slice(0, 10), [], 'every answer is the normal one or the retryable 503 of its surface')
  for (const s of answers) {
    if (verdict(s) !== 'retryable') continue
    if (/SELECT|terminat|pg_|57P01|CONNECTION_|at .*\.ts/i.test(s.text)) {
      t.fail(`no driver or SQL text in an answer: ${s.text.slice(0, 300)}`)
      break
    }
  }

  // ---- recovery: every kind of request answers normally again within 5 s of the last termination
  let round: string[] = []
  while (Date.now() - lastBlink < BACK_WITHIN_MS) {
    round = []
    for (const r of requests) {
      const s = await answer(r)
      if (verdict(s) !== 'normal') round.push(`${s.kind} ${s.status}`)
    }
    if (round.length === 0) break
    await new Promise((r) => setTimeout(r, 100))
  }
  t.same(round, [], `every kind of request answers normally again ${Date.now() - lastBlink} ms after the last termination`)
  t.equal(server.exitCode(), null, 'the server process is still running')
  if (server.exitCode() !== null) t.comment(server.stderr().split('\n').filter((l) => !l.includes('"level":"info"')).slice(-30).join('\n'))
  // The causes are logged, but not once per failed request: an identical line at most once per few seconds, and an
  // unreachable database without a stack.
  const logged = server.stderr().split('\n').filter((l) => /^\{"time":.*"level":"(error|warn)"/.test(l)).map((l) => JSON.parse(l) as Record<string, any>)
  const last = new Map<string, number>()
  const repeats: string[] = []
  for (const l of logged) {
    const kind = `${l.level} ${l.msg} ${l.code ?? ''} ${typeof l.err === 'object' ? `${l.err.code} ${l.err.message}` : l.err}`
    const at = Date.parse(l.time)
    if (at - (last.get(kind) ?? -Infinity) < REPEAT_MS - 500) repeats.push(kind)
    last.set(kind, at)
  }
  t.same(repeats, [], `${logged.length} error and warning lines for ${answers.length - answers.filter((s) => verdict(s) === 'normal').length} failed requests: none repeats within ${REPEAT_MS} ms`)
  t.same(logged.filter((l) => /^(CONNECTION_|ECONN|57P0|08)/.test(l.err?.code ?? '') && l.err.stack !== undefined).map((l) => l.msg), [], 'no stack for an unreachable database')
})

/**
 * Transactions on a pool whose backends are terminated, run by a process of their own (the child below): it prints the
 * outcome of each transaction and exits 0, unless something was thrown where no caller could catch it.
 */
const TRANSACTIONS_UNDER_TERMINATION = `
  import postgres from 'postgres'
  const sql = postgres(process.env.DATABASE_URL, { max: 4, onnotice: () => undefined })
  const killer = postgres(process.env.DATABASE_URL, { max: 1, onnotice: () => undefined })
  const within = (ms, p) => Promise.race([p, new Promise((r) => setTimeout(() => r('no answer'), ms).unref())])
  const outcomes = {}
  let running = true
  const worker = async () => {
    while (running) {
      const tx = sql.begin(async (tx) => {
        await tx\`SELECT 1\`
        await tx\`SELECT pg_sleep(0.001)\`
        await tx\`SELECT 2\`
      })
      const o = await within(10000, tx.then(() => 'ok', (e) => e.code ?? 'no code'))
      outcomes[o] = (outcomes[o] ?? 0) + 1
      if (o === 'no answer') break
    }
  }
  const workers = Array.from({ length: 8 }, worker)
  for (let i = 0; i < 15; i++) {
    await new Promise((r) => setTimeout(r, 200))
    await killer\`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()\`
  }
  running = false
  await Promise.all(workers)
  const after = await within(10000, sql.begin((tx) => tx\`SELECT 3 AS n\`).then((r) => r[0].n))
  process.stdout.write(JSON.stringify({ outcomes, after }) + '\\n', () => process.exit(0))
  // Ended by the write's callback: a pool closing under a terminated backend must not keep the process waiting.
  void sql.end({ timeout: 1 })
  void killer.end({ timeout: 1 })
`

t.test('transactions whose backends are terminated fail with a connection error; the process lives (postgres.js patch e, patches/README.md)', { skip: PG ? false : 'needs TEST_DATABASE_URL (PostgreSQL)' }, async (t) => {
  // Unpatched, a transaction's next statement or its rollback on a connection whose socket was gone threw from a
  // setImmediate callback, which no caller can catch: the process exited (porsager/postgres#1154, #1208).
  for (const copy of ['src', 'cjs/src']) {
    const text = readFileSync(new URL(`node_modules/postgres/${copy}/connection.js`, `file://${ROOT}`), 'utf8')
    t.ok(text.includes('/* orgscan: a write without a socket fails what the connection holds */'), `the installed postgres.js (${copy}) carries patch e (npm install applies patches/postgres+3.4.9.patch)`)
  }
  const db = await createFreshPostgresDatabase(PG!)
  t.teardown(() => db.drop())
  const child = spawn(process.execPath, ['--input-type=module', '-e', TRANSACTIONS_UNDER_TERMINATION], { cwd: ROOT, env: { ...process.env, DATABASE_URL: db.databaseUrl }, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (err += d))
  // Bounded: the child bounds each transaction (10 s); a child that never ends is a failure said here, not tap's timeout.
  const code = await new Promise<number | null>((r) => {
    const timer = setTimeout(() => {
      err += ' (still running after 60 s: killed)'
      child.kill('SIGKILL')
    }, 60_000)
    child.once('exit', (c) => {
      clearTimeout(timer)
      r(c)
    })
  })
  t.equal(code, 0, `the process lives: nothing thrown where no caller can catch it${code === 0 ? '' : ` (${err.trim().split('\n').slice(0, 8).join(' | ')})`}`)
  const { outcomes, after } = JSON.parse(out || '{"outcomes":{}}') as { outcomes: Record<string, number>; after?: unknown }
  t.same(Object.keys(outcomes).filter((o) => !/^(ok|CONNECTION_CLOSED|CONNECTION_DESTROYED|ECONNRESET|57P01)$/.test(o)), [], `every transaction committed or failed with a connection error: ${JSON.stringify(outcomes)}`)
  t.ok(Object.keys(outcomes).some((o) => o !== 'ok'), 'some transactions lost their backend')
  t.equal(after, 3, 'and the pool runs transactions again')
})
