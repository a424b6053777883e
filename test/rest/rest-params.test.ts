/**
 * Parameter rules found by trying the service as a new user: the quota endpoints reject unknown query parameters
 * like every other endpoint (and stay free); every limit that is not a whole number of at least 1 gets one wording; a
 * list parameter may be repeated (the form generated clients send arrays in), any other may not.
 */
import { t } from '../helpers/file-test.ts'
import { startTestService } from '../helpers/service.ts'
import { registry } from '../../resources/index.ts'
import { compileRegistry } from '../../runtime/core/registry.ts'
import { valuesOf, type QueryParam } from '../../runtime/core/operations.ts'

const ts = await startTestService(t)
const org = ts.seed.orgs.find((o) => o.large)!
const auth = await ts.keyHeader(org.accountId)

t.test('the quota endpoints take no parameters', async (t) => {
  const before = (await ts.get('/v1/account/quota', auth)).body.data.rateLimit.daily.remaining
  for (const path of ['/v1/account/quota?foo=1', `/v1/orgs/${org.salesforceId}/quota?limit=5`, '/v1/account/quota?%ZZ=1']) {
    const r = await ts.get(path, auth)
    t.equal(r.status, 400, path)
    t.equal(r.body.error.code, 'unknown_parameter')
  }
  t.equal((await ts.get('/v1/account/quota', auth)).body.data.rateLimit.daily.remaining, before, 'and stay free')
})

t.test('one wording for every bad limit', async (t) => {
  const details = new Set<string>()
  for (const limit of ['0', '-1', '1.5', 'abc', '']) {
    const r = await ts.get(`/v1/orgs/${org.salesforceId}/fields?limit=${limit}`, auth)
    t.equal(r.status, 400, `limit=${limit}`)
    t.equal(r.body.error.parameter, 'limit')
    details.add(r.body.error.detail)
  }
  t.same([...details], ['limit must be a whole number of at least 1.'])
})

t.test('record JSON is compact like the envelope', async (t) => {
  // Records are rendered compactly; an object-valued field (issueCounts) keeps PostgreSQL's jsonb spacing inside it.
  for (const path of [`/v1/orgs/${org.salesforceId}/fields?limit=3`, `/v1/orgs/${org.salesforceId}`, '/v1/orgs', `/v1/orgs/${org.salesforceId}/orgLimits`]) {
    const r = await ts.get(path, auth)
    t.equal(r.status, 200, path)
    t.notMatch(r.text, /" : |\}, \{/, `${path}: no spaces around a field's colon or between records`)
    t.match(r.text, /"data":\[?\{"[a-zA-Z]+":/, "compact from the first field")
    t.same(JSON.parse(r.text), r.body)
  }
})

t.test('a limit above 200 is clamped however many digits it has; an offset too large says so', async (t) => {
  for (const limit of ['201', '999999999999', '1000000000000', '99999999999999999999']) {
    const r = await ts.get(`/v1/orgs/${org.salesforceId}/fields?limit=${limit}`, auth)
    t.equal(r.status, 200, `limit=${limit} is served`)
    t.equal(r.body.meta.limit, 200)
    t.equal(r.body.data.length, 200)
    t.equal(r.body.meta.requestedLimit, Math.min(Number(limit), Number.MAX_SAFE_INTEGER), 'requestedLimit: the value asked for, at most 2^53 - 1')
    t.match(r.body.links.next, /[?&]limit=200(&|$)/, 'the next page asks for what was served')
  }
  for (const offset of ['2147483648', '9999999999999', '123456789012345678901234567890']) {
    const r = await ts.get(`/v1/orgs/${org.salesforceId}/fields?offset=${offset}`, auth)
    t.equal(r.status, 400, `offset=${offset}`)
    t.equal(r.body.error.detail, 'offset must be at most 2147483647.')
  }
})

t.test("links keep the caller's encoding, so a link is as long as the request and can be followed", async (t) => {
  // 500 quoted labels: about 3,400 characters of filter; every character a standard encoder escapes (", comma,
  // parentheses) as the client sent it, lightly.
  const labels = Array.from({ length: 500 }, (_, i) => `"L${i}"`)
  const filter = `in(label,${labels.join(',')})`
  t.ok(filter.length < 4096)
  const light = `filter=${filter.replace(/"/g, '%22')}&sort=id&limit=1`
  const first = await ts.get(`/v1/orgs/${org.salesforceId}/fields?${light}`, auth)
  t.equal(first.status, 200)
  t.equal(first.body.links.self, `/v1/orgs/${org.salesforceId}/fields?${light}`, 'self is the request as sent')
  // A filter matching many rows, so there is a next page.
  const many = `filter=${encodeURIComponent(`or(${'ne(id,0),'.repeat(300)}ne(id,0))`)}&limit=2`
  const p1 = await ts.get(`/v1/orgs/${org.salesforceId}/fields?${many}`, auth)
  t.equal(p1.status, 200)
  t.equal(p1.body.links.next, `/v1/orgs/${org.salesforceId}/fields?${many}&offset=2`, 'next changes only the offset')
  const p2 = await ts.get(p1.body.links.next, auth)
  t.equal(p2.status, 200, 'the next link is served')
  t.equal(p2.body.meta.offset, 2)
  t.equal(p2.body.links.prev, `/v1/orgs/${org.salesforceId}/fields?${many}&offset=0`)
  t.notSame(p2.body.data.map((r: { id: number }) => r.id), p1.body.data.map((r: { id: number }) => r.id))
  const between = await ts.get(`/v1/orgs/${org.salesforceId}/fields?limit=2&%6Fffset=4&sort=id`, auth)
  t.equal(between.body.links.next, `/v1/orgs/${org.salesforceId}/fields?limit=2&offset=6&sort=id`, 'an offset written percent-encoded is replaced in place')
  t.equal(between.body.links.prev, `/v1/orgs/${org.salesforceId}/fields?limit=2&offset=2&sort=id`)
  const short = await ts.get(`/v1/orgs/${org.salesforceId}/fields?limit=5&offset=3&sort=id`, auth)
  t.equal(short.body.links.prev, `/v1/orgs/${org.salesforceId}/fields?limit=3&offset=0&sort=id`, 'fewer records than a page before this one: prev holds exactly those')
  const before = await ts.get(short.body.links.prev, auth)
  const all = await ts.get(`/v1/orgs/${org.salesforceId}/fields?limit=8&sort=id`, auth)
  t.same([...before.body.data, ...short.body.data].map((r: { id: number }) => r.id), all.body.data.map((r: { id: number }) => r.id), 'prev then this page: every record once, in order, none twice')
  const clamped = await ts.get(`/v1/orgs/${org.salesforceId}/fields?limit=500`, auth)
  t.equal(clamped.body.links.next, `/v1/orgs/${org.salesforceId}/fields?limit=200&offset=200`, 'a clamped limit is replaced by the limit served')
})

t.test('a filter at its length limit fits in the URL fully percent-encoded', async (t) => {
  const labels: string[] = []
  const next = () => `"${labels.length.toString(36).padStart(4, 'x')}"`
  while (`in(label,${[...labels, next()].join(',')})`.length <= 4096) labels.push(next())
  const filter = `in(label,${labels.join(',')})`
  t.ok(filter.length > 4080 && filter.length <= 4096, `a filter of ${filter.length} characters`)
  const encoded = [...filter].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('')
  const r = await ts.get(`/v1/orgs/${org.salesforceId}/fields?filter=${encoded}`, auth)
  t.equal(r.status, 200, `a URL of ${encoded.length + 60} characters is served`)
  const over = await ts.get(`/v1/orgs/${org.salesforceId}/fields?filter=${'%20'.repeat(4800)}`, auth)
  t.equal(over.status, 400, 'a longer URL is refused')
  t.match(over.body.error, { code: 'invalid_parameter', detail: 'The request URL exceeds 14336 characters.' })
  t.equal(over.headers.get('x-orgscan-api-version'), '1', 'with the version header of the path')
})

t.test('NUL in a decoded issue key or an extra parameter is refused before the database (no stored text has one)', async (t) => {
  const key = await ts.get(`/v1/orgs/${org.salesforceId}/issues/${Buffer.from('a\u0000b').toString('base64url')}`, auth)
  t.equal(key.status, 400)
  t.match(key.body.error, { code: 'invalid_id', parameter: 'issueKey' })
  t.notMatch(key.text, /SQLSTATE/)
  const license = await ts.get(`/v1/orgs/${org.salesforceId}/loginActivity/overview?license=a%00b`, auth)
  t.equal(license.status, 400)
  t.match(license.body.error, { code: 'invalid_parameter', parameter: 'license' })
  t.notMatch(license.text, /SQLSTATE/)
})

t.test('integer ids: 0 is malformed like -1; an over-long id is malformed, not an unknown endpoint', async (t) => {
  for (const path of ['fields/0', 'fields/-1', 'objects/0/fields', 'fields/01']) {
    const r = await ts.get(`/v1/orgs/${org.salesforceId}/${path}`, auth)
    t.equal(r.status, 400, path)
    t.equal(r.body.error.code, 'invalid_id')
  }
  const digits = await ts.get(`/v1/orgs/${org.salesforceId}/fields/1234567890123456789`, auth)
  t.match(digits.body.error, { code: 'invalid_id', parameter: 'fieldId', detail: 'fieldId must be a positive integer of at most 18 digits.' }, 'a positive integer too long says why')
  const long = await ts.get(`/v1/orgs/${org.salesforceId}/orgLimits/${'a'.repeat(600)}`, auth)
  t.equal(long.status, 400)
  t.match(long.body.error, { code: 'invalid_id', parameter: 'name' })
})

t.test('error answers of the quota endpoints carry the rate-limit headers, as every authenticated answer does', async (t) => {
  const other = ts.seed.orgs.find((o) => o.accountId !== org.accountId)!
  for (const path of ['/v1/account/quota?x=1', `/v1/orgs/${other.salesforceId}/quota`, '/v1/orgs/bad-id/quota']) {
    const r = await ts.get(path, auth)
    t.ok(r.status >= 400 && r.status < 500, `${path}: ${r.status}`)
    t.match(r.headers.get('x-ratelimit-limit'), /^\d+$/, `${path}: X-RateLimit-Limit`)
    t.match(r.headers.get('x-ratelimit-remaining'), /^\d+$/)
    t.match(r.headers.get('x-ratelimit-reset'), /^\d+$/)
  }
})

t.test('a list parameter repeated is the same list as comma-separated (sort, fields, by); any other repeated is a 400', async (t) => {
  const base = `/v1/orgs/${org.salesforceId}`
  /** Both raw query strings answer the same records, meta and ETag (the links keep each request's own query). */
  const same = async (a: string, b: string) => {
    const [x, y] = [await ts.get(`${base}/${a}`, auth), await ts.get(`${base}/${b}`, auth)]
    t.equal(x.status, 200, a)
    t.equal(y.status, 200, b)
    t.equal(x.headers.get('etag'), y.headers.get('etag'), `${b}: the ETag of ${a}`)
    const { links: _x, ...bodyX } = x.body
    const { links: _y, ...bodyY } = y.body
    t.same(bodyY, bodyX, `${b}: the body of ${a}`)
    return [x, y]
  }
  const [comma, split] = await same('fields?limit=5&sort=-percentPopulated,apiName&fields=apiName,label,type', 'fields?limit=5&sort=-percentPopulated&sort=apiName&fields=apiName&fields=label&fields=type')
  t.same(Object.keys(comma.body.data[0]), ['id', 'apiName', 'label', 'type'], 'the fields asked for, in declaration order, with the id')
  t.equal(split.body.links.next, `${base}/fields?limit=5&sort=-percentPopulated&sort=apiName&fields=apiName&fields=label&fields=type&offset=5`, 'each answer links with its own query')
  await same('fields?limit=4&fields=apiName,label,type', 'fields?limit=4&fields=apiName,label&fields=type')
  const [counts] = await same('counts/fields?by=type,isCustom&limit=5', 'counts/fields?by=type&by=isCustom&limit=5')
  t.same(Object.keys(counts.body.data[0]).sort(), ['count', 'isCustom', 'type'], 'grouped by both')
  const repeated = await ts.get(`${base}/counts/fields?by=type&by=isCustom&limit=5`, auth)
  const joined = await ts.get(`${base}/counts/fields?by=type,isCustom&limit=5`, auth)
  t.equal(repeated.text, joined.text, 'a grouped count (no links): the same bytes')
  const one = comma.body.data[0].id
  await same(`fields/${one}?fields=apiName,label`, `fields/${one}?fields=apiName&fields=label`)
  const tag = joined.headers.get('etag')!
  t.equal((await ts.get(`${base}/counts/fields?by=type&by=isCustom&limit=5`, auth, { headers: { 'if-none-match': tag } })).status, 304, "one form's tag revalidates the other")

  // The list's own rules hold across the occurrences.
  const twice = await ts.get(`${base}/fields?sort=label&sort=-label`, auth)
  t.match(twice.body.error, { code: 'invalid_parameter', parameter: 'sort', detail: 'Sort field "label" is given twice.' })
  const four = await ts.get(`${base}/counts/fields?by=type&by=isCustom&by=namespace,isRequired`, auth)
  t.match(four.body.error, { code: 'invalid_parameter', parameter: 'by', detail: 'by takes at most 3 fields.' })
  const empty = await ts.get(`${base}/fields?fields=apiName&fields=`, auth)
  t.match(empty.body.error, { code: 'unknown_field', parameter: 'fields' }, 'an empty occurrence is an empty item, as `fields=apiName,` is')

  // Every other parameter of these operations (from the compiled operations) is still refused when repeated.
  const ops = compileRegistry(registry).find((c) => c.name === 'fields')!.ops
  const valid: Partial<Record<QueryParam['type'], string>> = { limit: '2', offset: '0', filter: 'eq(isCustom,true)' }
  let singles = 0
  for (const [op, path] of [[ops.list!, 'fields'], [ops.count!, 'counts/fields?by=type']] as const) {
    for (const p of op.queryParams) {
      if (valuesOf(p) !== 'single') continue
      singles++
      const v = encodeURIComponent(valid[p.type]!)
      const r = await ts.get(`${base}/${path}${path.includes('?') ? '&' : '?'}${p.name}=${v}&${p.name}=${v}`, auth)
      t.equal(r.status, 400, `${op.name}: ${p.name} twice`)
      t.match(r.body.error, { code: 'invalid_parameter', parameter: p.name, detail: `${p.name} may be given only once.` })
    }
  }
  t.equal(singles, 5, 'limit, offset and filter of the list; filter and limit of the count')
})
