/**
 * The version lifecycle from the database (docs/versioning.md): the rules as a table; `orgscan versions` run while a
 * server holds the database (through its admin socket on the embedded database, directly on PostgreSQL, where a
 * second `orgscan serve` process follows too); Deprecation/Sunset on REST, the status in `GET /` and `server_info`,
 * 410 from the sunset date (injected clock) and at once after `versions sunset`; which keys and users called each
 * version; and deprecation notices through a real SMTP server on loopback, sent once.
 */
import { t } from '../helpers/file-test.ts'
import { SMTPServer } from 'smtp-server'
import { simpleParser } from 'mailparser'
import type { AddressInfo } from 'node:net'
import { run as cli } from '../../bin/cli/main.ts'
import { basic, startTestService, TEST_PEPPER } from '../helpers/service.ts'
import { initializeBody, mcpClient, rpc } from '../helpers/mcp.ts'
import { spawnServer } from '../helpers/server-process.ts'
import { createKey } from '../../runtime/platform/admin.ts'
import { issueClient } from '../../runtime/platform/oauth/clients.ts'
import { addMonths, planChange, utcDate, type VersionChange } from '../../runtime/platform/versions/rules.ts'
import type { VersionRow } from '../../runtime/core/version-state.ts'
import { changeVersions } from '../../runtime/platform/versions/operations.ts'
import { adoptFirstStartVersions } from '../../runtime/platform/versions/adopt.ts'
import { createLogger } from '../../runtime/core/log.ts'

const PG = process.env.TEST_DATABASE_URL !== undefined
let now = Date.now()
const ts = await startTestService(t, { clock: () => now })
const sql = ts.svc.db.sql
const today = utcDate(now)

// A real SMTP server on loopback: records every message; refuses refuse@c.example once.
const received: Array<{ to: string[]; subject: string; text: string }> = []
let refuseOnce = true
const smtp = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS'],
  logger: false,
  onRcptTo(address, _session, cb) {
    if (address.address === 'refuse@c.example' && refuseOnce) {
      refuseOnce = false
      return cb(Object.assign(new Error('mailbox unavailable'), { responseCode: 550 }))
    }
    cb()
  },
  onData(stream, session, cb) {
    simpleParser(stream).then(
      (m) => {
        received.push({ to: session.envelope.rcptTo.map((r) => r.address), subject: m.subject ?? '', text: m.text ?? '' })
        cb()
      },
      cb,
    )
  },
})
await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', () => r()))
t.teardown(() => new Promise<void>((r) => smtp.close(() => r())))

const env = {
  ...process.env,
  ORGSCAN_PEPPER: TEST_PEPPER,
  DATABASE_URL: ts.location.databaseUrl,
  ORGSCAN_DATA_DIR: ts.location.dataDir,
  SMTP_URL: `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`,
  SMTP_FROM: 'orgscan <api@orgscan.example>',
  ORGSCAN_DOCS_URL: 'https://docs.orgscan.example/docs/',
}
// On PostgreSQL a second `orgscan serve` process on the same database must follow changes as well (started now, used below).
const starting = PG ? spawnServer({ ...env, DATABASE_URL: ts.location.databaseUrl, ORGSCAN_SEED_DEMO: 'false' }) : undefined
if (starting) t.teardown(async () => (await starting).stop(0))

/** The `orgscan` command in this process, against the running service's database. */
async function orgscan(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = ''
  let stderr = ''
  const code = await cli(args, { out: (l) => (stdout += l + '\n'), err: (l) => (stderr += l + '\n'), env })
  return { code, stdout, stderr }
}

/** Polls `probe` for up to `ms` (PostgreSQL delivers the change notification asynchronously). */
async function until(probe: () => Promise<boolean>, ms = 6000): Promise<boolean> {
  const t0 = Date.now()
  for (;;) {
    if (await probe()) return true
    if (Date.now() - t0 > ms) return false
    await new Promise((r) => setTimeout(r, 25))
  }
}

// Credentials whose calls are recorded: account A's own key, a key of A's user U, U signed in with OAuth, account B's
// key (B has no contact e-mail), account C's key (its address is refused once by the SMTP server).
const user = ts.seed.users[0]
const accountA = user.accountId
const accountB = ts.seed.accounts.find((a) => a.id !== accountA)!.id
const keyA = await createKey(sql, ts.svc.pepper, accountA, { name: 'CI pipeline' })
const keyU = await createKey(sql, ts.svc.pepper, accountA, { userId: user.id })
const keyB = await createKey(sql, ts.svc.pepper, accountB)
const client = await issueClient(sql, ts.svc.pepper, { account: accountA, name: 'Assistant', redirectUris: ['http://localhost/cb'], scopes: ['mcp:read'] })
const { token } = await ts.svc.oauth.tokens.issue({ userId: user.id, clientId: client.clientId, scopes: ['mcp:read'], resource: `${ts.url}/v1`, family: '00000000-0000-4000-8000-0000000000aa' })
// (Made before the first subtest: a subtest defined after a top-level await can come after tap has ended the file.)

const row = (name: string, status: VersionRow['status'], sunsetDate: string | null = null): VersionRow => ({ surface: 'rest', name, status, sunsetDate, releasedAt: '2026-01-01T00:00:00.000Z', deprecatedAt: null, removedAt: null })

t.test('the rules of a change, as a table', async (t) => {
  const at = Date.parse('2026-11-30T12:00:00Z')
  t.equal(addMonths('2026-11-30', 3), '2027-02-28', 'three calendar months, the day clamped to the month')
  const cases: Array<[string, VersionRow[], VersionChange, RegExp | object[], string[]?]> = [
    ['deprecate with a 3-month window', [row('v1', 'current')], { kind: 'deprecate', name: 'v1', sunsetDate: '2027-02-28' }, [{ name: 'v1', status: 'deprecated', sunsetDate: '2027-02-28' }]],
    ['deprecate with a shorter window', [row('v1', 'current')], { kind: 'deprecate', name: 'v1', sunsetDate: '2027-02-27' }, /89 days away; a deprecation window is at least 3 months.*2027-02-28 or later/],
    ['not a date', [row('v1', 'current')], { kind: 'deprecate', name: 'v1', sunsetDate: '2027-02-30' }, /YYYY-MM-DD/],
    ['month 13 (no date at all, not a RangeError)', [row('v1', 'current')], { kind: 'deprecate', name: 'v1', sunsetDate: '2027-13-01' }, /--sunset must be a date written YYYY-MM-DD/],
    ['month 0', [row('v1', 'current')], { kind: 'deprecate', name: 'v1', sunsetDate: '2027-00-10' }, /--sunset must be a date written YYYY-MM-DD/],
    ['lengthening a running window', [row('v1', 'deprecated', '2026-12-15')], { kind: 'deprecate', name: 'v1', sunsetDate: '2026-12-20' }, [{ name: 'v1', status: 'deprecated', sunsetDate: '2026-12-20' }]],
    ['bringing a sunset forward under 3 months', [row('v1', 'deprecated', '2027-06-01')], { kind: 'deprecate', name: 'v1', sunsetDate: '2027-01-15' }, /Bringing REST v1's sunset forward from 2027-06-01/],
    ['an unknown version', [row('v1', 'current')], { kind: 'deprecate', name: 'v7', sunsetDate: '2027-06-01' }, /REST has no version v7 \(it has v1\)/],
    ['a removed version', [row('v1', 'deprecated', '2026-11-01')], { kind: 'deprecate', name: 'v1', sunsetDate: '2027-06-01' }, /was removed on 2026-11-01/],
    ['sunset of a current version', [row('v1', 'current')], { kind: 'sunset', name: 'v1' }, /REST v1 is current: deprecate it first/],
    ['sunset of a deprecated version', [row('v1', 'deprecated', '2027-06-01')], { kind: 'sunset', name: 'v1' }, [{ name: 'v1', status: 'removed', sunsetDate: '2026-11-30' }]],
    ['release deprecates the current one', [row('v1', 'current')], { kind: 'add', name: 'v2', sunsetDate: '2027-03-01' }, [{ name: 'v2', status: 'current', sunsetDate: null }, { name: 'v1', status: 'deprecated', sunsetDate: '2027-03-01' }]],
    ['release without a sunset for the current one', [row('v1', 'current')], { kind: 'add', name: 'v2' }, /deprecates v1: give its sunset date with --sunset/],
    ['release of a major out of order', [row('v1', 'current')], { kind: 'add', name: 'v3', sunsetDate: '2027-03-01' }, /next REST major is v2/],
    ['release of a major the build does not serve', [row('v1', 'current')], { kind: 'add', name: 'v2', sunsetDate: '2027-03-01' }, /This build of orgscan does not serve REST v2 \(it serves v1\)/, ['v1']],
    ['a third supported major', [row('v1', 'deprecated', '2027-06-01'), row('v2', 'current')], { kind: 'add', name: 'v3', sunsetDate: '2027-09-01' }, /would leave 3 supported majors \(v1, v2, v3\); at most 2.*orgscan versions sunset v1 --surface rest/],
    ['a third major once the oldest is removed', [row('v1', 'removed', '2026-11-01'), row('v2', 'current')], { kind: 'add', name: 'v3', sunsetDate: '2027-09-01' }, [{ name: 'v3', status: 'current', sunsetDate: null }, { name: 'v2', status: 'deprecated', sunsetDate: '2027-09-01' }]],
  ]
  for (const [what, rows, change, expected, served = ['v1', 'v2', 'v3']] of cases) {
    if (expected instanceof RegExp) t.throws(() => planChange('rest', rows, change, at, served), expected, what)
    else t.same(planChange('rest', rows, change, at, served), expected, what)
  }
})

t.test('orgscan versions: list, help and refusals', async (t) => {
  const list = await orgscan('versions', 'list', '--json')
  t.equal(list.code, 0, list.stderr)
  t.match(JSON.parse(list.stdout), [{ surface: 'rest', name: 'v1', status: 'current', sunsetDate: null }, { surface: 'mcp', name: 'v1', status: 'current', sunsetDate: null }])
  t.match((await orgscan('versions', 'list', '--surface', 'rest')).stdout, /^surface\s+name\s+status\s+sunsetDate\s+releasedAt\s+callers\nREST\s+v1\s+current\s+-/)
  t.match((await orgscan('versions', '--help')).stdout, /orgscan versions deprecate VERSION --sunset YYYY-MM-DD/)
  const short = await orgscan('versions', 'deprecate', 'v1', '--sunset', addMonths(today, 2))
  t.equal(short.code, 1)
  t.match(short.stderr, new RegExp(`^orgscan: Deprecating REST v1: the sunset date ${addMonths(today, 2)} is \\d+ days away; a deprecation window is at least 3 months .*choose ${addMonths(today, 3)} or later\\.`))
  const current = await orgscan('versions', 'sunset', 'v1', '--surface', 'mcp', '--json')
  t.equal(current.code, 1)
  t.match(JSON.parse(current.stderr).error.message, /MCP v1 is current: deprecate it first/)
  t.match((await orgscan('versions', 'add', 'v2', '--sunset', addMonths(today, 4))).stderr, /This build of orgscan does not serve REST v2/)
  for (const [args, re] of [
    [['versions', 'deprecate', 'v1'], /needs --sunset YYYY-MM-DD/],
    [['versions', 'list', '--surface', 'soap'], /--surface takes rest or mcp/],
    [['versions', 'sunset', '1'], /A version is named v1, v2/],
    [['versions', 'retire', 'v1'], /versions takes list, add, deprecate, sunset or notify/],
  ] as const) {
    const r = await orgscan(...args)
    t.equal(r.code, 2, args.join(' '))
    t.match(r.stderr, re)
  }
  t.match(JSON.parse((await orgscan('versions', 'list', '--json')).stdout), [{ status: 'current' }, { status: 'current' }], 'nothing changed')
})

t.test('a deprecation made with the CLI reaches the running server(s); 410 from the sunset date', async (t) => {
  const second = await starting
  const auth = basic(keyA.keyId, keyA.secret)
  const before = await ts.get('/v1/orgs', auth)
  t.equal(before.status, 200)
  t.equal(before.headers.get('deprecation'), null)
  t.equal((await ts.get('/v1/orgs', `Bearer ${token}`)).status, 200, 'U signed in with OAuth calls REST v1')
  t.equal((await ts.get('/v1/orgs', basic(keyB.keyId, keyB.secret))).status, 200)
  t.equal((await rpc(ts.svc.mcpUrl, initializeBody(), { authorization: basic(keyU.keyId, keyU.secret) })).status, 200, "U's key calls MCP v1")

  const sunset = addMonths(today, 4)
  const httpDate = new Date(`${sunset}T00:00:00Z`).toUTCString()
  const dep = await orgscan('versions', 'deprecate', 'v1', '--sunset', sunset)
  t.equal(dep.code, 0, dep.stderr)
  t.match(dep.stdout, /^deprecated REST v1 and MCP v1;/)
  const headers = async (url: string) => {
    const r = await fetch(`${url}/v1/orgs`, { headers: { authorization: auth } })
    await r.arrayBuffer()
    return r.headers.get('deprecation') === 'true' && r.headers.get('sunset') === httpDate
  }
  if (PG) t.ok(await until(() => headers(ts.url)), 'this server follows the notification')
  else t.ok(await headers(ts.url), 'the next response carries Deprecation and Sunset (the change went through the admin socket)')
  if (second) t.ok(await until(() => headers(second.url)), 'the second process follows too')
  const r = await ts.get('/v1/orgs', auth)
  t.equal(r.headers.get('deprecation'), 'true')
  t.equal(r.headers.get('sunset'), httpDate)
  t.same((await ts.get('/')).body, { versions: [{ name: 'v1', status: 'deprecated', sunsetDate: sunset }] }, 'GET / reports it')
  const { client: mcp } = await mcpClient(t, ts.svc.mcpUrl, auth)
  t.same((await mcp.callTool({ name: 'server_info', arguments: {} })).structuredContent, { versions: [{ name: 'v1', status: 'deprecated', sunsetDate: sunset }] }, 'server_info reports it')
  t.equal((await rpc(ts.svc.mcpUrl, initializeBody(), { authorization: auth })).headers.get('deprecation'), null, 'no deprecation headers on MCP')

  const saved = now
  now = Date.parse(`${sunset}T00:00:00Z`) - 1
  t.equal((await ts.get('/v1/orgs', auth)).status, 200, 'served until the sunset date')
  now += 1
  const gone = await ts.get('/v1/orgs', auth)
  t.equal(gone.status, 410, 'REST: 410 Gone from the sunset date, 00:00 UTC')
  t.equal(gone.body.error.code, 'gone')
  t.equal((await rpc(ts.svc.mcpUrl, initializeBody(), { authorization: auth })).status, 410, 'MCP: 410 Gone')
  t.same((await ts.get('/')).body, { versions: [] }, 'a removed version is no longer listed')
  now = saved
})

t.test('who called each version, and deprecation notices sent once', async (t) => {
  t.equal((await orgscan('accounts', 'update', accountA, '--email', 'Ops@Acme.example')).code, 0)
  const c = await orgscan('accounts', 'create', '--name', 'Refusing Co', '--email', 'refuse@c.example', '--json')
  t.equal(c.code, 0, c.stderr)
  const accountC = JSON.parse(c.stdout) as { id: string; email: string }
  t.equal(accountC.email, 'refuse@c.example')
  const keyC = await createKey(sql, ts.svc.pepper, accountC.id)
  t.equal((await ts.get('/v1/orgs', basic(keyC.keyId, keyC.secret))).status, 200)
  // On the embedded database the serving process writes what it recorded when the command asks for recipients; on
  // PostgreSQL the command cannot reach it, so this process writes it now (it does so every 30 s anyway).
  if (PG) await ts.svc.usage.flush()

  const first = await orgscan('versions', 'notify', 'v1', '--json')
  t.equal(first.code, 1, 'one notice was refused: exit 1')
  t.match(first.stderr, /notify: 3 recipients with an address, 1 account without one/)
  t.match(first.stderr, /notify: 3\/3 \(2 sent, 1 failed\)/, 'progress lines')
  const report = JSON.parse(first.stdout.split('\n')[0])
  t.same(report.sent.map((s: { to: string }) => s.to).sort(), ['ops@acme.example', user.email.toLowerCase()].sort())
  t.match(report.failed, [{ to: 'refuse@c.example', error: /550/, unconfirmed: false }])
  t.match(report.withoutAddress, [{ accountId: accountB, calls: [{ keyId: keyB.keyId, surface: 'rest', version: 'v1' }] }], 'an owner without an address is reported')
  t.equal(received.length, 2)
  const sunset = addMonths(today, 4)
  const toUser = received.find((m) => m.to.includes(user.email.toLowerCase()))!
  t.equal(toUser.subject, `Deprecation notice: orgscan REST API v1 and MCP server v1 stop answering on ${sunset}`, "U called both surfaces: one e-mail")
  t.match(toUser.text, `Version v1 of the orgscan REST API is deprecated. From ${sunset} (00:00 UTC) it answers every request with 410 Gone.`)
  t.match(toUser.text, `${user.email} signed in with OAuth (account`)
  t.match(toUser.text, `API key ${keyU.keyId} of account`)
  t.match(toUser.text, 'Version v1 of the orgscan MCP server is deprecated')
  t.match(toUser.text, 'https://docs.orgscan.example/docs/versioning.md')
  const toOps = received.find((m) => m.to.includes('ops@acme.example'))!
  t.equal(toOps.subject, `Deprecation notice: orgscan REST API v1 and MCP server v1 stop answering on ${sunset}`)
  t.match(toOps.text, `API key ${keyA.keyId} ("CI pipeline") of account`)
  t.notMatch(toOps.text, keyU.keyId, "the account contact is not told about its user's key")
  t.notMatch(toOps.text, keyA.secret, 'no secret in a notice')

  const second = await orgscan('versions', 'notify', 'v1', '--json')
  t.equal(second.code, 0, second.stderr)
  const r2 = JSON.parse(second.stdout)
  t.same(r2.sent, [{ to: 'refuse@c.example', notices: [{ surface: 'rest', version: 'v1', sunsetDate: sunset }] }], 'a re-run sends only what was not sent: the refused notice')
  t.equal(r2.alreadySent.length, 2)
  t.equal(received.length, 3)

  // A run interrupted between handing an e-mail to the server and recording it: not resent unless asked.
  await sql`UPDATE version_notices SET state = 'sending', sent_at = NULL WHERE recipient = 'ops@acme.example'`
  const third = await orgscan('versions', 'notify', 'v1')
  t.equal(third.code, 0, third.stderr)
  t.match(third.stdout, /sent 0\n/)
  t.match(third.stdout, /interrupted in an earlier run, not resent .*: ops@acme\.example/)
  t.match(third.stdout, new RegExp(`without an address .*\\n  account ${accountB} \\(.*\\): ${keyB.keyId}`))
  t.equal(received.length, 3, 'nothing sent twice')
  const retry = await orgscan('versions', 'notify', 'v1', '--retry-unconfirmed', '--json')
  t.same(JSON.parse(retry.stdout).sent.map((s: { to: string }) => s.to), ['ops@acme.example'], '--retry-unconfirmed resends it')
  t.equal(received.length, 4)
  t.same(JSON.parse((await orgscan('versions', 'notify', 'v1', '--json')).stdout).sent, [], 'and then nothing')
  t.equal(received.length, 4)

  const listed = JSON.parse((await orgscan('versions', 'list', '--json')).stdout) as Array<{ surface: string; callers: number }>
  t.same(listed.map((l) => [l.surface, l.callers]), [['rest', 4], ['mcp', 2]], 'callers of the last 90 days: MCP A and U keys; REST A, B, C keys and user U')
  const [{ n }] = await sql`SELECT count(*)::int AS n FROM version_callers WHERE caller = ${`user:${user.id}`} AND surface = 'rest'`
  t.equal(n, 1, 'an OAuth user is recorded by user')
})

t.test('versions sunset removes a version at once; releasing a major (a build that serves v2 and v3)', async (t) => {
  const auth = basic(keyA.keyId, keyA.secret)
  const off = await orgscan('versions', 'sunset', 'v1', '--surface', 'mcp', '--json')
  t.equal(off.code, 0, off.stderr)
  t.match(JSON.parse(off.stdout), [{ surface: 'mcp', name: 'v1', status: 'removed', sunsetDate: today }])
  const gone = async () => (await rpc(ts.svc.mcpUrl, initializeBody(), { authorization: auth })).status === 410
  if (PG) t.ok(await until(gone), 'MCP v1: 410')
  else t.ok(await gone(), 'MCP v1: 410 at once')
  t.equal((await ts.get('/v1/orgs', auth)).status, 200, 'REST keeps its own table')
  t.match((await orgscan('versions', 'notify', 'v1', '--surface', 'mcp')).stderr, /MCP v1 was removed on/)

  const served = { rest: ['v1', 'v2', 'v3'], mcp: ['v1'] }
  const change = (c: VersionChange) => changeVersions(sql, 'rest', c, now, served)
  await t.rejects(change({ kind: 'add', name: 'v2', sunsetDate: addMonths(today, 5) }), /--sunset gives the sunset date of the version a release deprecates/, 'v1 is deprecated already')
  await change({ kind: 'add', name: 'v2' })
  await t.rejects(change({ kind: 'add', name: 'v3', sunsetDate: addMonths(today, 6) }), /would leave 3 supported majors \(v1, v2, v3\)/)
  await change({ kind: 'sunset', name: 'v1' })
  await change({ kind: 'add', name: 'v3', sunsetDate: addMonths(today, 6) })
  await ts.svc.versions.reload()
  t.same((await ts.get('/')).body, { versions: [{ name: 'v2', status: 'deprecated', sunsetDate: addMonths(today, 6) }, { name: 'v3', status: 'current' }] })
  t.equal((await ts.get('/v1/orgs', auth)).status, 410, 'REST v1 removed')
})

t.test('ORGSCAN_VERSIONS is only a first-start default', async (t) => {
  const lines: string[] = []
  const log = createLogger((l) => lines.push(l))
  await adoptFirstStartVersions(sql, { rest: [{ name: 'v1', status: 'current' }] }, new Date(now), log)
  t.match(lines.join('\n'), /ORGSCAN_VERSIONS ignored: the version table lives in the database/)
  const [{ status }] = await sql`SELECT status FROM api_versions WHERE surface = 'rest' AND name = 'v1'`
  t.equal(status, 'removed', 'the table set with orgscan versions stays')
})
