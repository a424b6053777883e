/**
 * Errors that teach, on REST: an unknown filter or sort field names the nearest one in `detail` and points at its name
 * (`offset`); a limit above 200 is still clamped; an org that is not found is echoed, with where the caller's orgs are
 * listed.
 */
import { t } from '../helpers/file-test.ts'
import { startTestService } from '../helpers/service.ts'

const ts = await startTestService(t, { seedScale: 0.02 })
const org = ts.seed.orgs[0]
const auth = await ts.keyHeader(org.accountId)
const fields = `/v1/orgs/${org.salesforceId}/fields`
const q = (params: Record<string, string>) => `?${new URLSearchParams(params)}`

t.test('an unknown filter field: did you mean, and the offset of its name', async (t) => {
  for (const [filter, field, near] of [
    ['eq(apiname,Name)', 'apiname', 'apiName'],
    ['and(eq(isCustom,true),  isNull(namespce))', 'namespce', 'namespace'],
    ['or(eq(id,1),in( labl ,a,b))', 'labl', 'label'],
  ] as const) {
    const r = await ts.get(fields + q({ filter }), auth)
    t.equal(r.status, 400, filter)
    t.match(r.body.error, { code: 'unknown_filter_field', parameter: 'filter', field, offset: filter.indexOf(field) }, `${filter}: the offset of the name`)
    t.equal(r.body.error.detail, `Unknown filter field "${field}"; did you mean "${near}"?`)
    t.ok(r.body.error.allowed.includes(near), 'allowed still lists the filterable fields')
  }
  const far = await ts.get(fields + q({ filter: 'eq(colour,red)' }), auth)
  t.equal(far.body.error.detail, 'Unknown filter field "colour"', 'no guess when no name is close')
  t.equal(far.body.error.offset, 3)
})

t.test('an unknown sort field: did you mean, and the offset of its name', async (t) => {
  const r = await ts.get(fields + q({ sort: 'label, -percentpopulated' }), auth)
  t.equal(r.status, 400)
  t.match(r.body.error, { code: 'unknown_sort_field', parameter: 'sort', field: 'percentpopulated', offset: 8 })
  t.equal(r.body.error.detail, 'Cannot sort by "percentpopulated"; did you mean "percentPopulated"?')
  const far = await ts.get(fields + q({ sort: 'colour' }), auth)
  t.match(far.body.error, { detail: 'Cannot sort by "colour".', offset: 0 })
})

t.test('REST still clamps a limit above 200', async (t) => {
  const r = await ts.get(fields + q({ limit: '500' }), auth)
  t.equal(r.status, 200)
  t.match(r.body.meta, { limit: 200, requestedLimit: 500 })
})

t.test("an org that is not found is echoed, with where the caller's orgs are listed", async (t) => {
  const other = ts.seed.orgs.find((o) => o.accountId !== org.accountId)!
  for (const id of ['00D000000000000EAA', '00D000000000000', other.salesforceId]) {
    for (const path of [`/v1/orgs/${id}/fields`, `/v1/orgs/${id}`]) {
      const r = await ts.get(path, auth)
      t.equal(r.status, 404, path)
      t.same(r.body.error, { status: 404, title: 'Not Found', code: 'not_found', parameter: 'orgId', detail: `Org ${id} not found; GET /v1/orgs (list_orgs) lists the orgs you can see.` }, path)
    }
  }
  const noScan = await ts.get(`/v1/orgs/${org.salesforceId}/fields/999999999`, auth)
  t.notMatch(noScan.body.error.detail, /list_orgs/, 'a record that is not found is not an org')
})

t.test('an 18-character org id whose checksum is wrong: a 404 that says so', async (t) => {
  // Still a 404 (docs/adr/0002-strict-parameters-ids-and-ordering.md); the detail says which characters are wrong,
  // arithmetic on the id sent that tells nothing of which orgs exist.
  for (const [id, sum] of [[org.salesforceId.slice(0, 15) + 'ZZZ', org.salesforceId.slice(15)], ['00D000000000000AAA', 'EAA']]) {
    const r = await ts.get(`/v1/orgs/${id}/fields`, auth)
    t.equal(r.status, 404, id)
    t.same(r.body.error, {
      status: 404, title: 'Not Found', code: 'not_found', parameter: 'orgId',
      detail: `Org ${id} not found: the last 3 characters of an 18-character org id are the checksum of its first 15, here ${sum}, not ${id.slice(15)}; GET /v1/orgs (list_orgs) lists the orgs you can see.`,
    }, id)
  }
})

t.test('a malformed org id: a 400 that says what is wrong with it', async (t) => {
  for (const [id, detail] of [
    ['00D000000000000-AA', "orgId contains '-': an org id has only letters and digits."],
    ['not%20an%20id', 'orgId contains " ": an org id has only letters and digits.'],
    ['00D0000000000000', 'orgId has 16 characters: an org id has 15, or 18 with its checksum.'],
  ]) {
    const r = await ts.get(`/v1/orgs/${id}/fields`, auth)
    t.equal(r.status, 400, id)
    t.same(r.body.error, { status: 400, title: 'Bad Request', code: 'invalid_id', parameter: 'orgId', detail }, id)
  }
})
