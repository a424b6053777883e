/**
 * Hot reads (docs/adr/0031-response-cache-keyed-by-scan.md, docs/adr/0034-etags-and-charged-304.md): a repeated read of
 * an org-scoped resource is answered from the process's response cache with exactly the bytes the database path gives,
 * on REST and MCP alike; it is still authenticated, access-checked and charged; an answer carries a strong ETag and
 * `Cache-Control: private`, and `If-None-Match` with the current tag gives a charged 304 with no body; the cache is
 * bounded by bytes (LRU) and a new scan imported in this process is served at once. Across processes:
 * test/processes/hot-reads-processes.test.ts.
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { splitAnswers } from './helpers/raw-http.ts'
import { registry } from '../resources/index.ts'
import { compileRegistry, type CompiledResource } from '../runtime/core/registry.ts'
import { importScan, type ScanBundle } from '../runtime/platform/import.ts'
import { startTestService, createUser, grantOrgAccess, type TestService } from './helpers/service.ts'
import { mcpClient } from './helpers/mcp.ts'

const resources = compileRegistry(registry)
const cached = await startTestService(t)
const uncached = await startTestService(t, { config: { cache: { maxBytes: 0, orgStateMs: 0 } } })
const org = cached.seed.orgs.find((o) => o.large)!
const other = cached.seed.orgs.find((o) => o.accountId !== org.accountId && o.scans > 0)!
const auth = await cached.keyHeader(org.accountId)
const authU = await uncached.keyHeader(org.accountId)

/** Every org-scoped read of the registry: a default list, a filtered and sorted page, and one record. */
async function requests(ts: TestService, a: string): Promise<string[]> {
  const base = `/v1/orgs/${org.salesforceId}/`
  const objectId = (await ts.get(`${base}objects?limit=1`, a)).body.data[0].id
  const out: string[] = []
  const byPath = new Map<string, Record<string, unknown>>()
  for (const c of resources as CompiledResource[]) {
    const d = c.decl
    if (d.scope !== 'org') continue
    const path = base + d.path.replace(/\{[A-Za-z]+\}/, String(objectId))
    if (d.operations.list) {
      out.push(path, d.unpaged ? path : `${path}?limit=3&offset=1`)
      if (d.sortable?.length) out.push(`${path}?sort=-${d.sortable[0]}${d.unpaged ? '' : '&limit=2'}`)
      const first = (await ts.get(path, a)).body.data?.[0]
      if (first) byPath.set(d.path, first)
    }
    if (d.operations.get) {
      if (d.kind === 'singleton') out.push(path)
      else {
        const id = byPath.get(d.path)?.[d.id!.field]
        if (id !== undefined) out.push(`${path}/${d.id!.encoding === 'base64url' ? Buffer.from(String(id)).toString('base64url') : encodeURIComponent(String(id))}`)
      }
    }
  }
  return out
}

t.test('a cached answer is byte-identical to the database\'s, for every org-scoped read', async (t) => {
  const paths = await requests(cached, auth)
  t.ok(paths.length > 40, `${paths.length} reads`)
  for (const p of paths) {
    const before = cached.svc.hot.responses.stats()
    const first = await cached.get(p, auth)
    const second = await cached.get(p, auth)
    const plain = await uncached.get(p, authU)
    const after = cached.svc.hot.responses.stats()
    t.equal(first.status, 200, p)
    t.ok(after.hits >= before.hits + 1, `${p}: the second read is a hit`)
    t.equal(second.text, first.text, `${p}: hit = miss, byte for byte`)
    t.equal(plain.text, first.text, `${p}: = a service without the cache`)
    t.equal(second.headers.get('etag'), first.headers.get('etag'), `${p}: one tag`)
    t.equal(plain.headers.get('etag'), first.headers.get('etag'), `${p}: the same tag without the cache`)
  }
  t.equal(uncached.svc.hot.responses.stats().hits, 0, 'the service without the cache never hits')
})

t.test('ETag, Cache-Control and 304: authenticated, access-checked, charged', async (t) => {
  const p = `/v1/orgs/${org.salesforceId}/fields?limit=5`
  const r = await cached.get(p, auth)
  const etag = r.headers.get('etag')!
  t.match(etag, /^"[A-Za-z0-9_-]{32}"$/, 'a strong tag')
  t.equal(r.headers.get('cache-control'), 'private, no-cache', 'private: a shared cache must not keep it')
  const remaining = Number(r.headers.get('x-ratelimit-remaining'))
  const nm = await cached.get(p, auth, { headers: { 'if-none-match': etag } })
  t.equal(nm.status, 304, 'the current tag → 304')
  t.equal(nm.text, '', 'no body')
  t.equal(nm.headers.get('etag'), etag)
  t.equal(nm.headers.get('cache-control'), 'private, no-cache')
  t.equal(nm.headers.get('x-orgscan-api-version'), '1')
  t.equal(Number(nm.headers.get('x-ratelimit-remaining')), remaining - 1, 'a 304 is charged one unit')
  t.equal((await cached.get(p, auth, { headers: { 'if-none-match': `W/${etag}, "other"` } })).status, 304, 'weak comparison, in a list')
  t.equal((await cached.get(p, auth, { headers: { 'if-none-match': '*' } })).status, 304, '*')
  t.equal((await cached.get(p, auth, { headers: { 'if-none-match': '"stale"' } })).status, 200, 'another tag → 200')
  t.not((await cached.get(`/v1/orgs/${org.salesforceId}/fields?limit=6`, auth)).headers.get('etag'), etag, 'another request, another tag')
  t.equal((await cached.get(p, null, { headers: { 'if-none-match': etag } })).status, 401, 'no credentials: 401, not 304')
  const stranger = await cached.keyHeader(other.accountId)
  const cross = await cached.get(p, stranger, { headers: { 'if-none-match': etag } })
  t.equal(cross.status, 404, "another account holding the tag: 404, not 304 (nothing about the org leaks)")
  t.equal(cross.headers.get('etag'), null)
  const orgs = await cached.get('/v1/orgs', auth)
  t.equal(orgs.headers.get('etag'), null, 'account-scoped lists are not tagged (they change with the account)')
  t.equal(orgs.headers.get('cache-control'), 'no-store')
})

t.test('the cache never answers a principal who may not see the org', async (t) => {
  const p = `/v1/orgs/${org.salesforceId}/issues`
  t.equal((await cached.get(p, auth)).status, 200)
  t.equal((await cached.get(p, auth)).status, 200, 'held in the cache now')
  const user = await createUser(cached.svc.db.sql, org.accountId, { email: `hot-${Date.now()}@example.com`, name: 'Hot' })
  const userAuth = await cached.keyHeader(org.accountId, user.id)
  const denied = await cached.get(p, userAuth)
  t.equal(denied.status, 403, 'a user of the account without a grant: 403')
  t.equal(denied.body.error.code, 'forbidden')
  await grantOrgAccess(cached.svc.db.sql, user.id, org.salesforceId)
  const granted = await cached.get(p, userAuth)
  t.equal(granted.status, 200, 'granted: the cached answer')
  t.equal(granted.text, (await cached.get(p, auth)).text)
  const stranger = await cached.keyHeader(other.accountId)
  t.equal((await cached.get(p, stranger)).status, 404, 'another account: 404')
})

t.test('MCP tool calls use the same cache', async (t) => {
  const { client } = await mcpClient(t, cached.svc.mcpUrl, auth)
  const args = { orgId: org.salesforceId, limit: 4, sort: '-id' }
  const rest = await cached.get(`/v1/orgs/${org.salesforceId}/objects?limit=4&sort=-id`, auth)
  const before = cached.svc.hot.responses.stats().hits
  const r = await client.callTool({ name: 'list_org_objects', arguments: args })
  t.ok(cached.svc.hot.responses.stats().hits > before, 'the tool call after the REST read is a hit')
  t.same(r.structuredContent, rest.body, 'the same answer')
  t.equal(cached.svc.hot.responses.stats().pinnedSegments, 0, 'the records it was written from are given back')
})

t.test('bounded by bytes: the least recently used go first', async (t) => {
  const small = await startTestService(t, { config: { cache: { maxBytes: 128 * 1024, orgStateMs: 0 } } })
  const a = await small.keyHeader(org.accountId)
  for (let offset = 0; offset < 400; offset += 20) t.equal((await small.get(`/v1/orgs/${org.salesforceId}/fields?limit=20&offset=${offset}`, a)).status, 200)
  const s = small.svc.hot.responses.stats()
  t.ok(s.evictions > 0, `evictions counted (${s.evictions})`)
  t.ok(s.bytes <= s.maxBytes, `within the bound (${s.bytes} ≤ ${s.maxBytes})`)
  const recent = small.svc.hot.responses.stats().hits
  await small.get(`/v1/orgs/${org.salesforceId}/fields?limit=20&offset=380`, a)
  t.equal(small.svc.hot.responses.stats().hits, recent + 1, 'the most recent answer is still held')
  const oldest = small.svc.hot.responses.stats().misses
  await small.get(`/v1/orgs/${org.salesforceId}/fields?limit=20&offset=0`, a)
  t.equal(small.svc.hot.responses.stats().misses, oldest + 1, 'the oldest was evicted')
})

/** Sends GETs of `paths` pipelined on one connection and gives the bodies of the answers once `resume()` lets it read. */
function pipelined(url: string, a: string, paths: string[]): { socket: Socket; bodies: Promise<string[]> } {
  const { hostname } = new URL(url)
  return pipelinedRaw(url, paths.map((p) => `GET ${p} HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: ${a}\r\n\r\n`))
}

/** Sends whole HTTP/1.1 requests pipelined on one connection; the bodies of the answers once `resume()` lets it read. */
function pipelinedRaw(url: string, requests: string[]): { socket: Socket; bodies: Promise<string[]> } {
  const { hostname, port } = new URL(url)
  const socket = connect(Number(port), hostname)
  socket.pause()
  socket.write(requests.join(''))
  const bodies = new Promise<string[]>((resolve, reject) => {
    let buf: Buffer = Buffer.alloc(0)
    const out: string[] = []
    socket.on('data', (d: Buffer) => {
      const split = splitAnswers(Buffer.concat([buf, d]))
      for (const a of split.answers) out.push(a.body)
      buf = split.rest
      if (out.length === requests.length) {
        socket.destroy()
        resolve(out)
      }
    })
    socket.on('error', reject)
  })
  return { socket, bodies }
}

async function until(check: () => boolean, ms = 5000): Promise<boolean> {
  for (const t0 = Date.now(); Date.now() - t0 < ms; await new Promise((r) => setTimeout(r, 10))) if (check()) return true
  return check()
}

t.test('a slow reader gets the bytes it asked for while the cache turns over; its segments are released', async (t) => {
  // 16 segments of 64 KB: the distinct pages below turn the unpinned ones over while the reader waits.
  const small = await startTestService(t, { config: { cache: { maxBytes: 1024 * 1024, orgStateMs: 0 } } })
  const a = await small.keyHeader(org.accountId)
  const page = (offset: number) => `/v1/orgs/${org.salesforceId}/fields?limit=100&offset=${offset}`
  const paths = [0, 100, 200].map(page)
  const expected = new Map<string, string>()
  for (const p of paths) {
    const r = await small.get(p, a)
    t.equal(r.status, 200)
    t.ok(r.text.length > 16_000 && r.text.length < 60_000, `a page of ${r.text.length} bytes: kept in one segment, larger than the socket takes at once`)
    expected.set(p, r.text)
  }
  // About 14 MB: more than the connection's socket buffers take (the server's send buffer grows to tcp_wmem's maximum,
  // 4 MB by default; a receiver that does not read keeps a small one), so answers wait in the server.
  const asked = Array.from({ length: 300 }, (_, i) => paths[i % paths.length])
  const stats = () => small.svc.hot.responses.stats()
  const slow = pipelined(small.url, a, asked)
  t.ok(await until(() => stats().pinnedSegments > 0), `segments pinned by the answers waiting for the reader (${stats().pinnedSegments})`)
  const evictions = stats().evictions
  for (let offset = 1; offset <= 40; offset++) t.equal((await small.get(page(offset), a)).status, 200)
  t.ok(stats().evictions > evictions, `the cache turned over meanwhile (${stats().evictions - evictions} evictions)`)
  slow.socket.resume()
  const bodies = await slow.bodies
  t.equal(bodies.length, asked.length)
  t.ok(bodies.every((b, i) => b === expected.get(asked[i])), 'every answer is the bytes of the page asked for')
  t.ok(await until(() => stats().pinnedSegments === 0), 'no segment stays pinned once the reader has everything')

  // A reader that goes away without reading releases what its answers held.
  const gone = pipelined(small.url, a, asked)
  t.ok(await until(() => stats().pinnedSegments > 0), 'pinned while the answers wait')
  gone.socket.destroy()
  t.ok(await until(() => stats().pinnedSegments === 0), 'released when the connection closes')
  // Its answers queued behind the first never closed themselves: they are no longer counted in flight either.
  t.ok(await until(() => small.svc.inFlight() === 0), 'no request is left in flight')
})

t.test('MCP: a slow reader of tool calls gets the records asked for while the cache turns over; nothing stays pinned', async (t) => {
  // MCP answers written from the cache's own bytes, as REST's are (runtime/surfaces/mcp/tool-results.ts RawJson).
  const small = await startTestService(t, { config: { cache: { maxBytes: 1024 * 1024, orgStateMs: 0 } } })
  const a = await small.keyHeader(org.accountId)
  const { hostname } = new URL(small.url)
  const mcpPath = new URL(small.svc.mcpUrl).pathname
  const headers = { authorization: a, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
  const init = await fetch(small.svc.mcpUrl, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'slow', version: '1' } } }) })
  const sid = init.headers.get('mcp-session-id')
  t.equal(init.status, 200)
  t.ok(sid, 'a session')
  const call = (id: number, offset: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'list_org_fields', arguments: { orgId: org.salesforceId, limit: 100, offset } } })
  const request = (body: string) =>
    `POST ${mcpPath} HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: ${a}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: ${sid}\r\nMcp-Protocol-Version: 2025-11-25\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  const offsets = [0, 100, 200]
  const expected = new Map<number, unknown>()
  for (const offset of offsets) {
    const r = await small.get(`/v1/orgs/${org.salesforceId}/fields?limit=100&offset=${offset}`, a)
    t.equal(r.status, 200)
    expected.set(offset, r.body)
  }
  const stats = () => small.svc.hot.responses.stats()
  const hits = stats().hits
  const asked = Array.from({ length: 240 }, (_, i) => offsets[i % offsets.length])
  const slow = pipelinedRaw(small.url, asked.map((offset, i) => request(call(i + 2, offset))))
  t.ok(await until(() => stats().pinnedSegments > 0), `segments pinned by the tool answers waiting for the reader (${stats().pinnedSegments})`)
  const evictions = stats().evictions
  for (let offset = 1; offset <= 40; offset++) t.equal((await small.get(`/v1/orgs/${org.salesforceId}/fields?limit=100&offset=${offset}`, a)).status, 200)
  t.ok(stats().evictions > evictions, `the cache turned over meanwhile (${stats().evictions - evictions} evictions)`)
  slow.socket.resume()
  const bodies = (await slow.bodies).map((b) => JSON.parse(b) as { id: number; result: { structuredContent: unknown; isError?: boolean } })
  t.equal(bodies.length, asked.length)
  t.ok(stats().hits - hits >= asked.length, 'the tool calls were answered from the cache')
  t.ok(bodies.every((b, i) => b.id === i + 2 && !b.result.isError), 'every call answered, in order')
  t.ok(bodies.every((b, i) => JSON.stringify(b.result.structuredContent) === JSON.stringify(expected.get(asked[i]))), 'every answer holds the records asked for, as REST gives them')
  t.ok(await until(() => stats().pinnedSegments === 0), 'no segment stays pinned once the reader has everything')
  t.ok(await until(() => small.svc.inFlight() === 0), 'no request is left in flight')
})

t.test('a reader that stops reading is cut off after ORGSCAN_IDLE_SOCKET_MS, and what it pinned is released', async (t) => {
  const idle = await startTestService(t, { config: { cache: { maxBytes: 1024 * 1024, orgStateMs: 0 }, idleSocketMs: 500 } })
  const a = await idle.keyHeader(org.accountId)
  const p = `/v1/orgs/${org.salesforceId}/fields?limit=100`
  t.equal((await idle.get(p, a)).status, 200)
  const stalled = pipelined(idle.url, a, Array.from({ length: 300 }, () => p))
  stalled.bodies.catch(() => undefined) // cut off: never all of them
  t.ok(await until(() => idle.svc.hot.responses.stats().pinnedSegments > 0), 'its answers wait, pinned')
  t.ok(await until(() => idle.svc.hot.responses.stats().pinnedSegments === 0 && idle.svc.inFlight() === 0), 'released, nothing in flight, half a second after it stopped')
  // The client learns it only by reading: what the kernel held, then the end of the connection.
  const closed = new Promise<void>((r) => stalled.socket.once('close', () => r()))
  stalled.socket.on('error', () => undefined)
  stalled.socket.resume()
  const gotAll = await Promise.race([stalled.bodies.then(() => true, () => false), closed.then(() => false)])
  t.equal(gotAll, false, 'the server had closed the connection before all 300 answers')
  t.equal((await idle.get(p, a)).status, 200, 'other clients are served as before')
})

t.test('a new scan imported in this process is served at once (production org-state bound)', async (t) => {
  const ts = await startTestService(t, { config: { authCacheMs: 5000, cache: { maxBytes: 64 * 1024 * 1024, orgStateMs: 60_000 } } })
  const bundle = JSON.parse(readFileSync(new URL('../examples/scan-bundle.json', import.meta.url), 'utf8')) as ScanBundle
  const acct = org.accountId
  await importScan(ts.svc.db.sql, ts.svc.ctx.resources, acct, bundle)
  ts.svc.adminChanged({ account: acct })
  const a = await ts.keyHeader(acct)
  const p = `/v1/orgs/${bundle.org.salesforceId}/fields`
  const first = await ts.get(p, a)
  t.equal(first.status, 200)
  t.equal((await ts.get(p, a)).text, first.text, 'served (and held) for the first scan')
  const next = structuredClone(bundle)
  next.scan = { ...next.scan, startedAt: '2026-10-27T03:48:00Z', completedAt: '2026-10-27T03:52:00Z' }
  ;(next.data.fields as unknown[]).pop()
  // As the admin socket does for `orgscan import` on this process: the import, then the change reported.
  await importScan(ts.svc.db.sql, ts.svc.ctx.resources, acct, next)
  ts.svc.adminChanged({ account: acct })
  const after = await ts.get(p, a)
  t.equal(after.body.data.length, first.body.data.length - 1, 'the new scan at once')
  t.not(after.headers.get('etag'), first.headers.get('etag'), 'with a new tag')
  t.equal((await ts.get(p, a, { headers: { 'if-none-match': first.headers.get('etag')! } })).status, 200, "the old scan's tag no longer matches")
})
