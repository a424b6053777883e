/** Authentication over the wire (§5 REST item 1, §7; 401 for missing or invalid credentials). */
import { t } from '../helpers/file-test.ts'
import { startTestService, basic } from '../helpers/service.ts'
import { revokeKey, createKey } from '../../runtime/platform/admin.ts'
import { openDatabase } from '../../runtime/platform/db/connect.ts'

// No authentication cache: a key revoked behind the service's back is refused at once (the cache's own bound is
// test/rest/rest-auth-attack.test.ts's).
const ts = await startTestService(t, { config: { authCacheMs: 0 } })
const org = ts.seed.orgs.find((o) => o.large)!
const path = `/v1/orgs/${org.salesforceId}/fields?limit=1`
const key = await createKey(ts.svc.db.sql, ts.svc.pepper, org.accountId)
const good = basic(key.keyId, key.secret)

t.test('a valid key reads', async (t) => {
  const r = await ts.get(path, good)
  t.equal(r.status, 200)
})

t.test('missing, malformed and wrong credentials → 401 with WWW-Authenticate', async (t) => {
  const cases: Array<[string, string | null]> = [
    ['no header', null],
    ['empty', ''],
    ['bearer scheme', 'Bearer abc'],
    ['basic without payload', 'Basic'],
    ['not base64', 'Basic !!!!'],
    ['no colon', 'Basic ' + Buffer.from('justakeyid').toString('base64')],
    ['unknown key id', basic('osk_aaaaaaaaaaaaaaaaaaaa', key.secret)],
    ['wrong secret', basic(key.keyId, 'A'.repeat(43))],
    ['secret of another length', basic(key.keyId, key.secret + 'x')],
    ['key id with SQL', basic("osk_' OR 1=1 --", key.secret)],
    ['huge header', 'Basic ' + 'A'.repeat(4000)],
    ['unicode', 'Basic ' + Buffer.from('ключ:секрет').toString('base64')],
  ]
  for (const [name, header] of cases) {
    const r = await ts.get(path, header === null ? null : header === '' ? null : header, header === '' ? { headers: { authorization: '' } } : {})
    t.equal(r.status, 401, `${name} → 401`)
    t.equal(r.body.error.code, 'unauthorized', `${name}: code`)
    t.equal(r.body.error.status, 401)
    t.match(r.headers.get('www-authenticate') ?? '', /^Basic realm="orgscan"/, `${name}: WWW-Authenticate`)
    t.notMatch(r.text, /stack|SELECT|api_keys/i, `${name}: no internals in the body`)
  }
})

t.test('a revoked key stops working (with no authentication cache, at once)', async (t) => {
  const k = await createKey(ts.svc.db.sql, ts.svc.pepper, org.accountId)
  const h = basic(k.keyId, k.secret)
  t.equal((await ts.get(path, h)).status, 200)
  await revokeKey(ts.svc.db.sql, k.keyId)
  const r = await ts.get(path, h)
  t.equal(r.status, 401)
  t.match(r.body.error.detail, /revoked/)
})

t.test('secrets are stored only as a keyed hash', async (t) => {
  const rows = await ts.svc.db.sql`SELECT secret_hash FROM api_keys WHERE key_id = ${key.keyId}`
  t.equal(rows.length, 1)
  const stored = Buffer.from(rows[0].secret_hash)
  t.equal(stored.length, 32, 'HMAC-SHA-256 digest')
  t.notOk(stored.toString('utf8').includes(key.secret), 'the secret is not stored')
  const all = await ts.svc.db.sql`SELECT row_to_json(k)::text AS j FROM api_keys k`
  t.notOk(all.some((r) => String(r.j).includes(key.secret)), 'no column holds the secret')
})

t.test('lastUsedAt is recorded without a write per request', async (t) => {
  await ts.get(path, good)
  const before = await ts.svc.db.sql`SELECT last_used_at FROM api_keys WHERE key_id = ${key.keyId}`
  t.equal(before[0].last_used_at, null, 'not written synchronously')
  await ts.svc.close() // flushes the recorded times
  const db = await openDatabase(ts.location)
  t.teardown(() => db.close())
  const after = await db.sql`SELECT last_used_at FROM api_keys WHERE key_id = ${key.keyId}`
  t.type(after[0].last_used_at, Date, 'written at shutdown')
})
