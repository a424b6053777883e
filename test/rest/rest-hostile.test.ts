/** Hostile and malformed input never yields a 5xx, a stack trace or SQL text (§7). */
import { t } from '../helpers/file-test.ts'
import { request } from 'node:http'
import { connect } from 'node:net'
import { startTestService } from '../helpers/service.ts'
import { splitAnswers } from '../helpers/raw-http.ts'

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
    [`${base}/fields?fields=colour`, 400, 'unknown_field'],
    [`${base}/issues?fields=updatedAt`, 400, 'unknown_field'],
    [`${base}/issues?fields=${enc('title,title')}`, 400, 'invalid_parameter'],
    [`${base}/issues?fields=${enc('title,priority,title')}`, 400, 'invalid_parameter'],
    [`${base}/fields?sort=${enc('label,-label')}`, 400, 'invalid_parameter'],
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

t.test('issues never carry updatedAt; fields selects a sparse fieldset, with the record key (§4.1, §9 changelog)', async (t) => {
  const r = await ts.get(`${base}/issues?limit=5`, auth)
  t.equal(r.status, 200)
  t.ok(r.body.data.length > 0)
  t.ok(r.body.data.length > 0, 'issues listed')
  t.ok(r.body.data.every((i: Record<string, unknown>) => !('updatedAt' in i)), 'no updatedAt')
  const s = await ts.get(`${base}/issues?fields=${enc('priority,title')}&limit=5`, auth)
  // The record's key (issueKey) comes too, so that an answer of a few fields still names its records.
  t.same(Object.keys(s.body.data[0]), ['issueKey', 'title', 'priority'], 'the requested fields and the key, in declaration order')
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
  for (const path of [`${base}/fields/%FF`, '/v1/orgs/%E0%A4%A/fields', `${base}/issues/%C0%AF`]) {
    const bad = await ts.get(path, auth)
    t.equal(bad.status, 400, `${path}: a path that is not percent-encoded UTF-8 is the request's fault, not a missing endpoint`)
    t.match(bad.body.error, { code: 'invalid_parameter', detail: 'The request path is not valid percent-encoded UTF-8.' })
    t.equal(bad.headers.get('x-orgscan-api-version'), '1', 'with the version headers of /v1')
  }
  const someId = String((await ts.get(`${base}/fields?limit=1`, auth)).body.data[0].id)
  const encoded = await ts.get(`${base}/fields/${[...someId].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('')}`, auth)
  t.equal(encoded.status, 200, 'a path percent-encoded correctly is an ordinary lookup')
  t.equal(String(encoded.body.data.id), someId)
  const long = await ts.get(`${base}/fields?filter=${'a'.repeat(15000)}`, auth)
  t.equal(long.status, 400, 'URL over 14 KB → 400')
  t.match(long.body.error.detail, /URL exceeds/)
  let hugeId: string | undefined
  const huge = await new Promise<number>((resolve) => {
    const req = request(ts.url + '/v1/orgs', { headers: { authorization: auth, 'x-big': 'a'.repeat(21000) } }, (res) => {
      res.resume()
      hugeId = res.headers['x-request-id'] as string | undefined
      resolve(res.statusCode ?? 0)
    })
    req.on('error', () => resolve(-1))
    req.end()
  })
  t.equal(huge, 431, 'oversized headers → 431')
  t.match(hugeId, /^[0-9a-f-]{36}$/, 'with a request id, as every answer')
  const withBody = await new Promise<{ status: number; connection?: string; body: string }>((resolve, reject) => {
    const req = request(ts.url + '/v1/orgs', { method: 'GET', headers: { authorization: auth, 'content-type': 'application/json', 'content-length': String(5_000_000) } }, (res) => {
      let body = ''
      res.on('data', (d) => (body += d))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body }))
    })
    req.on('error', reject)
    req.write('{"filter":"eq(name,\'x\')"')
  })
  t.equal(withBody.status, 413, 'a GET with a body is refused before the body is read')
  t.match(JSON.parse(withBody.body).error, { code: 'payload_too_large', detail: 'A GET request takes no body; send the parameters in the query string.' })
  t.equal(withBody.connection, 'close', 'and its connection closes rather than take in 5 MB')
  t.equal((await ts.get(`${base}/fields?limit=1`, auth, { headers: { 'content-length': '0' } })).status, 200, 'an empty body (Content-Length: 0) is no body')
  const ok = await ts.get(`${base}/fields?limit=1`, auth)
  t.equal(ok.status, 200, 'still serving')
})

/** Sends raw bytes on one connection (to `url`, by default this file's service); resolves with everything the server wrote before closing. */
function raw(payload: string, url = ts.url): Promise<string> {
  const { port } = new URL(url)
  return new Promise((resolve, reject) => {
    const s = connect(Number(port), '127.0.0.1', () => s.write(payload))
    let out = ''
    s.setEncoding('utf8')
    s.on('data', (d) => (out += d))
    s.on('close', () => resolve(out))
    s.on('error', reject)
    s.setTimeout(5000, () => s.destroy(new Error(`no close within 5 s; got ${JSON.stringify(out.slice(0, 200))}`)))
  })
}

/** The answers in a raw response stream: status and parsed JSON body of each. */
function answers(stream: string): Array<{ status: number; body: any }> {
  const { answers: out, rest } = splitAnswers(Buffer.from(stream, 'utf8'))
  t.equal(rest.toString('utf8'), '', 'nothing but complete answers')
  return out.map((a) => ({ status: a.status, body: JSON.parse(a.body) }))
}

t.test("Node's own rejections carry the error envelope too", async (t) => {
  const noHost = answers(await raw(`GET ${base}/fields HTTP/1.1\r\nAuthorization: ${auth}\r\n\r\n`))
  t.equal(noHost.length, 1)
  t.equal(noHost[0].status, 400, 'HTTP/1.1 without Host → 400')
  t.equal(noHost[0].body.error.code, 'invalid_parameter')
  const expect = answers(await raw(`GET ${base}/fields HTTP/1.1\r\nHost: x\r\nExpect: bogus\r\nAuthorization: ${auth}\r\n\r\n`))
  t.equal(expect[0].status, 417, 'Expect other than 100-continue → 417')
  t.same(expect[0].body.error, { status: 417, title: 'Expectation Failed', detail: expect[0].body.error.detail, code: 'expectation_failed' })
  for (const path of [`${base}/fields`, '/v1/mcp', '/nope']) {
    const text = await raw(`GET ${path} HTTP/1.1\r\nHost: x\r\nExpect: bogus\r\nX-Request-Id: trace-417\r\nAuthorization: ${auth}\r\n\r\n`)
    t.match(text, /^HTTP\/1\.1 417 /, `${path}: 417`)
    t.match(text, /\r\nX-Request-Id: trace-417\r\n/, `${path}: the 417 carries the request id, as every answer`)
  }
  const garbage = answers(await raw('NOT HTTP AT ALL\r\n\r\n'))
  t.equal(garbage[0].status, 400)
  t.equal(garbage[0].body.error.code, 'invalid_parameter')
})

t.test('a body cut by a malformed chunk is answered 400 at once, on every surface that reads bodies, then the connection closes', async (t) => {
  // Node's parser stops at the bad chunk size and reports it on the server, not on the request: a handler reading the
  // body waited for its end until the idle timeout (60 s), and the client got no answer at all.
  const chunked = (head: string) => `${head}Host: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"a":\r\nzz\r\n`
  const started = Date.now()
  const mcp = answers(await raw(chunked(`POST /v1/mcp HTTP/1.1\r\nAuthorization: ${auth}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n`)))
  t.same(mcp.map((a) => a.status), [400], 'MCP: one answer, 400')
  t.same(mcp[0].body.error, { code: -32700, message: 'Parse error: The request body could not be read: its framing (chunked encoding) is malformed.' }, 'MCP: a JSON-RPC parse error')
  const token = answers(await raw(chunked('POST /oauth/token HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded\r\n')))
  t.same(token.map((a) => a.status), [400], 'OAuth token endpoint: one answer, 400')
  t.equal(token[0].body.error, 'invalid_request')
  // A GET takes no body: it is refused before the body is read, once, and the connection closes.
  const get = answers(await raw(chunked(`GET ${base}/fields?limit=1 HTTP/1.1\r\nAuthorization: ${auth}\r\n`)))
  t.same(get.map((a) => a.status), [413], 'REST: the GET is answered, once')
  // Pipelined after a valid request: its answer first, then the cut body's.
  const both = answers(await raw(`GET ${base}/objects?limit=2 HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth}\r\n\r\n` + chunked(`POST /v1/mcp HTTP/1.1\r\nAuthorization: ${auth}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n`)))
  t.same(both.map((a) => a.status), [200, 400], 'the valid request answered first, then the 400')
  t.equal(both[0].body.data.length, 2)
  t.ok(Date.now() - started < 4000, `all answered and closed at once (${Date.now() - started} ms; raw() gives up after 5 s)`)
})

t.test('a body that does not arrive within the request time limit is answered 400 when the limit passes', async (t) => {
  const slow = await startTestService(t, { config: { requestTimeoutMs: 1000 } })
  const key = await slow.keyHeader(slow.seed.orgs[0].accountId)
  const send = async (payload: string) => {
    const started = Date.now()
    const out = await raw(payload, slow.url)
    return { out, ms: Date.now() - started }
  }
  // 2 of the 10 bytes the head announces: the MCP endpoint is reading the body when the limit passes.
  const body = await send(`POST /v1/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${key}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 10\r\n\r\n{}`)
  const [answer] = splitAnswers(Buffer.from(body.out)).answers
  t.equal(answer?.status, 400, 'MCP: 400')
  t.same(JSON.parse(answer?.body ?? '{}').error, { code: -32700, message: 'Parse error: The request body did not arrive in time.' })
  t.ok(body.ms >= 900 && body.ms < 4000, `answered once the limit passed, and closed (${body.ms} ms)`)
  // A head that never ends: Node's own path, answered in the error envelope.
  const head = await send(`GET /v1/orgs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: `)
  const [headAnswer] = splitAnswers(Buffer.from(head.out)).answers
  t.equal(headAnswer?.status, 400, 'an unfinished head: 400')
  t.equal(JSON.parse(headAnswer?.body ?? '{}').error?.code, 'invalid_parameter')
  t.ok(head.ms < 4000, `closed (${head.ms} ms)`)
})

t.test('a valid request pipelined before garbage still gets its own answer, then the 400', async (t) => {
  const stream = await raw(
    `GET ${base}/fields?limit=3 HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth}\r\n\r\n` +
      `GET ${base}/objects?limit=2 HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth}\r\n\r\n` +
      'GARBAGE\r\n\r\n',
  )
  const got = answers(stream)
  t.same(got.map((a) => a.status), [200, 200, 400], 'both valid answers, in order, then the error')
  t.equal(got[0].body.data.length, 3)
  t.equal(got[1].body.data.length, 2)
  t.equal(got[2].body.error.code, 'invalid_parameter')
})

t.test('a database fault is a 500 that shows nothing, and its cause is logged', async (t) => {
  const lines: string[] = []
  const faulty = await startTestService(t, { log: (l) => lines.push(l) })
  const org = faulty.seed.orgs.find((o) => o.large)!
  const key = await faulty.keyHeader(org.accountId)
  await faulty.svc.db.sql.unsafe('ALTER TABLE fields RENAME TO fields_moved')
  t.teardown(() => faulty.svc.db.sql.unsafe('ALTER TABLE fields_moved RENAME TO fields'))
  const r = await faulty.get(`/v1/orgs/${org.salesforceId}/fields?limit=1`, key)
  t.equal(r.status, 500)
  t.same(r.body.error, { status: 500, title: 'Internal Server Error', detail: 'The server failed to process the request.', code: 'internal_error' })
  t.notMatch(r.text, /fields|relation|SQLSTATE/i, 'nothing of the cause in the answer')
  const logged = lines.map((l) => JSON.parse(l)).find((l) => l.level === 'error' && l.msg === 'read failed')
  t.ok(logged, 'the fault is logged')
  t.match(logged?.err, { code: '42P01', message: /fields/ }, 'with its cause')
})
