/**
 * Per-resource conformance suite, generated from the registry: every list, single-record and
 * singleton endpoint is exercised over HTTP against the real server. Section numbers refer to the contract.
 */
import { t } from '../helpers/file-test.ts'
import { registry } from '../../resources/index.ts'
import { compileRegistry } from '../../runtime/core/registry.ts'
import { fillPath, recordParam } from '../../runtime/core/operations.ts'
import { startTestService, createUser, grantOrgAccess } from '../helpers/service.ts'
import { isSorted, literal, parseSortString } from '../helpers/records.ts'
import { openApiChecker } from '../helpers/openapi-check.ts'

const resources = compileRegistry(registry)
const ts = await startTestService(t)
// Every answer this suite receives is also checked against the OpenAPI document's schema of its path and status.
const schema = openApiChecker()
const schemaProblems: string[] = []
const plainGet = ts.get.bind(ts)
ts.get = async (path, auth, init) => {
  const r = await plainGet(path, auth, init)
  if ((init?.method ?? 'GET') === 'GET' && r.headers.get('content-type')?.startsWith('application/json')) {
    const problem = schema.problem(path, r.status, r.body)
    if (problem) schemaProblems.push(problem)
  }
  return r
}
const main = ts.seed.orgs.find((o) => o.large)!
const other = ts.seed.accounts.find((a) => a.id !== main.accountId)!
const auth = await ts.keyHeader(main.accountId)
const otherAuth = await ts.keyHeader(other.id)
const base = (path: string) => `/v1/orgs/${main.salesforceId}/${path}`
const enc = encodeURIComponent

// A parent id to pin objects/{objectId}/fields: the object with the most fields.
const objs = await ts.get(base('objects?sort=-fieldCount&limit=1'), auth)
const parentObjectId = String(objs.body.data[0].id)

for (const c of resources) {
  const d = c.decl
  if (d.scope !== 'org') continue
  // The paths come from the compiled operations: the list's, or a get-only resource's without its record id.
  const values: Record<string, string> = { orgId: main.salesforceId, ...(d.parent ? { [d.parent.param]: parentObjectId } : {}) }
  const own = c.ops.get && recordParam(c.ops.get)
  const listPath = c.ops.list ? fillPath(c.ops.list, values) : fillPath({ path: own ? c.ops.get!.path.replace(`/{${own.name}}`, '') : c.ops.get!.path }, values)
  /** The get's path of a record whose id is given as the path carries it (already encoded). */
  const recordPath = (id: string) => fillPath(c.ops.get!, { ...values, ...(own ? { [own.name]: id } : {}) }, (v) => v)

  if (d.operations.list) {
    t.test(`${d.name}: list (§4.1, §4.2)`, async (t) => {
      const r = await ts.get(listPath, auth)
      t.equal(r.status, 200, 'default list is 200')
      t.equal(r.headers.get('x-orgscan-api-version'), '1', 'version header (§9)')
      t.ok(Array.isArray(r.body.data), 'data is an array')
      t.ok(r.body.data.length > 0, 'the seeded org has rows')
      if (d.unpaged) {
        t.equal(r.body.meta.hasMore, false, 'unpaged list returns every row in one page')
        t.equal(r.body.meta.limit, undefined, 'no limit in an unpaged list')
        const lim = await ts.get(`${listPath}?limit=1`, auth)
        t.equal(lim.status, 400, 'limit is not a parameter of an unpaged list')
      } else {
        t.equal(r.body.meta.limit, 50, 'default limit 50')
        t.equal(r.body.meta.offset, 0)
        t.ok(r.body.data.length <= 50)
        t.equal(r.body.meta.count, r.body.data.length, 'meta.count is the page size')
        const big = await ts.get(`${listPath}?limit=1000`, auth)
        t.equal(big.status, 200, 'limit above 200 is clamped, not rejected')
        t.equal(big.body.meta.limit, 200, 'clamped limit reported')
        t.equal(big.body.meta.requestedLimit, 1000, 'requested limit reported')
        t.ok(big.body.data.length <= 200)
        for (const bad of ['abc', '-1', '0', '1.5', '1e3', '']) {
          const b = await ts.get(`${listPath}?limit=${enc(bad)}`, auth)
          t.equal(b.status, 400, `limit=${bad} → 400`)
          t.equal(b.body.error.code, 'invalid_parameter')
          t.equal(b.body.error.parameter, 'limit')
        }
        const bo = await ts.get(`${listPath}?offset=x`, auth)
        t.equal(bo.status, 400, 'bad offset → 400')
        t.equal(bo.body.error.parameter, 'offset')
        // Stable paging: two pages of 2 equal the first page of 4.
        const all = await ts.get(`${listPath}?limit=4`, auth)
        const p1 = await ts.get(`${listPath}?limit=2`, auth)
        const p2 = await ts.get(`${listPath}?limit=2&offset=2`, auth)
        t.same([...p1.body.data, ...p2.body.data], all.body.data, 'offset pages are contiguous and stable')
        if (all.body.data.length === 4) t.ok(p1.body.links.next, 'links.next when more rows exist')
        t.ok(p2.body.links.prev, 'links.prev after the first page')
        const far = await ts.get(`${listPath}?offset=100000000`, auth)
        t.equal(far.status, 200)
        t.same(far.body.data, [], 'offset past the end is an empty page')
        t.equal(far.body.meta.hasMore, false)
      }
      if (d.defaultSort) {
        t.ok(isSorted(r.body.data, parseSortString(d.defaultSort)), `default sort ${d.defaultSort} (§4.1)`)
      }
      if (d.defaultFilter) {
        // Every declared default filter: the list without `filter` is exactly the list with the default given
        // explicitly, and a supplied filter replaces it (`filter=` means none: at least as many rows, here more).
        const q = d.unpaged ? '' : 'limit=200&'
        const plain = await ts.get(`${listPath}?${q}`.replace(/[?&]$/, ''), auth)
        const explicit = await ts.get(`${listPath}?${q}filter=${enc(d.defaultFilter)}`, auth)
        const none = await ts.get(`${listPath}?${q}filter=`, auth)
        t.ok(plain.body.data.length > 0, `the default filter ${d.defaultFilter} keeps rows in the seed`)
        t.same(plain.body.data, explicit.body.data, `without filter = filter=${d.defaultFilter} (§4.1)`)
        t.ok(none.body.data.length > plain.body.data.length, `filter= (none) replaces the default: more rows than ${d.defaultFilter}`)
      }
      if (d.listFields) t.same(Object.keys(r.body.data[0]), d.listFields, 'list record fields')
      else t.same(Object.keys(r.body.data[0]), [...c.fields.keys()], 'record carries every declared field')
    })

    if (d.sortable?.length) {
      t.test(`${d.name}: sort by every sortable field (§4.1)`, async (t) => {
        for (const f of d.sortable!) {
          for (const desc of [false, true]) {
            const s = `${desc ? '-' : ''}${f}`
            const r = await ts.get(`${listPath}?sort=${enc(s)}${d.unpaged ? '' : '&limit=200'}`, auth)
            t.equal(r.status, 200, `sort=${s}`)
            t.ok(isSorted(r.body.data, [{ field: f, desc }]), `rows ordered by ${s}`)
          }
        }
        const bad = await ts.get(`${listPath}?sort=noSuchField`, auth)
        t.equal(bad.status, 400, 'unknown sort field → 400')
        t.equal(bad.body.error.code, 'unknown_sort_field')
        t.same(bad.body.error.allowed, d.sortable, 'error lists the sortable fields')
      })
    }

    if (d.filterable?.length) {
      t.test(`${d.name}: filter by every filterable field (§4.1, §7)`, async (t) => {
        for (const f of d.filterable!) {
          const spec = c.fields.get(f)!
          const sample = await ts.get(`${listPath}?filter=${enc(`isNotNull(${f})`)}${d.unpaged ? '' : '&limit=1'}`, auth)
          t.equal(sample.status, 200, `isNotNull(${f})`)
          if (sample.body.data.length === 0) {
            const nulls = await ts.get(`${listPath}?filter=${enc(`isNull(${f})`)}`, auth)
            t.ok(nulls.body.data.length > 0, `isNull(${f}) finds the rows (the seed has no ${f} values)`)
            t.ok(nulls.body.data.every((x: Record<string, unknown>) => x[f] === null), `isNull(${f}) returns only nulls`)
            continue
          }
          const value = sample.body.data[0][f]
          const expr = `eq(${f},${literal(spec, value)})`
          const r = await ts.get(`${listPath}?filter=${enc(expr)}${d.unpaged ? '' : '&limit=200'}`, auth)
          t.equal(r.status, 200, expr)
          t.ok(r.body.data.length >= 1, `${expr} finds the sampled row`)
          t.ok(r.body.data.every((x: Record<string, unknown>) => x[f] === value), `${expr} returns only matching rows`)
        }
        const unknown = await ts.get(`${listPath}?filter=${enc('eq(noSuchField,1)')}`, auth)
        t.equal(unknown.status, 400, 'unknown filter field → 400')
        t.equal(unknown.body.error.code, 'unknown_filter_field')
        t.equal(unknown.body.error.parameter, 'filter')
        const malformed = await ts.get(`${listPath}?filter=${enc('eq(id,')}`, auth)
        t.equal(malformed.status, 400, 'malformed filter → 400')
        t.equal(malformed.body.error.code, 'filter_parse_error')
        t.type(malformed.body.error.offset, 'number', 'parse error carries the offset')
      })
    }
  }

  if (d.operations.get && d.kind === 'collection' && d.id) {
    t.test(`${d.name}: single record (§4.2)`, async (t) => {
      // The records are listed by the resource with the same table (or, for recommendations, the same path: issues).
      const listable = resources.find((x) => (x.decl.table === d.table || x.decl.path === d.path) && x.decl.operations.list && !x.decl.parent && x.fields.has(d.id!.field))!
      const list = await ts.get(`${fillPath(listable.ops.list!, values)}${listable.decl.defaultFilter ? '?filter=' : ''}`, auth)
      const rec = list.body.data[0]
      const raw = String(rec[d.id!.field])
      const id = d.id!.encoding === 'base64url' ? Buffer.from(raw, 'utf8').toString('base64url') : enc(raw)
      const one = await ts.get(recordPath(id), auth)
      t.equal(one.status, 200, 'existing record → 200')
      t.equal(one.body.data[d.id!.field], rec[d.id!.field], 'the record addressed by the id')
      t.same(Object.keys(one.body.data), [...c.fields.keys()], 'single record carries every declared field')
      const missingRaw = d.id!.encoding === 'int' ? '999999999' : d.id!.encoding === 'base64url' ? Buffer.from('no.such.key').toString('base64url') : 'NoSuchRecord'
      const missing = await ts.get(recordPath(missingRaw), auth)
      t.equal(missing.status, 404, 'unknown id → 404')
      t.equal(missing.body.error.code, 'not_found')
      if (d.id!.encoding !== 'text') {
        const bad = await ts.get(recordPath(d.id!.encoding === 'int' ? 'abc' : '%21%21'), auth)
        t.equal(bad.status, 400, 'malformed id → 400')
        t.equal(bad.body.error.code, 'invalid_id')
      }
      const cross = await ts.get(recordPath(id), otherAuth)
      t.equal(cross.status, 404, 'another account cannot read the record')
    })
  }

  if (d.kind === 'singleton') {
    t.test(`${d.name}: singleton (§4.2)`, async (t) => {
      const r = await ts.get(listPath, auth)
      t.equal(r.status, 200)
      t.same(Object.keys(r.body.data), [...c.fields.keys()], 'singleton carries every declared field')
      t.equal(r.body.meta, undefined, 'no paging metadata')
      const paged = await ts.get(`${listPath}?limit=5`, auth)
      t.equal(paged.status, 400, 'singletons take no paging parameters')
      t.equal(paged.body.error.code, 'unknown_parameter')
    })
  }

  t.test(`${d.name}: access across accounts and users (§1, §4.2)`, async (t) => {
    const cross = await ts.get(listPath, otherAuth)
    t.equal(cross.status, 404, "another account's org is not found")
    t.equal(cross.body.error.code, 'not_found')
    t.notMatch(cross.text, /"data"/, 'nothing of the org leaks')
  })
}

t.test('user-scoped principal sees only granted orgs (§5 REST item 2)', async (t) => {
  const acctOrgs = ts.seed.orgs.filter((o) => o.accountId === main.accountId && o.scans > 0)
  t.ok(acctOrgs.length >= 2, 'seed has two scanned orgs in the main account')
  const [granted, denied] = acctOrgs
  const user = await createUser(ts.svc.db.sql, main.accountId, { email: 'scoped@example.com', name: 'Scoped' })
  await grantOrgAccess(ts.svc.db.sql, user.id, granted.salesforceId)
  const userAuth = await ts.keyHeader(main.accountId, user.id)
  const list = await ts.get('/v1/orgs?limit=200', userAuth)
  t.same(list.body.data.map((o: { salesforceId: string }) => o.salesforceId), [granted.salesforceId], 'only the granted org is listed')
  const ok = await ts.get(`/v1/orgs/${granted.salesforceId}/fields?limit=1`, userAuth)
  t.equal(ok.status, 200)
  const no = await ts.get(`/v1/orgs/${denied.salesforceId}/fields?limit=1`, userAuth)
  t.equal(no.status, 403, 'an org of the account not granted to the user → 403')
  t.equal(no.body.error.code, 'forbidden')
  const summary = await ts.get(`/v1/orgs/${denied.salesforceId}`, userAuth)
  t.equal(summary.status, 403, 'org summary of a non-granted org → 403')
})

t.test('orgs list and summary (§2, §4.2)', async (t) => {
  const list = await ts.get('/v1/orgs', auth)
  t.equal(list.status, 200)
  const mine = ts.seed.orgs.filter((o) => o.accountId === main.accountId).map((o) => o.salesforceId).sort()
  t.same(list.body.data.map((o: { salesforceId: string }) => o.salesforceId).sort(), mine, 'exactly the orgs of the caller account')
  const one = await ts.get(`/v1/orgs/${main.salesforceId}`, auth)
  t.equal(one.status, 200)
  t.match(one.body.data.issueCounts, { critical: Number, high: Number, medium: Number, low: Number }, 'issue counts by priority')
  t.type(one.body.data.resourceCounts.fields, 'number', 'record counts per resource')
  const short = await ts.get(`/v1/orgs/${main.salesforceId.slice(0, 15)}`, auth)
  t.same(short.body, one.body, 'the 15-character id addresses the same org')
  const wrongCase = await ts.get(`/v1/orgs/${main.salesforceId.slice(0, 15)}${main.salesforceId.slice(15).toLowerCase()}/fields?limit=1`, auth)
  t.equal(wrongCase.status, 200, 'the checksum suffix is case-insensitive')
  const bad = await ts.get('/v1/orgs/not-an-org-id', auth)
  t.equal(bad.status, 400, 'a malformed org id → 400')
  const cross = await ts.get(`/v1/orgs/${main.salesforceId}`, otherAuth)
  t.equal(cross.status, 404, "another account's org → 404")
})

t.test('an org without scans (§4.2 issues: 404 when the org has no scans)', async (t) => {
  const empty = ts.seed.orgs.find((o) => o.scans === 0)!
  const acctAuth = empty.accountId === main.accountId ? auth : otherAuth
  const r = await ts.get(`/v1/orgs/${empty.salesforceId}/issues`, acctAuth)
  t.equal(r.status, 404)
  t.equal(r.body.error.code, 'not_found')
  t.match(r.body.error.detail, /no completed scan/)
  const summary = await ts.get(`/v1/orgs/${empty.salesforceId}`, acctAuth)
  t.equal(summary.status, 200, 'the org itself is visible')
  t.equal(summary.body.data.latestScanId, null)
})

t.test('every answer of this suite matched the OpenAPI schema of its path and status (docs/openapi.json)', async (t) => {
  t.ok(schema.checked > 500, `${schema.checked} answers checked`)
  t.same(schemaProblems.slice(0, 20), [], 'no answer disagrees with the document')
})
