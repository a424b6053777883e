/**
 * Prometheus metrics on the admin listener only (docs/operating.md "Metrics"): requests by route template and status,
 * latency, quota decisions by window, MCP tool calls by tool and error code, the response cache's counts; the public
 * port has no /metrics, and without ORGSCAN_ADMIN_PORT there is no admin listener.
 */
import { t } from '../helpers/file-test.ts'
import { startTestService } from '../helpers/service.ts'
import { mcpClient } from '../helpers/mcp.ts'
import { updateAccount } from '../../runtime/platform/admin.ts'

/** The value of one sample line (`name{labels} value`), or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue
    const m = /^([a-z_]+)(\{(.*)\})? (\S+)$/.exec(line)
    if (!m || m[1] !== name) continue
    const got = Object.fromEntries([...(m[3] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]))
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[4])
  }
  return undefined
}

t.test('the admin listener serves the metrics; the public port does not', async (t) => {
  const ts = await startTestService(t, { config: { admin: { port: 0, host: '127.0.0.1' } } })
  t.match(ts.svc.adminUrl, /^http:\/\/127\.0\.0\.1:\d+$/, 'on loopback')
  const org = ts.seed.orgs.find((o) => o.large)!
  const auth = await ts.keyHeader(org.accountId)
  const fields = `/v1/orgs/${org.salesforceId}/fields?limit=3`
  for (let i = 0; i < 3; i++) t.equal((await ts.get(fields, auth)).status, 200)
  t.equal((await ts.get('/v1/nowhere', auth)).status, 404)
  const { client } = await mcpClient(t, ts.svc.mcpUrl, auth)
  await client.callTool({ name: 'list_org_objects', arguments: { orgId: org.salesforceId, limit: 1 } })
  await client.callTool({ name: 'list_org_objects', arguments: { orgId: org.salesforceId, filter: 'eq(' } })
  // A small account, to see a rejection by its window.
  const small = ts.seed.accounts.find((a) => a.id !== org.accountId)!
  await updateAccount(ts.svc.db.sql, small.id, { dailyLimit: 1 })
  ts.svc.ctx.quota.invalidate?.(small.id)
  const smallAuth = await ts.keyHeader(small.id)
  await ts.get('/v1/orgs', smallAuth)
  t.equal((await ts.get('/v1/orgs', smallAuth)).status, 429)

  const r = await fetch(`${ts.svc.adminUrl}/metrics`)
  t.equal(r.status, 200)
  t.match(r.headers.get('content-type'), /^text\/plain/)
  const text = await r.text()
  t.equal(sample(text, 'orgscan_http_requests_total', { method: 'GET', route: '/v1/orgs/:orgId/fields', status: '200' }), 3, 'requests by route template and status')
  t.equal(sample(text, 'orgscan_http_requests_total', { route: '(unmatched)', status: '404' }), 1)
  t.ok((sample(text, 'orgscan_http_request_duration_seconds_count', { route: '/v1/orgs/:orgId/fields' }) ?? 0) >= 3, 'latency histogram')
  t.ok((sample(text, 'orgscan_quota_decisions_total', { result: 'admitted', window: 'daily' }) ?? 0) >= 5, 'admissions by window')
  t.equal(sample(text, 'orgscan_quota_decisions_total', { result: 'rejected', window: 'daily' }), 1, 'the rejection and its window')
  t.equal(sample(text, 'orgscan_mcp_tool_calls_total', { tool: 'list_org_objects', error: 'ok' }), 1, 'tool calls')
  t.equal(sample(text, 'orgscan_mcp_tool_calls_total', { tool: 'list_org_objects', error: 'bad_filter' }), 1, 'by error code')
  t.ok((sample(text, 'orgscan_response_cache_hits_total') ?? 0) >= 2, 'cache hits (the repeated list)')
  t.ok((sample(text, 'orgscan_response_cache_bytes') ?? 0) > 0, 'cache size')
  const segments = sample(text, 'orgscan_response_cache_segment_bytes') ?? 0
  t.ok(segments > 0 && segments <= ts.svc.hot.responses.maxBytes, `the cache's allocated memory, within its bound (${segments})`)
  const written = sample(text, 'orgscan_response_cache_segment_bytes_written') ?? 0
  const stats = ts.svc.hot.responses.stats()
  t.ok(written > 0 && written < (sample(text, 'orgscan_response_cache_bytes') ?? 0), `the segments' written bytes: the records, under what the bound counts (${written})`)
  t.equal(sample(text, 'orgscan_response_cache_entries'), stats.entries, 'entries held')
  t.equal(sample(text, 'orgscan_http_requests_in_flight'), 0, 'no public request in flight between requests (the scrape is on the admin listener)')
  t.ok(sample(text, 'orgscan_process_resident_memory_bytes'), 'process metrics')
  t.ok((sample(text, 'orgscan_db_read_query_duration_seconds_count') ?? 0) >= 3, 'read query time (the misses)')
  t.equal(sample(text, 'orgscan_db_read_queries_in_flight'), 0, 'none running now')
  t.ok((sample(text, 'orgscan_db_read_pool_size') ?? 0) >= 1, 'the read pool size')
  t.notOk(text.includes(org.salesforceId), 'no org id in any label')
  t.equal((await ts.get('/metrics')).status, 404, 'not on the public port')
  t.equal((await fetch(`${ts.svc.adminUrl}/v1/orgs`)).status, 404, 'the admin listener serves nothing else')
})

t.test('no admin listener unless ORGSCAN_ADMIN_PORT is set', async (t) => {
  const ts = await startTestService(t)
  t.equal(ts.svc.adminUrl, undefined)
})
