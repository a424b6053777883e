/**
 * The typed client (client/index.ts, the package `@orgscan/client`) from its sources, against the real service: lists,
 * every page through `all()`, single records (Base64URL ids encoded for the caller), singletons, typed errors with the
 * envelope's code, user tokens; and its backoff on both 429 forms against a small server that answers 429 first (with
 * and without Retry-After). The package as a user installs it, and the README's example: test/install/client-package.test.ts.
 */
import { t } from '../helpers/file-test.ts'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { OrgscanClient, OrgscanError } from '../../client/index.ts'
import { startTestService } from '../helpers/service.ts'
import { createKey } from '../../runtime/platform/admin.ts'
import { registry } from '../../resources/index.ts'
import { compileRegistry } from '../../runtime/core/registry.ts'
import { camel } from '../../runtime/surfaces/docs/client-types.ts'
import { embeddedRunOnly } from '../helpers/runs.ts'

embeddedRunOnly(t, 'The typed client')

const ts = await startTestService(t)
const org = ts.seed.orgs.find((o) => o.large)!
const key = await createKey(ts.svc.db.sql, ts.svc.pepper, org.accountId)
const orgscan = new OrgscanClient({ baseUrl: ts.url, apiKey: { keyId: key.keyId, secret: key.secret } })
const orgId = org.salesforceId

/** The error a promise rejects with (or undefined). */
async function caught(p: Promise<unknown>): Promise<OrgscanError | undefined> {
  try {
    await p
    return undefined
  } catch (e) {
    return e as OrgscanError
  }
}

t.test('lists, pages, records, singletons', async (t) => {
  const orgs = await orgscan.list('orgs')
  t.ok(orgs.data.some((o) => o.salesforceId === orgId))
  const page = await orgscan.list('fields', { orgId, limit: 3, sort: '-id' })
  t.equal(page.data.length, 3)
  const rest = await ts.get(`/v1/orgs/${orgId}/fields?limit=3&sort=-id`, `Basic ${Buffer.from(`${key.keyId}:${key.secret}`).toString('base64')}`)
  t.same(page, rest.body, 'the same body as REST')
  let n = 0
  const ids = new Set<number>()
  for await (const f of orgscan.all('objects', { orgId, limit: 7 })) {
    n++
    ids.add(f.id)
  }
  const total = (await orgscan.list('objects', { orgId, limit: 200 })).data.length
  t.equal(n, total, 'all() walks every page')
  t.equal(ids.size, n, 'no record twice')
  const field = await orgscan.get('fields', { orgId, id: page.data[0].id })
  t.equal(field.id, page.data[0].id)
  const issue = (await orgscan.list('issues', { orgId, limit: 1 })).data[0]
  const rec = await orgscan.get('recommendations', { orgId, id: issue.issueKey! })
  t.equal(rec.issueKey, issue.issueKey, 'a Base64URL id is encoded by the client')
  const cloud = await orgscan.get('cloudUsage', { orgId })
  t.ok(cloud, 'a singleton')
  const nested = await orgscan.list('objectFields', { orgId, objectId: (await orgscan.list('objects', { orgId, limit: 1 })).data[0].id, limit: 2 })
  t.ok(Array.isArray(nested.data), 'a nested list')
})

t.test('one named method per endpoint, for every resource of the registry: the REST body, the REST record', async (t) => {
  const resources = compileRegistry(registry)
  const auth = `Basic ${Buffer.from(`${key.keyId}:${key.secret}`).toString('base64')}`
  const methods = orgscan as unknown as Record<string, (p: Record<string, unknown>) => any>
  const objectId = (await orgscan.listOrgObjects({ orgId, limit: 1 })).data[0].id
  const firstByPath = new Map<string, Record<string, unknown>>()
  let named = 0
  for (const c of resources) {
    const d = c.decl
    const base = d.scope === 'org' ? `/v1/orgs/${orgId}/${d.path.replace(/\{[A-Za-z]+\}/, String(objectId))}` : `/v1/${d.path}`
    const pathParams: Record<string, unknown> = d.scope === 'org' ? { orgId } : {}
    if (d.parent) pathParams[d.parent.param] = objectId
    if (d.operations.list) {
      const list = methods[camel(d.mcp.list!)], all = methods[camel(d.mcp.list!).replace(/^list/, 'all')]
      t.type(list, 'function', `${camel(d.mcp.list!)} exists`)
      const q = d.unpaged ? {} : { limit: 3 }
      const page = await list.call(orgscan, { ...pathParams, ...q })
      t.same(page, (await ts.get(`${base}${d.unpaged ? '' : '?limit=3'}`, auth)).body, `${camel(d.mcp.list!)}: the REST body`)
      let n = 0
      for await (const _ of all.call(orgscan, { ...pathParams, ...(d.unpaged ? {} : { limit: 200 }) })) n++
      let total = 0
      for (let offset = 0; ; offset += 200) {
        const r = (await ts.get(`${base}${d.unpaged ? '' : `?limit=200&offset=${offset}`}`, auth)).body
        total += r.data.length
        if (!r.meta.hasMore) break
      }
      t.equal(n, total, `${camel(d.mcp.list!).replace(/^list/, 'all')}: every record (${total})`)
      if (page.data.length) firstByPath.set(d.path, page.data[0])
      named += 2
    }
    if (d.operations.get) {
      const get = methods[camel(d.mcp.get!)]
      t.type(get, 'function', `${camel(d.mcp.get!)} exists`)
      const params: Record<string, unknown> = { ...pathParams }
      let path = base
      if (d.id?.param === 'orgId') {
        params.orgId = orgId
        path = `/v1/orgs/${orgId}`
      } else if (d.kind !== 'singleton') {
        const id = firstByPath.get(d.path)![d.id!.field]
        params[d.id!.param] = id
        path += `/${d.id!.encoding === 'base64url' ? Buffer.from(String(id)).toString('base64url') : encodeURIComponent(String(id))}`
      }
      t.same(await get.call(orgscan, params), (await ts.get(path, auth)).body.data, `${camel(d.mcp.get!)}: the REST record`)
      named++
    }
  }
  t.ok(named >= resources.length, `${named} named methods called`)
  // And typed: these lines are checked by the type-checker (a wrong parameter or field does not compile).
  const field = await orgscan.getOrgField({ orgId, fieldId: (await orgscan.listOrgFields({ orgId, limit: 1 })).data[0].id })
  t.type(field.percentPopulated, 'number')
  const issue = (await orgscan.listOrgIssues({ orgId, limit: 1 })).data[0]
  const recommendation = await orgscan.getOrgIssueRecommendation({ orgId, issueKey: issue.issueKey! })
  t.equal(recommendation.issueKey, issue.issueKey)
  // Structured fields carry their declared shape, not an opaque record: arrays are arrays, with typed members.
  const urls: string[] = recommendation.references.map((r) => r.url)
  t.ok(urls.every((u) => typeof u === 'string'), 'references: an array of {title, url}')
  const affected: number = recommendation.affectedItems.length
  t.type(affected, 'number')
  const cloud = await orgscan.getOrgCloudUsage({ orgId })
  const clouds: string[] = cloud.clouds.map((c) => c.cloud)
  t.ok(clouds.length > 0, 'cloudUsage.clouds: an array of clouds')
  const counts: number[] = cloud.clouds.flatMap((c) => c.keyObjects.map((k) => k.recordCount))
  t.ok(counts.every((n) => typeof n === 'number'))
  const overview = await orgscan.getOrgLoginActivityOverview({ orgId })
  const month: number | undefined = overview.windows.find((w) => w.days === 30)?.loggedIn
  t.type(month, 'number', 'loginActivity/overview windows: typed members')
})

t.test('typed errors', async (t) => {
  const parse = await caught(orgscan.list('fields', { orgId, filter: 'eq(' }))
  t.ok(parse instanceof OrgscanError)
  t.match(parse, { status: 400, code: 'filter_parse_error' })
  t.match(await caught(orgscan.get('fields', { orgId, id: 999_999_999 })), { status: 404, code: 'not_found' })
  const bad = new OrgscanClient({ baseUrl: ts.url, apiKey: { keyId: key.keyId, secret: 'x'.repeat(43) } })
  t.match(await caught(bad.list('orgs')), { status: 401, code: 'unauthorized' })
})

t.test('backoff on both 429 forms', async (t) => {
  let calls = 0
  const mode: { kind: 'retry-after' | 'bare' | 'always' } = { kind: 'retry-after' }
  const server = createServer((_req, res) => {
    calls++
    if (mode.kind === 'always' || calls <= 2) {
      if (mode.kind === 'bare') {
        res.writeHead(429, { 'content-length': '0' })
        return res.end()
      }
      const body = JSON.stringify({ error: { status: 429, title: 'Too Many Requests', detail: 'Slow down.', code: 'rate_limited' } })
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': mode.kind === 'always' ? '30' : '1', 'content-length': Buffer.byteLength(body) })
      return res.end(body)
    }
    const body = JSON.stringify({ data: [], meta: { count: 0, hasMore: false }, links: { self: '/v1/orgs' } })
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
    res.end(body)
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  t.teardown(() => server.close())
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const client = new OrgscanClient({ baseUrl: base, apiKey: { keyId: 'k', secret: 's' }, baseDelayMs: 20, maxWaitMs: 5_000 })
  let t0 = Date.now()
  t.equal((await client.list('orgs')).meta.count, 0)
  t.equal(calls, 3, 'two 429s with Retry-After, then the answer')
  t.ok(Date.now() - t0 >= 1900, 'Retry-After is honoured')
  calls = 0
  mode.kind = 'bare'
  t0 = Date.now()
  await client.list('orgs')
  t.equal(calls, 3, 'bare 429s (no Retry-After) are retried with backoff')
  t.ok(Date.now() - t0 < 1500, 'short exponential delays, not a Retry-After-like second each')
  calls = 0
  mode.kind = 'always'
  t.match(await caught(client.list('orgs')), { status: 429, code: 'rate_limited', retryAfterSeconds: 30 }, 'gives up when the wait would pass maxWaitMs')
  t.equal(calls, 1, 'without waiting 30 s')
})
