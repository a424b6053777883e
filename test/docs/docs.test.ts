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
import { allOperations, valuesOf } from '../../runtime/core/operations.ts'
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

/** Every `$ref` reachable from the paths and the security requirements: what a linter calls used. */
function reachable(doc: Record<string, any>): Set<string> {
  const seen = new Set<string>()
  const walk = (x: unknown): void => {
    if (Array.isArray(x)) return x.forEach(walk)
    if (x === null || typeof x !== 'object') return
    for (const [k, v] of Object.entries(x)) {
      if (k !== '$ref' || typeof v !== 'string') {
        walk(v)
        continue
      }
      if (seen.has(v)) continue
      seen.add(v)
      walk(v.replace(/^#\//, '').split('/').reduce((n: any, part) => n?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], doc))
    }
  }
  walk(doc.paths)
  for (const req of doc.security ?? []) for (const name of Object.keys(req)) seen.add(`#/components/securitySchemes/${name}`)
  return seen
}

/** What an OpenAPI linter (Spectral's and Redocly's recommended rules) reported of the document, as checks. */
function lint(doc: Record<string, any>): string[] {
  const problems: string[] = []
  if (!doc.info?.license?.name) problems.push('info.license has no name')
  for (const [path, item] of Object.entries<Record<string, { responses: Record<string, unknown> }>>(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!Object.keys(op.responses).some((s) => /^4(\d\d|XX)$/.test(s))) problems.push(`${method.toUpperCase()} ${path} has no 4xx response`)
    }
  }
  const used = reachable(doc)
  for (const [kind, members] of Object.entries<Record<string, unknown>>(doc.components)) {
    for (const name of Object.keys(members)) if (!used.has(`#/components/${kind}/${name}`)) problems.push(`components.${kind}.${name} is never referenced`)
  }
  return problems
}

t.test('what an OpenAPI linter checks: a licence, a 4xx answer on every operation, every component referenced', async (t) => {
  const doc = buildOpenApi(resources) as Record<string, any>
  t.same(lint(doc), [], 'no problem')
  // The document's licence follows package.json's (docs/adr/0185-openapi-license-and-array-parameters.md).
  const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { license: string }
  t.equal(pkg.license, 'UNLICENSED', 'package.json grants no licence (a change there must change the document)')
  t.same(doc.info.license, { name: 'Proprietary' }, 'so the document names it so, with no SPDX identifier or URL')
  // The checks can fail: a document without a licence, without 4xx answers, or with a schema nobody uses.
  const { license: _l, ...info } = doc.info
  const broken = { ...doc, info, paths: { ...doc.paths, '/': { get: { ...doc.paths['/'].get, responses: { 200: doc.paths['/'].get.responses[200] } } } }, components: { ...doc.components, schemas: { ...doc.components.schemas, Spare: { type: 'object' } } } }
  t.same(lint(broken), ['info.license has no name', 'GET / has no 4xx response', 'components.schemas.Spare is never referenced'])
  // A list of fewer fields than its records, without a get, references no record schema: none is written.
  const listOnly = compileRegistry(registry.map((r) => (r.name === 'objectFields' ? { ...r, listFields: ['id', 'apiName', 'sobjectId'] } : r)) as typeof registry)
  t.same(lint(buildOpenApi(listOnly) as Record<string, any>), [], 'a list-only resource of fewer fields leaves no unused schema')
})

t.test('list parameters are advertised comma-separated, repeatable ones exploded', async (t) => {
  const doc = buildOpenApi(resources) as { paths: Record<string, { get: { parameters?: Array<{ name: string; in: string; style?: string; explode?: boolean; schema: { type?: string } }> } }> }
  const seen = { list: 0, repeat: 0 }
  for (const op of allOperations(resources)) {
    for (const q of op.queryParams) {
      const how = valuesOf(q)
      const p = doc.paths[op.path].get.parameters!.find((x) => x.name === q.name && x.in === 'query')!
      if (how === 'single') {
        t.notOk(p.schema.type === 'array' || 'explode' in p, `${op.path} ${q.name}: one value`)
        continue
      }
      seen[how]++
      t.same({ type: p.schema.type, style: p.style, explode: p.explode }, { type: 'array', style: 'form', explode: how === 'repeat' }, `${op.path} ${q.name}: ${how}`)
    }
  }
  t.ok(seen.list > 30 && seen.repeat > 0, `sort, fields and by everywhere, a repeatable parameter somewhere (${JSON.stringify(seen)})`)
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
  await check('/', '/', 200)
  await check('/', `/?${'a'.repeat(15_000)}`, 400)
  await check('/v1/openapi.json', '/v1/openapi.json?x=1', 400)
  await check('/v1/openapi.json', `/v1/openapi.json?${'a'.repeat(15_000)}`, 400)
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
