/**
 * `orgscan serve` and the commands that reach a running server: the admin socket (accounts, keys and import carried
 * out by the server that holds the embedded database), the demo seed with its printed key, MCP block and demo user,
 * and a port already in use.
 */
import { t } from '../helpers/file-test.ts'
import { createWriteStream, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { spawn } from 'node:child_process'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { cliHarness } from '../helpers/cli.ts'
import { spawnServer } from '../helpers/server-process.ts'
import { mcpClient } from '../helpers/mcp.ts'
import { TEST_NODE_FLAGS } from '../helpers/node-flags.ts'
import { DEMO_ACCOUNTS, DEMO_ORG_DEFS, demoBundle } from '../../demo/seed.ts'
import { openDatabase } from '../../runtime/platform/db/connect.ts'
import { createAccount } from '../../runtime/platform/admin.ts'
import { ndjsonLines } from '../../runtime/platform/bundle/wire.ts'

const { tdb, env, migratedFolder, run } = await cliHarness(t)

t.test('a port in use says which and how to change it', { skip: tdb.databaseUrl ? 'embedded database only' : false }, async (t) => {
  const { createServer } = await import('node:net')
  const blocker = createServer()
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r))
  t.teardown(() => blocker.close())
  const port = (blocker.address() as { port: number }).port
  const r = await run(['serve', '--port', String(port)], { ORGSCAN_DATA_DIR: migratedFolder(), ORGSCAN_SEED_DEMO: 'false' })
  t.equal(r.code, 1)
  t.equal(r.stderr, `orgscan: Port ${port} on 127.0.0.1 is already in use (another orgscan or another program). Stop it, or choose another port: PORT=${port + 1} npm start, or orgscan serve --port ${port + 1}.\n`)
})

t.test('two listeners on one port are refused before the start, naming both', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'orgscan-ports-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const admin = await run(['serve', '--port', '4517'], { ORGSCAN_DATA_DIR: dir, ORGSCAN_ADMIN_PORT: '4517' })
  t.equal(admin.code, 1)
  t.equal(admin.stderr, 'orgscan: ORGSCAN_ADMIN_PORT and the public port (PORT or --port) are both 4517: each listener needs a port of its own (leave MCP_PORT unset to serve MCP on the public port).\n')
  const mcp = await run(['serve'], { ORGSCAN_DATA_DIR: dir, PORT: '4518', MCP_PORT: '4518' })
  t.equal(mcp.code, 1)
  t.match(mcp.stderr, /^orgscan: MCP_PORT and the public port \(PORT or --port\) are both 4518/)
  t.same(readdirSync(dir), [], 'nothing was started: the data folder is untouched')
})

t.test('while a server holds the embedded database, accounts, keys and import go through it', { skip: tdb.databaseUrl ? 'the embedded database only: PostgreSQL serves both at once' : false }, async (t) => {
  const dir = migratedFolder()
  // The org state is trusted for a minute here: only the import's own report can make the new scan visible at once.
  const server = await spawnServer({ ...env, ORGSCAN_DATA_DIR: dir, ORGSCAN_SEED_DEMO: 'false', ORGSCAN_AUTH_CACHE_MS: '500', ORGSCAN_ORG_CACHE_MS: '60000' })
  t.teardown(() => server.stop(0))
  const at = { ORGSCAN_DATA_DIR: dir }
  const acct = await run(['accounts', 'create', '--name', 'Via socket', '--daily-limit', '5', '--json'], at)
  t.equal(acct.code, 0, acct.stderr)
  const accountId = JSON.parse(acct.stdout).id as string
  const k = await run(['keys', 'create', '--account', accountId, '--json'], at)
  t.equal(k.code, 0, k.stderr)
  const key = JSON.parse(k.stdout) as { keyId: string; secret: string }
  const auth = { authorization: 'Basic ' + Buffer.from(`${key.keyId}:${key.secret}`).toString('base64') }
  const ok = await fetch(`${server.url}/v1/orgs`, { headers: auth })
  t.equal(ok.status, 200, 'the new key works against the running server at once')
  t.equal(ok.headers.get('x-ratelimit-limit'), '5')
  const up = await run(['accounts', 'update', accountId, '--daily-limit', '7', '--json'], at)
  t.equal(JSON.parse(up.stdout).dailyLimit, 7)
  t.equal((await fetch(`${server.url}/v1/orgs`, { headers: auth })).headers.get('x-ratelimit-limit'), '7', 'a limit change applies at the next request')
  const example = new URL('../../examples/scan-bundle.json', import.meta.url).pathname
  t.equal((await run(['import', '--account', accountId, example, '--json'], at)).code, 0, 'import through the server')
  const bundle = JSON.parse(readFileSync(example, 'utf8'))
  const fieldsPath = `${server.url}/v1/orgs/${bundle.org.salesforceId}/fields`
  const before = ((await (await fetch(fieldsPath, { headers: auth })).json()) as { data: unknown[] }).data.length
  bundle.scan = { ...bundle.scan, startedAt: '2026-10-27T03:48:00Z', completedAt: '2026-10-27T03:52:00Z' }
  bundle.data.fields.pop()
  const tmp = mkdtempSync(join(tmpdir(), 'orgscan-next-scan-'))
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }))
  const next = join(tmp, 'next-scan.json')
  writeFileSync(next, JSON.stringify(bundle))
  t.equal((await run(['import', '--account', accountId, next, '--json'], at)).code, 0)
  const after = ((await (await fetch(fieldsPath, { headers: auth })).json()) as { data: unknown[] }).data.length
  t.equal(after, before - 1, 'a scan imported through the server is served by it at once')
  const listed = await run(['keys', 'list', '--account', accountId, '--json'], at)
  t.equal(JSON.parse(listed.stdout).length, 1)
  t.notOk(listed.stdout.includes(key.secret), 'list never shows the secret')
  t.equal((await run(['keys', 'revoke', key.keyId], at)).code, 0)
  t.equal((await fetch(`${server.url}/v1/orgs`, { headers: auth })).status, 401, 'a revoked key stops at once in that server')
  const bad = await run(['accounts', 'update', '999999', '--daily-limit', '1'], at)
  t.equal(bad.code, 1)
  t.equal(bad.stderr, 'orgscan: No account with id 999999.\n', 'errors from the server read like local ones')
  const seed = await run(['seed', '--scale', '0.01'], at)
  t.equal(seed.code, 1)
  t.match(seed.stderr, /^orgscan: The embedded database in .* is in use by another orgscan process \(pid \d+, lock file .*\/orgscan\.lock\)/, 'seed needs the server stopped')
})

t.test('serve seeds an empty embedded database and prints the same working demo key on every start', { skip: tdb.databaseUrl ? 'embedded database only' : false }, async (t) => {
  const dir = migratedFolder()
  const envNoPepper: Record<string, string | undefined> = { ...env, ORGSCAN_DATA_DIR: dir, ORGSCAN_SEED_SCALE: '0.01', ORGSCAN_PEPPER: undefined }
  const start = () => spawnServer(envNoPepper)
  const first = await start()
  t.ok(first.info.demoKey, 'a demo key is printed')
  const auth = 'Basic ' + Buffer.from(`${first.info.demoKey!.keyId}:${first.info.demoKey!.secret}`).toString('base64')
  const r = await fetch(first.info.url + '/v1/orgs', { headers: { authorization: auth } })
  t.equal(r.status, 200)
  t.ok(((await r.json()) as { data: unknown[] }).data.length >= 5, 'demo orgs are served')
  t.equal(first.info.mcpUrl, first.info.url + '/v1/mcp')
  const { client } = await mcpClient(t, first.info.mcpUrl, auth)
  const orgs = await client.callTool({ name: 'list_orgs', arguments: {} })
  t.notOk(orgs.isError, 'the printed MCP URL and key serve an assistant')
  t.ok(((orgs.structuredContent as { data: unknown[] }).data).length >= 5)
  await client.close()
  t.match(first.info.demoSignIn, { email: 'dana.analyst@acme.example', password: /^[A-Za-z0-9_-]{20}$/ }, 'a demo user who can sign in is printed')
  const { Browser, authorizeUrl, pkce, signIn } = await import('../helpers/oauth.ts')
  const reg = await fetch(`${first.info.url}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ redirect_uris: ['http://127.0.0.1:8/cb'] }) })
  const clientId = ((await reg.json()) as { client_id: string }).client_id
  const back = await signIn(new Browser(), authorizeUrl(first.info.url, { clientId, redirectUri: 'http://127.0.0.1:8/cb', challenge: pkce().challenge, method: 'S256' }), first.info.demoSignIn!, 'http://127.0.0.1:8/cb')
  t.ok(back.searchParams.get('code'), 'the printed demo password signs in')
  await first.stop()
  const second = await start()
  t.same(second.info.demoKey, first.info.demoKey, 'the same demo key after a restart (not re-seeded)')
  const r2 = await fetch(second.info.url + '/v1/orgs', { headers: { authorization: auth } })
  t.equal(r2.status, 200)
  await second.stop()
})

t.test('a server killed in the middle of an import: the import says it was not saved, and the next import saves it once', { skip: tdb.databaseUrl ? 'the embedded database only: PostgreSQL imports do not go through a server' : false }, async (t) => {
  const dir = migratedFolder()
  const at = { ORGSCAN_DATA_DIR: dir }
  const server = await spawnServer({ ...env, ...at, ORGSCAN_SEED_DEMO: 'false' })
  t.teardown(() => server.stop(0))
  const acct = await run(['accounts', 'create', '--name', 'Killed mid-import', '--json'], at)
  const accountId = JSON.parse(acct.stdout).id as string
  // A bundle that takes the server a while: the large demo org at half size.
  const tmp = mkdtempSync(join(tmpdir(), 'orgscan-killed-import-'))
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }))
  const file = join(tmp, 'large.ndjson')
  const large = DEMO_ORG_DEFS.find((d) => d.large)!
  const out = createWriteStream(file)
  for (const line of ndjsonLines(demoBundle(large, 0, { scale: 0.5 }))) out.write(line + '\n')
  await new Promise((r) => out.end(r))

  // The real command, through the server's admin socket; the server is killed once the first records are written.
  const clean = Object.fromEntries(Object.entries({ ...env, ...at }).filter(([, v]) => v !== undefined)) as NodeJS.ProcessEnv
  const bin = new URL('../../bin/orgscan.js', import.meta.url).pathname
  const cmd = spawn(process.execPath, [...TEST_NODE_FLAGS, bin, 'import', '--account', accountId, file], { env: clean })
  let stderr = ''
  cmd.stderr.on('data', (d) => (stderr += d))
  const exited = new Promise<number | null>((r) => cmd.once('exit', r))
  for (let i = 0; i < 3000 && !/^ {2}\w+: [\d,]+ records$/m.test(stderr); i++) await new Promise((r) => setTimeout(r, 10))
  t.match(stderr, /records/, 'the import was under way')
  t.notMatch(stderr, /^done:/m, 'and not finished')
  process.kill(server.pid, 'SIGKILL')
  t.equal(await exited, 1)
  const last = stderr.trim().split('\n').at(-1)
  t.equal(last, `orgscan: The orgscan server (pid ${server.pid}) that holds ${dir} stopped during the import: the import was not saved (an import is one transaction, undone unless it completes). Run the import again.`)
  t.notMatch(stderr, /in use by another orgscan process/, 'the dead server is not blamed as a running one')

  const before = await run(['accounts', 'list', '--json'], at)
  t.same((JSON.parse(before.stdout) as Array<{ id: string; orgs: string[] }>).find((a) => a.id === accountId)?.orgs, [], 'nothing of the killed import is there')
  t.match(before.stderr, `orgscan: the orgscan process that last used ${dir} (pid ${server.pid}) stopped without closing it: what it had not committed was rolled back (an import it was running was not saved: run it again`, 'the next command says what the kill lost')
  const again = await run(['import', '--account', accountId, file, '--json'], at)
  t.equal(again.code, 0, again.code === 0 ? 'the import runs again' : again.stderr)
  t.notOk(JSON.parse(again.stdout).alreadyImported, 'imported now')
  const once = await run(['import', '--account', accountId, file, '--json'], at)
  t.equal(JSON.parse(once.stdout).alreadyImported, true, 'and only once')
})

t.test('a folder left half-seeded by an earlier version is served with a warning that says how to start over', { skip: tdb.databaseUrl ? 'embedded database only' : false }, async (t) => {
  const dir = migratedFolder()
  // What a first start of an earlier orgscan left when stopped in its seed: the demo accounts, no key.
  const db = await openDatabase({ dataDir: dir })
  for (const a of Object.values(DEMO_ACCOUNTS)) await createAccount(db.sql, a)
  await db.close()
  const server = await spawnServer({ ...env, ORGSCAN_DATA_DIR: dir, ORGSCAN_SEED_SCALE: '0.01', ORGSCAN_PEPPER: undefined })
  t.teardown(() => server.stop(0))
  t.equal(server.info.demoKey, null)
  // Written on stderr before the banner on stdout: two pipes, read in either order.
  for (let i = 0; i < 200 && !server.stderr().includes('This data folder'); i++) await new Promise((r) => setTimeout(r, 10))
  t.match(server.stderr(), `This data folder (${dir}) holds part of the demo data of a first start that was interrupted, and no demo key. To start over with the complete demo, stop orgscan, delete the folder (rm -rf ${dir}) and start again.`)
})
