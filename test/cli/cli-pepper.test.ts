/**
 * The pepper never lives in the database (runtime/platform/secrets.ts, docs/adr/0120-pepper-outside-database.md): PostgreSQL
 * refuses to start without ORGSCAN_PEPPER or ORGSCAN_PEPPER_FILE, the embedded database keeps its own in a 0600 file
 * of its 0700 data folder, and a pepper an older version stored in `server_settings` is moved out — by the start on the
 * embedded database, with `orgscan pepper export` on PostgreSQL — while the API keys and OAuth tokens made with it
 * keep working.
 */
import type { Test } from 'tap'
import { t } from '../helpers/file-test.ts'
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { spawn, spawnSync } from 'node:child_process'
import { cliHarness } from '../helpers/cli.ts'
import { TEST_NODE_FLAGS } from '../helpers/node-flags.ts'
import { spawnServer } from '../helpers/server-process.ts'
import { createFreshPostgresDatabase } from '../helpers/test-db.ts'
import { basic, startTestService } from '../helpers/service.ts'
import { authorizeUrl, Browser, pkce, signIn } from '../helpers/oauth.ts'
import { prompts, registry } from '../../resources/index.ts'
import { loadConfig } from '../../runtime/platform/config.ts'
import { startService } from '../../runtime/service/service.ts'
import { createLogger } from '../../runtime/core/log.ts'
import { openDatabase } from '../../runtime/platform/db/connect.ts'
import { createKey } from '../../runtime/platform/admin.ts'
import { hashPassword } from '../../runtime/platform/oauth/crypto.ts'

const PG = process.env.TEST_DATABASE_URL
const { tdb, env, run, spawnCli, migratedFolder } = await cliHarness(t)
/** Long enough for a refused start on a busy machine; a start that serves instead is killed then (code -1). */
const REFUSED_WITHIN = { timeoutMs: 90_000 }

type Location = { databaseUrl?: string; dataDir?: string }

/** The rows of `server_settings` (none when the table does not exist), read with the database's server stopped. */
async function settings(at: Location): Promise<Array<{ name: string; value: string }>> {
  const db = await openDatabase({ ...at, poolSize: 1 })
  try {
    const [{ present }] = await db.sql`SELECT to_regclass('server_settings') IS NOT NULL AS present`
    return present ? [...(await db.sql<Array<{ name: string; value: string }>>`SELECT name, value FROM server_settings ORDER BY name`)] : []
  } finally {
    await db.close()
  }
}

/** Whether `server_settings` holds `pepper`, or a row where older versions kept one. */
const holdsPepper = (rows: Array<{ name: string; value: string }>, pepper: string) => rows.some((r) => r.name === 'api_key_pepper' || r.value.includes(pepper))

function scratch(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'orgscan-pepper-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** The environment of a command or served process on `at`, without any pepper unless `extra` gives one. */
const on = (at: Location, extra: Record<string, string | undefined> = {}) => ({
  DATABASE_URL: at.databaseUrl,
  ORGSCAN_DATA_DIR: at.dataDir,
  ORGSCAN_PEPPER: undefined,
  ORGSCAN_PEPPER_FILE: undefined,
  ORGSCAN_SEED_DEMO: 'false',
  ...extra,
})

t.test('an in-memory embedded database started without a pepper keeps it in memory, not in the database', { skip: PG ? 'embedded database only' : false }, async (t) => {
  const svc = await startService(loadConfig({}, { port: 0, dataDir: 'memory://', seedDemo: false }), { registry, prompts, log: createLogger(() => undefined) })
  t.teardown(() => svc.close())
  t.ok(svc.pepper.length >= 32, 'a pepper was generated')
  const rows = await svc.db.sql<Array<{ name: string; value: string }>>`SELECT name, value FROM server_settings`
  t.notOk(holdsPepper([...rows], svc.pepper), 'server_settings holds no pepper')
})

t.test('the embedded pepper file is 0600 in a 0700 data folder whatever the umask, and the database holds none', { skip: PG ? 'embedded database only' : false }, async (t) => {
  const dir = migratedFolder()
  chmodSync(dir, 0o777)
  t.notOk(existsSync(join(dir, 'pepper')), 'no pepper yet')
  const server = await spawnServer({ ...env, ...on({ dataDir: dir }) }, { umask: 0o000 })
  t.equal((await fetch(`${server.url}/healthz`)).status, 200, 'serving without any configuration')
  t.equal(await server.stop(), 0)
  t.equal(statSync(dir).mode & 0o777, 0o700, 'the data folder is 0700')
  t.equal(statSync(join(dir, 'pepper')).mode & 0o777, 0o600, 'the pepper file is 0600')
  const pepper = readFileSync(join(dir, 'pepper'), 'utf8').trim()
  t.ok(pepper.length >= 32)
  t.notOk(holdsPepper(await settings({ dataDir: dir }), pepper), 'server_settings holds no pepper')
  t.same(readFileSync(join(dir, 'pepper'), 'utf8').trim(), pepper)
})

t.test('PostgreSQL: serve, keys create and clients create refuse to run without a pepper; the other commands run', { skip: PG ? false : 'needs TEST_DATABASE_URL (PostgreSQL)' }, async (t) => {
  const fresh = await createFreshPostgresDatabase(PG!)
  t.teardown(() => fresh.drop())
  const at = on({ databaseUrl: fresh.databaseUrl })
  const message = /^orgscan: ORGSCAN_PEPPER or ORGSCAN_PEPPER_FILE must be set with a PostgreSQL database \(DATABASE_URL\).*openssl rand -base64 48/
  const serve = await spawnCli(['serve', '--port', '0'], at, REFUSED_WITHIN)
  t.equal(serve.code, 1, 'serve exits with 1')
  t.match(serve.stderr, message, 'naming ORGSCAN_PEPPER and ORGSCAN_PEPPER_FILE, and how to make one')
  t.same(await settings({ databaseUrl: fresh.databaseUrl }), [], 'refused before migrating: the database is as it was (no pepper stored)')
  const workers = await spawnCli(['serve', '--port', '0', '--workers', '2'], at, REFUSED_WITHIN)
  t.equal(workers.code, 1, 'serve --workers 2 too')
  t.match(workers.stderr, message)

  const account = await run(['accounts', 'create', '--name', 'No pepper', '--json'], at)
  t.equal(account.code, 0, `accounts create needs no pepper: ${account.stderr}`)
  const id = JSON.parse(account.stdout).id as string
  t.equal((await run(['keys', 'list', '--account', id], at)).code, 0, 'keys list neither')
  const key = await run(['keys', 'create', '--account', id], at)
  t.equal(key.code, 1, 'keys create refuses')
  t.match(key.stderr, message)
  const client = await run(['clients', 'create', '--account', id, '--name', 'C', '--redirect-uri', 'https://a.example/cb', '--scope', 'mcp:read'], at)
  t.equal(client.code, 1, 'clients create refuses')
  t.match(client.stderr, message)
  t.notOk((await settings({ databaseUrl: fresh.databaseUrl })).some((r) => r.name === 'api_key_pepper'), 'no pepper stored')
})

t.test('ORGSCAN_PEPPER_FILE gives the pepper (its newline trimmed) to the commands and the served process', async (t) => {
  const dir = scratch(t)
  const pepper = 'from-a-file-pepper-0123456789abcdefghijklmn'
  const file = join(dir, 'pepper')
  writeFileSync(file, pepper + '\n', { mode: 0o600 })
  const at: Location = PG ? { databaseUrl: tdb.databaseUrl } : { dataDir: migratedFolder() }
  const withFile = on(at, { ORGSCAN_PEPPER_FILE: file })
  const account = await run(['accounts', 'create', '--name', 'File', '--json'], withFile)
  t.equal(account.code, 0, account.stderr)
  const accountId = JSON.parse(account.stdout).id as string
  const viaCli = await run(['keys', 'create', '--account', accountId, '--json'], withFile)
  t.equal(viaCli.code, 0, viaCli.stderr)
  const cliKey = JSON.parse(viaCli.stdout) as { keyId: string; secret: string }
  // A key hashed with the file's text itself, without its newline: the served process must use exactly that.
  const db = await openDatabase({ ...at, poolSize: 1 })
  const direct = await createKey(db.sql, pepper, accountId).finally(() => db.close())
  const server = await spawnServer({ ...env, ...withFile })
  t.teardown(() => server.stop(0))
  for (const [what, k] of [['made by keys create', cliKey], ['hashed with the file\'s pepper', direct]] as const) {
    t.equal((await fetch(`${server.url}/v1/orgs`, { headers: { authorization: basic(k.keyId, k.secret) } })).status, 200, `a key ${what} authenticates`)
  }
  t.equal((await fetch(`${server.url}/v1/orgs`, { headers: { authorization: basic(direct.keyId, direct.secret + 'x') } })).status, 401, 'control: a wrong secret does not')
  await server.stop()
  t.notOk(holdsPepper(await settings(at), pepper), 'server_settings holds no pepper')
  if (at.dataDir) t.notOk(existsSync(join(at.dataDir, 'pepper')), 'nor is one generated into the data folder')
})

t.test('a pepper an older version stored in the database is moved out; API keys and OAuth tokens made with it still work', async (t) => {
  const stored = 'older-version-stored-pepper-0123456789abcdef'
  // The OAuth issuer and token audiences stay the same whatever port a later process listens on.
  const publicUrl = 'http://127.0.0.1:9'
  const redirect = 'http://127.0.0.1:40123/cb'
  const password = 'correct horse battery staple'

  // The database as an older orgscan left it: keys, a client and signing keys made with the pepper it stored.
  const ts = await startTestService(t, { config: { pepper: stored, oauth: { ...loadConfig({}).oauth, publicUrl } } })
  const sql = ts.svc.db.sql
  const user = ts.seed.users[0]
  await sql`UPDATE users SET password_hash = ${await hashPassword(password)} WHERE id = ${user.id}::bigint`
  const key = await createKey(sql, stored, user.accountId)
  const reg = await fetch(`${ts.url}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: 'Older', redirect_uris: [redirect] }) })
  const clientId = ((await reg.json()) as { client_id: string }).client_id
  const p = pkce()
  const back = await signIn(new Browser(), authorizeUrl(ts.url, { clientId, redirectUri: redirect, challenge: p.challenge, method: 'S256', state: 's', resource: `${publicUrl}/v1` }), { email: user.email, password }, redirect)
  const tok = await fetch(`${ts.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code: back.searchParams.get('code')!, redirect_uri: redirect, code_verifier: p.verifier, client_id: clientId }),
  })
  const bearer = `Bearer ${((await tok.json()) as { access_token: string }).access_token}`
  t.equal((await ts.get('/v1/orgs', bearer)).status, 200, 'control: the token works where it was issued')
  await sql`INSERT INTO server_settings (name, value) VALUES ('api_key_pepper', ${stored})`
  await ts.svc.close()
  const at = ts.location

  /** Both credentials made with the stored pepper authenticate at `url` (a tampered token does not). */
  async function stillWork(url: string) {
    t.equal((await fetch(`${url}/v1/orgs`, { headers: { authorization: basic(key.keyId, key.secret) } })).status, 200, 'the API key authenticates')
    t.equal((await fetch(`${url}/v1/orgs`, { headers: { authorization: bearer } })).status, 200, 'the OAuth access token verifies (its signing key decrypts)')
    t.equal((await fetch(`${url}/v1/orgs`, { headers: { authorization: bearer.slice(0, -2) + (bearer.endsWith('A') ? 'B' : 'A') + bearer.slice(-1) } })).status, 401, 'control: a tampered token does not')
  }

  if (!PG) {
    const server = await spawnServer({ ...env, ...on(at, { ORGSCAN_PUBLIC_URL: publicUrl }) })
    t.teardown(() => server.stop(0))
    await stillWork(server.url)
    t.equal(server.stderr().split('\n').filter((l) => l.includes('pepper: moved from the database')).length, 1, 'the move is logged once')
    await server.stop()
    t.equal(readFileSync(join(at.dataDir!, 'pepper'), 'utf8'), stored + '\n', 'the embedded database moved it to its data folder')
    t.equal(statSync(join(at.dataDir!, 'pepper')).mode & 0o777, 0o600)
    t.notOk(holdsPepper(await settings(at), stored), 'server_settings holds no pepper')
    return
  }

  const refused = await spawnCli(['serve', '--port', '0'], on(at), REFUSED_WITHIN)
  t.equal(refused.code, 1, 'PostgreSQL: the start is refused')
  t.match(refused.stderr, /^orgscan: This database holds its pepper in the server_settings table.*`orgscan pepper export --out \/etc\/orgscan\/pepper --delete`.*ORGSCAN_PEPPER_FILE/, 'saying how to move it out')
  const other = await spawnCli(['serve', '--port', '0'], on(at, { ORGSCAN_PEPPER: 'another-pepper-0123456789abcdefghijklmnop' }), REFUSED_WITHIN)
  t.equal(other.code, 1, 'a configured pepper that differs is refused too')
  t.match(other.stderr, /differs from the one stored in this database's server_settings table/)

  const printed = await spawnCli(['pepper', 'export'], on(at))
  t.equal(printed.code, 0, printed.stderr)
  t.equal(printed.stdout, stored + '\n', 'export prints the pepper alone on stdout')
  t.match(printed.stderr, /still stored in the database/, 'and, not told to delete it, keeps it')
  t.ok(holdsPepper(await settings(at), stored))

  const dir = scratch(t)
  const file = join(dir, 'pepper')
  const moved = await spawnCli(['pepper', 'export', '--out', file, '--delete'], on(at))
  t.equal(moved.code, 0, moved.stderr)
  t.equal(moved.stdout, `wrote the pepper to ${file} (mode 0600)\ndeleted it from the database; set ORGSCAN_PEPPER_FILE=${file} (or ORGSCAN_PEPPER) for every orgscan process\n`)
  t.equal(readFileSync(file, 'utf8'), stored + '\n')
  t.equal(statSync(file).mode & 0o777, 0o600, 'written 0600')
  t.notOk(holdsPepper(await settings(at), stored), '--delete deleted it')
  const again = await spawnCli(['pepper', 'export', '--out', join(dir, 'again')], on(at))
  t.equal(again.code, 1)
  t.match(again.stderr, /^orgscan: This database holds no pepper/)
  const over = await spawnCli(['pepper', 'export', '--out', file], on(at))
  t.equal(over.code, 1, 'nothing to export, and an existing file is never overwritten either way')

  // A copy restored from an older backup holds it again: the start with the same pepper configured deletes it, once.
  const restore = await openDatabase({ ...at, poolSize: 1 })
  await restore.sql`INSERT INTO server_settings (name, value) VALUES ('api_key_pepper', ${stored})`.finally(() => restore.close())
  const server = await spawnServer({ ...env, ...on(at, { ORGSCAN_PEPPER_FILE: file, ORGSCAN_PUBLIC_URL: publicUrl }) })
  t.teardown(() => server.stop(0))
  await stillWork(server.url)
  t.equal(server.stderr().split('\n').filter((l) => l.includes('pepper: deleted the copy stored in the database')).length, 1, 'the deletion is logged once')
  await server.stop()
  t.notOk(holdsPepper(await settings(at), stored), 'server_settings holds no pepper')
})

/** util-linux `script`: runs a command on a pseudo-terminal, as an operator's shell would. */
const hasScript = spawnSync('script', ['--version']).status === 0

t.test('on a terminal, pepper export asks before it deletes: only a yes deletes', { skip: hasScript ? false : 'needs util-linux script (a pseudo-terminal)' }, async (t) => {
  const stored = 'asked-before-deleting-pepper-0123456789abcd'
  const at: Location = PG ? { databaseUrl: tdb.databaseUrl } : { dataDir: migratedFolder() }
  const dir = scratch(t)
  const bin = new URL('../../bin/orgscan.js', import.meta.url).pathname
  /** `pepper export --out FILE` on a terminal, answering `answer` to its question; its output as the terminal shows it. */
  const exportAnswering = (file: string, answer: string) =>
    new Promise<{ code: number | null; screen: string }>((resolve) => {
      const clean = Object.fromEntries(Object.entries({ ...env, ...on(at) }).filter(([, v]) => v !== undefined)) as NodeJS.ProcessEnv
      const quoted = [process.execPath, ...TEST_NODE_FLAGS, bin, 'pepper', 'export', '--out', file].map((a) => `'${a}'`).join(' ')
      const p = spawn('script', ['-qec', quoted, '/dev/null'], { env: clean })
      let screen = ''
      let answered = false
      const kill = setTimeout(() => p.kill('SIGKILL'), 60_000)
      p.stdout.on('data', (d) => {
        screen += d
        if (!answered && screen.includes('[y/N]')) {
          answered = true
          p.stdin.write(answer + '\n')
        }
      })
      p.on('exit', (code) => {
        clearTimeout(kill)
        resolve({ code, screen })
      })
    })
  const insert = async () => {
    const db = await openDatabase({ ...at, poolSize: 1 })
    await db.sql`INSERT INTO server_settings (name, value) VALUES ('api_key_pepper', ${stored})`.finally(() => db.close())
  }
  await insert()
  const no = await exportAnswering(join(dir, 'first'), 'n')
  t.equal(no.code, 0, no.screen)
  t.match(no.screen, /wrote the pepper to .*first \(mode 0600\)[\s\S]*Delete the pepper from the database now[\s\S]*still stored in the database/)
  t.ok(holdsPepper(await settings(at), stored), '"n" keeps it')
  const yes = await exportAnswering(join(dir, 'second'), 'y')
  t.equal(yes.code, 0, yes.screen)
  t.match(yes.screen, /deleted it from the database/)
  t.notOk(holdsPepper(await settings(at), stored), '"y" deletes it')
  t.equal(readFileSync(join(dir, 'second'), 'utf8'), stored + '\n')
})
