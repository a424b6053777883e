/**
 * The generated references cannot drift: the committed docs equal what `orgscan docs` generates now; the OpenAPI
 * document is valid OpenAPI 3.1 (an independent validator); it is served at GET /v1/openapi.json (unauthenticated,
 * free); and real responses of every list and get endpoint, and of the error paths, match the response schema of
 * their path and status (ajv), so the document and the server cannot disagree.
 */
import { t } from '../helpers/file-test.ts'
import { readFileSync } from 'node:fs'
import { Validator } from '@seriousme/openapi-schema-validator'
import { prompts, registry } from '../../resources/index.ts'
import { compileRegistry } from '../../runtime/core/registry.ts'
import { generateDocs } from '../../runtime/surfaces/docs/generate.ts'
import { buildOpenApi } from '../../runtime/surfaces/docs/openapi.ts'
import { startTestService } from '../helpers/service.ts'
import { openApiChecker, type OpenApiDoc } from '../helpers/openapi-check.ts'
import { embeddedRunOnly } from '../helpers/runs.ts'

embeddedRunOnly(t, 'The generated reference')

const resources = compileRegistry(registry)
const root = new URL('../../', import.meta.url)

t.test('the committed references equal the generator\'s output (run `npm run regen` after changing a declaration)', async (t) => {
  for (const [rel, text] of generateDocs(resources, prompts)) {
    let committed = ''
    try {
      committed = readFileSync(new URL(rel, root), 'utf8')
    } catch {
      committed = '(missing)'
    }
    t.ok(committed === text, `${rel} is up to date`)
  }
})

t.test('the OpenAPI document is valid OpenAPI 3.1', async (t) => {
  const validator = new Validator()
  const result = await validator.validate(buildOpenApi(resources))
  t.same(result.errors ?? [], [], 'no validation errors')
  t.equal(result.valid, true)
  t.equal(validator.version, '3.1')
})

t.test('no query parameter has a value "Try it out" would send in place of the list\'s own default', async (t) => {
  const doc = buildOpenApi(resources) as { paths: Record<string, Record<string, { parameters?: Array<{ name: string; in: string; example?: unknown; examples?: unknown; description?: string }> }>> }
  let filters = 0
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const op of Object.values(ops)) {
      for (const p of op.parameters ?? []) {
        if (p.in !== 'query') continue
        t.notOk('example' in p || 'examples' in p, `${path} ${p.name}: no example value (the reference page would pre-fill it)`)
        if (p.name === 'filter') filters++
      }
    }
  }
  t.ok(filters > 10, 'the filters were seen')
  const fields = doc.paths['/v1/orgs/{orgId}/fields'].get.parameters!.find((p) => p.name === 'filter')!
  t.match(fields.description, /Example: `[^`]+`\./, 'the example is in the description instead')
})

const ts = await startTestService(t)
const org = ts.seed.orgs.find((o) => o.large)!
const auth = await ts.keyHeader(org.accountId)

t.test('GET /v1/openapi.json: unauthenticated, free, the generated document', async (t) => {
  const before = (await ts.get('/v1/account/quota', auth)).body.data.rateLimit.daily.remaining
  const r = await ts.get('/v1/openapi.json')
  t.equal(r.status, 200)
  t.equal(r.headers.get('x-orgscan-api-version'), '1')
  t.equal(r.headers.get('x-ratelimit-limit'), null, 'not counted: no rate-limit headers')
  t.same(r.body, buildOpenApi(resources))
  t.equal((await ts.get('/v1/account/quota', auth)).body.data.rateLimit.daily.remaining, before, 'consumes nothing')
  t.equal((await ts.get('/v1/openapi.json?x=1')).status, 400, 'no parameters')
})

t.test('real responses match the document\'s schemas', async (t) => {
  const doc = buildOpenApi(resources) as OpenApiDoc
  const schema = openApiChecker(doc)
  const validatorFor = schema.validatorFor
  const check = async (template: string, url: string, expect: number) => {
    const r = await ts.get(url, auth)
    t.equal(r.status, expect, `${url} → ${expect}`)
    t.notOk(validatorFor(template, r.status)(r.body) ? undefined : schema.problem(url, r.status, r.body), `${url} matches ${template} ${r.status}`)
    return r.body
  }
  for (const c of resources) {
    const d = c.decl
    const base = d.scope === 'org' ? `/v1/orgs/${org.salesforceId}/${d.path}` : `/v1/${d.path}`
    const template = d.scope === 'org' ? `/v1/orgs/{orgId}/${d.path}` : `/v1/${d.path}`
    let concrete = base
    if (d.parent) {
      const parentList = await ts.get(`/v1/orgs/${org.salesforceId}/${resources.find((x) => x.name === d.parent!.resource)!.decl.path}?limit=1`, auth)
      concrete = base.replace(`{${d.parent.param}}`, String(parentList.body.data[0].id))
    }
    if (d.operations.list) {
      const body = await check(template, d.unpaged ? concrete : `${concrete}?limit=2`, 200)
      if (d.operations.get && d.kind !== 'singleton' && body.data.length) {
        const raw = String(body.data[0][d.id!.field])
        const id = d.id!.encoding === 'base64url' ? Buffer.from(raw).toString('base64url') : raw
        await check(`${template}/{${d.id!.param}}`, `${concrete}/${encodeURIComponent(id)}`, 200)
      }
      if (d.filterable?.length) await check(template, `${concrete}?filter=eq(`, 400)
    } else if (d.operations.get) {
      await check(template, concrete, 200)
    }
  }
  t.notOk(validatorFor('/v1/orgs/{orgId}/fields', 200)({ data: [{ bogus: 1 }], meta: { count: 1, hasMore: false }, links: { self: '/' } }), 'a record the document does not describe is rejected')
  t.notOk(validatorFor('/v1/orgs/{orgId}/fields', 400)({ error: { status: 400, title: 'Bad Request', detail: 'x', code: 'no_such_code' } }), 'so is an unknown error code')
  let examples = 0
  for (const [template, item] of Object.entries(doc.paths)) {
    const ok = item.get.responses['200']?.content?.['application/json']
    for (const ex of Object.values((ok?.examples ?? {}) as Record<string, { value: unknown }>)) {
      examples++
      t.ok(validatorFor(template, 200)(ex.value), `the example of ${template} matches its schema`)
    }
  }
  t.ok(examples >= resources.length, `every resource's paths carry a real example (${examples}; docs/examples.json)`)
  await check('/v1/orgs/{orgId}/fields', '/v1/orgs/00D000000000000AAA/fields', 404)
  await check('/v1/account/quota', '/v1/account/quota', 200)
})

t.test('the headers of real answers are the ones the document declares, with the meaning it gives', async (t) => {
  type Response = { headers?: Record<string, unknown>; $ref?: string }
  const doc = buildOpenApi(resources) as unknown as { paths: Record<string, { get: { responses: Record<string, Response> } }>; components: { headers: Record<string, { description: string }>; responses: Record<string, Response> } }
  const resolve = (r: Response): Response => (r.$ref ? doc.components.responses[r.$ref.replace('#/components/responses/', '')] : r)
  const path = `/v1/orgs/${org.salesforceId}/fields?limit=1`
  for (const [status, url, template] of [['200', path, '/v1/orgs/{orgId}/fields'], ['400', `${path}&filter=eq(`, '/v1/orgs/{orgId}/fields'], ['200', '/v1/account/quota', '/v1/account/quota']] as const) {
    const r = await fetch(ts.url + url, { headers: { authorization: auth } })
    t.equal(String(r.status), status, url)
    const declared = new Set(Object.keys(resolve(doc.paths[template].get.responses[status]).headers ?? {}).map((h) => h.toLowerCase()))
    // Every header of the service's own (Node's Date, Connection, Content-* aside) is declared for this answer.
    const sent = [...r.headers.keys()].filter((h) => h.startsWith('x-') || h.startsWith('ratelimit') || h === 'etag' || h === 'retry-after')
    for (const h of sent) t.ok(declared.has(h), `${url} ${status}: ${h} is declared`)
    t.ok(sent.includes('x-request-id'), 'an X-Request-Id among them')
  }
  const r = await fetch(ts.url + path, { headers: { authorization: auth } })
  const reset = Number(r.headers.get('x-ratelimit-reset'))
  t.ok(reset > Date.now() / 1000 && reset < Date.now() / 1000 + 32 * 86400, `X-RateLimit-Reset is a Unix time in seconds (${reset})`)
  t.match(doc.components.headers['X-RateLimit-Reset'].description, /Unix timestamp in seconds/, 'as the document says')
})
