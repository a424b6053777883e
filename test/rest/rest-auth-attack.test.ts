/**
 * Authentication under attack: unknown key ids stop reaching the database (a bounded negative cache, one lookup for
 * concurrent requests of the same id), an unknown id and a wrong secret are indistinguishable, and an address sending
 * too many failed authentications gets a bare 429 — without affecting other addresses or keys already verified.
 */
import { t } from '../helpers/file-test.ts'
import { Agent, request } from 'node:http'
import { connect } from 'node:net'
import { createAccount, createKey, createUser, revokeKey } from '../../runtime/platform/admin.ts'
import { issueClient } from '../../runtime/platform/oauth/clients.ts'
import { startTestService, basic } from '../helpers/service.ts'
import { ApiKeyAuthenticator, newKeyId } from '../../runtime/platform/auth/api-keys.ts'

let now = Date.parse('2026-11-23T12:00:00Z')
const clock = () => now
const ts = await startTestService(t, { seed: false, clock, config: { authCacheMs: 5000, authFailures: { ratePerSecond: 1, burst: 5 } } })
const account = await createAccount(ts.svc.db.sql, { name: 'Acme', dailyLimit: 100_000, monthlyLimit: 1_000_000 })
const good = await createKey(ts.svc.db.sql, ts.svc.pepper, account.id)
const goodAuth = basic(good.keyId, good.secret)
const user = await createUser(ts.svc.db.sql, account.id, { email: 'dana@acme.example', name: 'Dana' })
const client = await issueClient(ts.svc.db.sql, ts.svc.pepper, { account: account.id, name: 'Assistant', redirectUris: ['http://localhost/cb'], scopes: ['mcp:read'] })
const bearerToken = (family: string) => ts.svc.oauth.tokens.issue({ userId: user.id, clientId: client.clientId, scopes: ['mcp:read'], resource: `${ts.url}/v1`, family })

/** GET from a chosen loopback source address (127.0.0.x all reach the server on Linux). */
function from(source: string, path: string, authorization?: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const { port } = new URL(ts.url)
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, localAddress: source, headers: authorization ? { authorization } : {} }, (res) => {
      let body = ''
      res.on('data', (d) => (body += d))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
    })
    req.on('error', reject)
    req.end()
  })
}


t.test('an unknown key id is looked up once, then cached like a known one; a key created later works within the cache time', async (t) => {
  const lookups = () => ts.svc.auth.lookups
  const before = lookups()
  const unknown = basic('osk_zzzzzzzzzzzzzzzzzzzz', 'x'.repeat(43))
  for (let i = 0; i < 3; i++) t.equal((await from('127.0.0.11', '/v1/orgs', unknown)).status, 401)
  t.equal(lookups() - before, 1, 'one database lookup for three requests')
  const burst = await Promise.all(Array.from({ length: 3 }, () => from('127.0.0.12', '/v1/orgs', basic('osk_yyyyyyyyyyyyyyyyyyyy', 'x'.repeat(43)))))
  t.same(burst.map((r) => r.status), [401, 401, 401])
  t.equal(lookups() - before, 2, 'concurrent requests of one new id: one lookup')
  const fresh = basic('osk_xxxxxxxxxxxxxxxxxxxx', 'S'.repeat(43))
  t.equal((await from('127.0.0.13', '/v1/orgs', fresh)).status, 401, 'an id nobody created yet')
  await createKey(ts.svc.db.sql, ts.svc.pepper, account.id, { keyId: 'osk_xxxxxxxxxxxxxxxxxxxx', secret: 'S'.repeat(43) })
  t.equal((await from('127.0.0.13', '/v1/orgs', fresh)).status, 401, 'created by another process: still cached as unknown')
  t.equal((await from('127.0.0.13', '/v1/orgs', fresh)).status, 401, 'still within the cache time')
  now += 5000
  t.equal((await from('127.0.0.13', '/v1/orgs', fresh)).status, 200, 'works once the cache time has passed')
})

t.test('an unknown id and a wrong secret answer the same bytes', async (t) => {
  const unknown = await from('127.0.0.21', '/v1/orgs', basic('osk_wwwwwwwwwwwwwwwwwwww', 'x'.repeat(43)))
  const wrong = await from('127.0.0.22', '/v1/orgs', basic(good.keyId, 'x'.repeat(43)))
  t.equal(unknown.status, 401)
  t.equal(unknown.body, wrong.body, 'same body')
  const h = (x: typeof unknown) => Object.fromEntries(Object.entries(x.headers).filter(([k]) => k !== 'date' && k !== 'x-request-id'))
  t.same(h(unknown), h(wrong), 'same headers but Date and the request id (unique to each request)')
})

t.test('an unknown id and a wrong secret cost the same work, first and repeated, whether or not the key is cached', async (t) => {
  const auth = ts.svc.auth
  const work = () => ({ lookups: auth.lookups, hashes: auth.hashes, comparisons: auth.comparisons })
  /** One request from `source` with `authorization`, refused: the work it cost, and its body. */
  const cost = async (source: string, authorization: string) => {
    const before = work()
    const r = await from(source, '/v1/orgs', authorization)
    const after = work()
    t.equal(r.status, 401)
    return { lookups: after.lookups - before.lookups, hashes: after.hashes - before.hashes, comparisons: after.comparisons - before.comparisons, body: r.body }
  }
  const flipped = (secret: string) => secret.slice(0, -1) + (secret.endsWith('A') ? 'B' : 'A')
  const idle = await createKey(ts.svc.db.sql, ts.svc.pepper, account.id)
  const used = await createKey(ts.svc.db.sql, ts.svc.pepper, account.id)
  t.equal((await from('127.0.0.71', '/v1/orgs', basic(used.keyId, used.secret))).status, 200, 'one key in use by its owner: cached')
  const attempts = {
    'an unknown id': basic(newKeyId(), idle.secret),
    'a wrong secret, key not cached': basic(idle.keyId, flipped(idle.secret)),
    'a wrong secret, key cached by its owner': basic(used.keyId, flipped(used.secret)),
  }
  // One after the other (the counts are the process's), each from an address of its own, within the failure allowance.
  const sources = ['127.0.0.72', '127.0.0.73', '127.0.0.74']
  const first = []
  const again = []
  for (const [i, a] of Object.values(attempts).entries()) first.push(await cost(sources[i], a))
  for (const [i, a] of Object.values(attempts).entries()) again.push(await cost(sources[i], a))
  for (const [i, name] of Object.keys(attempts).entries()) {
    t.same({ ...first[i], body: undefined }, { lookups: 1, hashes: 1, comparisons: 2, body: undefined }, `${name}, first attempt: one lookup, one hash, two comparisons (before and after the lookup)`)
    t.same({ ...again[i], body: undefined }, { lookups: 0, hashes: 1, comparisons: 1, body: undefined }, `${name}, again within the cache time: no lookup, one hash, one comparison`)
    t.equal(first[i].body, first[0].body, `${name}: the same answer`)
  }
  const ownerBefore = work()
  t.equal((await from('127.0.0.71', '/v1/orgs', basic(used.keyId, used.secret))).status, 200, 'the owner\'s key still works')
  t.same(work(), ownerBefore, 'its header still recognised without a hash: the failed attempt\'s lookup kept its unchanged record')
})

t.test('remembered key ids are bounded: a flood of made-up ids cannot grow the cache past its bound', async (t) => {
  const keys = new ApiKeyAuthenticator(ts.svc.db.sql, ts.svc.pepper, 60_000, clock, { maxCached: 10 })
  t.teardown(() => keys.close())
  for (let i = 0; i < 30; i++) await t.rejects(keys.authenticate({ keyId: newKeyId(), secret: good.secret }), { code: 'unauthorized' })
  t.equal(keys.cachedIds, 10, 'ten ids remembered after thirty made-up ones')
  t.equal(keys.lookups, 30, 'each looked up once')
  t.equal((await keys.authenticate({ keyId: good.keyId, secret: good.secret })).accountId, account.id, 'a real key still works')
  t.equal(keys.cachedIds, 10, 'and takes the place of the oldest')
})

t.test('too many failed authentications from one address: a bare 429, for that address only', async (t) => {
  const bad = basic('osk_vvvvvvvvvvvvvvvvvvvv', 'x'.repeat(43))
  t.equal((await from('127.0.0.31', '/v1/orgs', goodAuth)).status, 200, 'the good key is verified (and cached) first')
  for (let i = 0; i < 5; i++) t.equal((await from('127.0.0.31', '/v1/orgs', bad)).status, 401, `failure ${i + 1} of the burst`)
  const shed = await from('127.0.0.31', '/v1/orgs', bad)
  t.equal(shed.status, 429, 'the next one is shed')
  t.equal(shed.body, '', 'no body')
  t.notOk(Object.keys(shed.headers).some((k) => /ratelimit/i.test(k)), 'no rate-limit headers')
  t.equal(shed.headers['retry-after'], '1')
  const stillBad = await from('127.0.0.31', '/v1/orgs', basic('osk_uuuuuuuuuuuuuuuuuuuu', 'x'.repeat(43)))
  t.equal(stillBad.status, 429, 'an id never seen is shed without a database lookup')
  t.equal((await from('127.0.0.31', '/v1/orgs')).status, 429, 'so is a request without credentials')
  t.equal((await from('127.0.0.31', '/v1/orgs', goodAuth)).status, 200, 'a key already verified still works from the address')
  t.equal((await from('127.0.0.32', '/v1/orgs', bad)).status, 401, 'another address is not affected')
  now += 1000
  t.equal((await from('127.0.0.31', '/v1/orgs', bad)).status, 401, 'one token back after a second: checked again')
  t.equal((await from('127.0.0.31', '/v1/orgs', bad)).status, 429)
})

t.test('failed authentications sent at once are bounded: each lookup takes its token before it starts', async (t) => {
  const before = ts.svc.auth.lookups
  const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => from('127.0.0.35', '/v1/orgs', basic(`osk_conc${'abcdefghijklmnopqrstuvwxyz234567'[i]}`.padEnd(24, 'q'), 'x'.repeat(43)))))
  const statuses = answers.map((a) => a.status)
  t.equal(statuses.filter((s) => s === 401).length, 5, 'five unknown keys looked up and refused (the burst)')
  t.equal(statuses.filter((s) => s === 429).length, 25, 'the others shed')
  t.equal(ts.svc.auth.lookups - before, 5, 'five database lookups, not thirty')
  t.ok(answers.filter((a) => a.status === 429).every((a) => a.body === '' && Number(a.headers['retry-after']) >= 1), 'bare, with Retry-After')
})

t.test('successful lookups give their token back: many new valid keys at once from one address all work', async (t) => {
  const keys = await Promise.all(Array.from({ length: 8 }, () => createKey(ts.svc.db.sql, ts.svc.pepper, account.id)))
  const statuses: number[] = []
  // Eight fresh keys (each needs a lookup) from one address with a burst of five: sent in two waves of four, each
  // wave within the allowance, because every success returns its token.
  for (const wave of [keys.slice(0, 4), keys.slice(4)]) statuses.push(...(await Promise.all(wave.map((k) => from('127.0.0.36', '/v1/orgs', basic(k.keyId, k.secret))))).map((a) => a.status))
  t.same(statuses, Array(8).fill(200))
  for (let i = 0; i < 5; i++) t.equal((await from('127.0.0.36', '/v1/orgs', basic('osk_ssssssssssssssssssss', 'x'.repeat(43)))).status, 401, `then failure ${i + 1} of a still full burst`)
  t.equal((await from('127.0.0.36', '/v1/orgs', basic('osk_ssssssssssssssssssss', 'x'.repeat(43)))).status, 429)
})

t.test('a valid OAuth access token works from an address throttled by a neighbour\'s bad credentials', async (t) => {
  const { token } = await bearerToken('00000000-0000-4000-8000-000000000031')
  for (let i = 0; i < 6; i++) await from('127.0.0.37', '/v1/orgs', basic('osk_rrrrrrrrrrrrrrrrrrrr', 'x'.repeat(43)))
  t.equal((await from('127.0.0.37', '/v1/orgs', basic('osk_rrrrrrrrrrrrrrrrrrrr', 'x'.repeat(43)))).status, 429, 'the address is throttled')
  const ok = await from('127.0.0.37', '/v1/orgs', `Bearer ${token}`)
  t.equal(ok.status, 200, 'a token the service signed is still checked, and works')
  const forged = await from('127.0.0.37', '/v1/orgs', `Bearer ${token.slice(0, -4)}AAAA`)
  t.equal(forged.status, 429, 'a token whose signature fails is shed')
  t.equal(forged.body, '')
})

t.test('a revoked access token presented again and again costs one database check per cache time', async (t) => {
  const { token, jti } = await bearerToken('00000000-0000-4000-8000-000000000032')
  await ts.svc.db.sql`INSERT INTO oauth_revoked_tokens (jti, expires_at) VALUES (${jti}, ${new Date(now + 3_600_000)})`
  const before = ts.svc.oauth.tokens.lookups
  const statuses = await Promise.all(Array.from({ length: 3 }, (_, i) => from(`127.0.0.${38 + i}`, '/v1/orgs', `Bearer ${token}`)))
  t.same(statuses.map((r) => r.status), [401, 401, 401])
  const after = ts.svc.oauth.tokens.lookups - before
  t.equal(after, 1, 'requests carrying the same token at once share one check')
  for (let i = 0; i < 3; i++) t.equal((await from('127.0.0.38', '/v1/orgs', `Bearer ${token}`)).status, 401)
  t.equal(ts.svc.oauth.tokens.lookups - before, after, 'the refusal is remembered: no further check')
  now += 5000
  t.equal((await from('127.0.0.39', '/v1/orgs', `Bearer ${token}`)).status, 401)
  t.equal(ts.svc.oauth.tokens.lookups - before, after + 1, 'checked again once the cache time has passed')
})

t.test('a request whose connection is reset at once is limited like any other (its address is read when the connection opens)', async (t) => {
  for (let i = 0; i < 6; i++) await from('127.0.0.46', '/v1/orgs', basic('osk_pppppppppppppppppppp', 'x'.repeat(43)))
  t.equal((await from('127.0.0.46', '/v1/orgs', basic('osk_pppppppppppppppppppp', 'x'.repeat(43)))).status, 429, 'the address is throttled')
  const before = ts.svc.auth.lookups
  const { port } = new URL(ts.url)
  await Promise.all(Array.from({ length: 30 }, (_, i) => new Promise<void>((resolve) => {
    const s = connect({ host: '127.0.0.1', port: Number(port), localAddress: '127.0.0.46' }, () => {
      const id = `osk_rst${'abcdefghijklmnopqrstuvwxyz234567'[i]}`.padEnd(24, 'm')
      s.write(`GET /v1/orgs HTTP/1.1\r\nHost: x\r\nAuthorization: ${basic(id, 'x'.repeat(43))}\r\n\r\n`, () => s.resetAndDestroy())
    })
    s.on('close', () => resolve())
    s.on('error', () => resolve())
  })))
  await new Promise((r) => setTimeout(r, 300))
  t.ok(ts.svc.auth.lookups - before <= 5, `no more lookups than a fresh bucket holds, not one per request (${ts.svc.auth.lookups - before} of 30)`)
})

t.test('requests joining a lookup under way take no token; malformed credentials are counted', async (t) => {
  const key = await createKey(ts.svc.db.sql, ts.svc.pepper, account.id)
  const before = ts.svc.auth.lookups
  const statuses = await Promise.all(Array.from({ length: 30 }, () => from('127.0.0.47', '/v1/orgs', basic(key.keyId, key.secret))))
  t.same([...new Set(statuses.map((r) => r.status))], [200], 'one new key on 30 connections at once from one address (burst 5): all served')
  t.equal(ts.svc.auth.lookups - before, 1, 'with one lookup')
  for (const header of ['Basic !!!', 'Digest abc', `Basic ${Buffer.from('no-colon').toString('base64')}`, `Basic ${'A'.repeat(1100)}`, 'Basic !!!']) {
    t.equal((await from('127.0.0.48', '/v1/orgs', header)).status, 401, header.slice(0, 20))
  }
  const shed = await from('127.0.0.48', '/v1/orgs', 'Digest abc')
  t.equal(shed.status, 429, 'malformed credentials count as failed authentications')
  t.equal(shed.body, '')
})

t.test('revoking nothing forgets nothing: a valid token stays checked', async (t) => {
  const { token } = await bearerToken('00000000-0000-4000-8000-000000000033')
  t.equal((await from('127.0.0.49', '/v1/orgs', `Bearer ${token}`)).status, 200)
  const checks = ts.svc.oauth.tokens.lookups
  const reg = await fetch(`${ts.svc.oauth.urls().issuer}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"redirect_uris":["http://127.0.0.1:9/cb"]}' })
  const publicClient = ((await reg.json()) as { client_id: string }).client_id
  for (let i = 0; i < 3; i++) {
    const r = await fetch(`${ts.svc.oauth.urls().issuer}/oauth/revoke`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `token=x${i}&client_id=${publicClient}` })
    t.equal(r.status, 200, 'RFC 7009: 200 for an unknown token')
  }
  t.equal((await from('127.0.0.49', '/v1/orgs', `Bearer ${token}`)).status, 200)
  t.equal(ts.svc.oauth.tokens.lookups, checks, 'no new check: anyone can call /oauth/revoke, so it must not flush what was checked')
})

t.test('MCP gets the same protection', async (t) => {
  for (let i = 0; i < 5; i++) await from('127.0.0.41', '/v1/orgs', basic('osk_tttttttttttttttttttt', 'x'.repeat(43)))
  const { port } = new URL(ts.url)
  const r = await new Promise<number>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/v1/mcp', method: 'POST', localAddress: '127.0.0.41', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' } }, (res) => {
      res.resume()
      resolve(res.statusCode ?? 0)
    })
    req.on('error', reject)
    req.end('{"jsonrpc":"2.0","id":1,"method":"ping"}')
  })
  t.equal(r, 429, 'the MCP endpoint sheds the same address')
})

t.test('a header verified before skips the HMAC while its key is cached, and stops with the key', async (t) => {
  const key = await createKey(ts.svc.db.sql, ts.svc.pepper, account.id)
  const auth = basic(key.keyId, key.secret)
  const hits = () => ts.svc.auth.verifiedHits
  t.equal((await from('127.0.0.51', '/v1/orgs', auth)).status, 200, 'verified the full way first')
  const before = hits()
  for (let i = 0; i < 3; i++) t.equal((await from('127.0.0.51', '/v1/orgs', auth)).status, 200)
  t.equal(hits() - before, 3, 'then recognised three times')
  // Another secret for the same key id is a different header: never recognised, always checked.
  const wrong = await from('127.0.0.52', '/v1/orgs', basic(key.keyId, key.secret.slice(0, -1) + (key.secret.endsWith('A') ? 'B' : 'A')))
  t.equal(wrong.status, 401, 'a wrong secret for a verified key id is refused')
  t.equal(hits() - before, 3, 'and was not recognised')
  // The same credentials spelled differently (scheme case) are verified the full way, then recognised too.
  const spelled = auth.replace(/^Basic/, 'basic')
  t.equal((await from('127.0.0.51', '/v1/orgs', spelled)).status, 200)
  t.equal(hits() - before, 3, 'another spelling is not the verified header')
  // Revoked in this process: the key's cache entry is dropped, and the header with it, at once.
  await revokeKey(ts.svc.db.sql, key.keyId)
  ts.svc.adminChanged({ key: key.keyId })
  t.equal((await from('127.0.0.51', '/v1/orgs', auth)).status, 401, 'revoked here: refused at once')
  t.equal(hits() - before, 3)
  // Expiry: a header verified against an entry older than the cache time is checked against the database again.
  const other = await createKey(ts.svc.db.sql, ts.svc.pepper, account.id)
  const otherAuth = basic(other.keyId, other.secret)
  t.equal((await from('127.0.0.53', '/v1/orgs', otherAuth)).status, 200)
  const lookups = ts.svc.auth.lookups
  now += 5000
  t.equal((await from('127.0.0.53', '/v1/orgs', otherAuth)).status, 200, 'past the cache time: still valid')
  t.equal(ts.svc.auth.lookups - lookups, 1, 'and checked against the database again, not recognised')
  // Revoked by another process: refused at once where the database notifies (PostgreSQL), else once the cache time
  // has passed, as for any cached key.
  await ts.svc.db.sql`UPDATE api_keys SET revoked_at = now() WHERE key_id = ${other.keyId}`
  now += 5000
  t.equal((await from('127.0.0.53', '/v1/orgs', otherAuth)).status, 401, 'revoked elsewhere: refused within the cache time')
})

t.test('on one keep-alive connection: its verified header is recognised, any other header is checked in full', async (t) => {
  const key = await createKey(ts.svc.db.sql, ts.svc.pepper, account.id)
  const other = await createKey(ts.svc.db.sql, ts.svc.pepper, account.id)
  const auth = basic(key.keyId, key.secret)
  const wrong = basic(key.keyId, key.secret.slice(0, -1) + (key.secret.endsWith('A') ? 'B' : 'A'))
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => agent.destroy())
  const ports = new Set<number>()
  const get = (authorization: string) =>
    new Promise<number>((resolve, reject) => {
      const { port } = new URL(ts.url)
      const req = request({ host: '127.0.0.1', port, path: '/v1/orgs', agent, localAddress: '127.0.0.61', headers: { authorization } }, (res) => {
        ports.add(res.socket.localPort!)
        res.resume()
        res.on('end', () => resolve(res.statusCode ?? 0))
      })
      req.on('error', reject)
      req.end()
    })
  const hits = () => ts.svc.auth.verifiedHits
  t.equal(await get(auth), 200, 'verified the full way first')
  const before = hits()
  t.equal(await get(auth), 200)
  t.equal(hits() - before, 1, 'the same header again: recognised')
  t.equal(await get(wrong), 401, 'a wrong secret on the same connection is refused')
  t.equal(await get(basic(other.keyId, other.secret)), 200, 'another key on the same connection is verified in full')
  t.equal(hits() - before, 1, 'neither was recognised')
  t.equal(await get(auth), 200, 'the first key again: recognised from the process-wide digest')
  t.equal(hits() - before, 2)
  t.equal(await get(wrong), 401, 'and the wrong secret is still refused')
  t.equal(ports.size, 1, 'all on one connection')
})
