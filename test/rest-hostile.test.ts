/** Hostile and malformed input never yields a 5xx, a stack trace or SQL text (§7; issue 2). */
import t from 'tap'
import { request } from 'node:http'
import { startTestService } from './helpers/service.ts'

const ts = await startTestService(t)
const org = ts.seed.orgs.find((o) => o.large)!
const auth = await ts.keyHeader(org.accountId)
const base = `/v1/orgs/${org.salesforceId}`
const enc = encodeURIComponent

const INJECTIONS = [
  "'; DROP TABLE fields; --",
  "1 OR 1=1",
  "eq(id,1);DELETE FROM orgs",
  "eq(name,'x'' OR ''1''=''1')",
  "eq(apiName,\"x\\\" OR 1=1 --\")",
  'in(id,' + '1,'.repeat(5000) + '1)',
  '(((((((((((((((((((((((((((((((((((((((((((eq(id,1))))))))))))))))))))))))))))))))))))))))))',
  'and('.repeat(2000) + 'eq(id,1)' + ')'.repeat(2000),
  'eq(__proto__,1)',
  'eq(constructor,1)',
  'eq(id,99999999999999999999999)',
  'gt(createdDate,2024-13-45)',
  'eq(percentPopulated,NaN)',
  'like(apiName,%)',
  '\u0000',
  '%',
  'eq(id,%ZZ)',
]

t.test('injection attempts in filter, sort, fields, ids and limit', async (t) => {
  const urls: string[] = []
  for (const x of INJECTIONS) {
    urls.push(`${base}/fields?filter=${enc(x)}`, `${base}/fields?sort=${enc(x)}`, `${base}/issues?fields=${enc(x)}`, `${base}/fields/${enc(x)}`, `${base}/fields?limit=${enc(x)}`, `${base}/issues/${enc(x)}`, `/v1/orgs/${enc(x)}/fields`)
  }
  for (const u of urls) {
    const r = await ts.get(u, auth)
    t.ok(r.status >= 200 && r.status < 500, `${u.slice(0, 80)} → ${r.status}`)
    if (r.status >= 400) {
      t.equal(typeof r.body?.error?.code, 'string', 'error envelope')
      t.notMatch(r.text, /\bSELECT\b|\bFROM\b.*\bWHERE\b|at .*\.ts:\d+|node_modules/i, 'no SQL text or stack in the body')
    }
  }
  const still = await ts.get(`${base}/fields?limit=1`, auth)
  t.equal(still.status, 200, 'tables intact, service still serving')
})

t.test('unknown parameters, repeated parameters, bad encodings', async (t) => {
  const cases: Array<[string, number, string]> = [
    [`${base}/fields?foo=1`, 400, 'unknown_parameter'],
    [`${base}/fields?limit=1&limit=2`, 400, 'invalid_parameter'],
    [`${base}/fields?filter=${enc('eq(id,1)')}&filter=${enc('eq(id,2)')}`, 400, 'invalid_parameter'],
    [`${base}/fields?fields=apiName`, 400, 'unknown_parameter'],
    [`${base}/issues?fields=updatedAt`, 400, 'unknown_field'],
    [`${base}/fields?sort=`, 400, 'invalid_parameter'],
    [`${base}/fields?sort=${enc('-')}`, 400, 'invalid_parameter'],
    [`${base}/fields?filter=${enc('eq(id,abc)')}`, 400, 'invalid_filter_value'],
    [`${base}/fields?filter=${enc('eq(createdDate,notadate)')}`, 400, 'invalid_filter_value'],
    [`${base}/fields?filter=${enc('like(percentPopulated,1*)')}`, 400, 'unsupported_filter_operator'],
    [`${base}/fields?filter=${enc('unknownOp(id,1)')}`, 400, 'filter_parse_error'],
    [`${base}/fields?%E0%A4%A=1`, 400, 'invalid_parameter'],
    [`${base}/objects/abc/fields`, 400, 'invalid_id'],
  ]
  for (const [u, status, code] of cases) {
    const r = await ts.get(u, auth)
    t.equal(r.status, status, `${u} → ${status}`)
    t.equal(r.body?.error?.code, code, `${u} → ${code}`)
  }
})

t.test('issues never carry updatedAt; fields selects a sparse fieldset (§4.1, §9 changelog)', async (t) => {
  const r = await ts.get(`${base}/issues?limit=5`, auth)
  t.equal(r.status, 200)
  t.ok(r.body.data.length > 0)
  t.ok(r.body.data.every((i: Record<string, unknown>) => !('updatedAt' in i)))
  const s = await ts.get(`${base}/issues?fields=${enc('priority,title')}&limit=5`, auth)
  t.same(Object.keys(s.body.data[0]), ['title', 'priority'], 'exactly the requested fields, in declaration order')
})

t.test('in(id,…) fetches many records in one request (§4.2)', async (t) => {
  const page = await ts.get(`${base}/fields?limit=5`, auth)
  const ids = page.body.data.map((f: { id: number }) => f.id)
  const r = await ts.get(`${base}/fields?filter=${enc(`in(id,${ids.join(',')})`)}`, auth)
  t.equal(r.status, 200)
  t.same(r.body.data.map((f: { id: number }) => f.id).sort(), [...ids].sort())
  const classic = await ts.get(`${base}/fields?filter=${enc(`in(id,(${ids.join(',')}))`)}`, auth)
  t.same(classic.body.data.map((f: { id: number }) => f.id).sort(), [...ids].sort(), 'classic in(id,(…)) form')
})

t.test('methods, unknown paths, oversize requests', async (t) => {
  const post = await ts.get(`${base}/fields`, auth, { method: 'POST' })
  t.equal(post.status, 405)
  t.equal(post.headers.get('allow'), 'GET, HEAD')
  const del = await ts.get('/v1/orgs', auth, { method: 'DELETE' })
  t.equal(del.status, 405)
  const head = await fetch(ts.url + '/v1/orgs', { method: 'HEAD', headers: { authorization: auth } })
  t.equal(head.status, 200, 'HEAD is served')
  const nf = await ts.get('/v1/nothing-here', auth)
  t.equal(nf.status, 404)
  t.equal(nf.body.error.code, 'not_found')
  const long = await ts.get(`${base}/fields?filter=${'a'.repeat(9000)}`, auth)
  t.equal(long.status, 400, 'URL over 8 KB → 400')
  const huge = await new Promise<number>((resolve) => {
    const req = request(ts.url + '/v1/orgs', { headers: { authorization: auth, 'x-big': 'a'.repeat(20000) } }, (res) => {
      res.resume()
      resolve(res.statusCode ?? 0)
    })
    req.on('error', () => resolve(-1))
    req.end()
  })
  t.equal(huge, 431, 'oversized headers → 431')
  const ok = await ts.get(`${base}/fields?limit=1`, auth)
  t.equal(ok.status, 200, 'still serving')
})
