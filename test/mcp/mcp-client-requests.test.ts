/**
 * What a tool call exchanges with its client besides the result (runtime/surfaces/mcp/call-io.ts, client-requests.ts):
 * progress notifications when the request carries a token; requests to the client (sampling, elicitation) for what
 * it declared, answered on the 2025-era call's event stream and POSTed back in the session, or, in the 2026-07-28
 * revision, through `input_required` results and retries; the bounded wait and its error result; resource
 * subscriptions. With the official SDK client in both eras, and raw HTTP for what the SDK client would not do (never
 * answer, answer wrongly, answer from another session, go away).
 */
import type { Test } from 'tap'
import { t } from '../helpers/file-test.ts'
import type { Client } from '@modelcontextprotocol/client'
import { loadConfig } from '../../runtime/platform/config.ts'
import type { McpTool } from '../../runtime/surfaces/mcp/resource-tools.ts'
import { startTestService } from '../helpers/service.ts'
import { mcpClient, rpc, type Era } from '../helpers/mcp.ts'
import { conformancePrompts, conformanceResources, conformanceTools } from '../helpers/conformance-fixtures.ts'

const ANSWER_MS = 1500
/** Asks twice in one call: the user, then the model with what the user said. */
const twoAsks: McpTool = {
  definition: { name: 'test_two_asks', description: 'Asks the user for a topic, then the model about it.', inputSchema: { type: 'object' } },
  scope: 'mcp:read',
  run: async (_a, ctx) => {
    const user = await ctx.elicit!({ message: 'Topic?', requestedSchema: { type: 'object', properties: { topic: { type: 'string' } }, required: ['topic'] } })
    const topic = String(user.content?.topic ?? '')
    const model = await ctx.sample!({ messages: [{ role: 'user', content: { type: 'text', text: `About ${topic}` } }], maxTokens: 10 })
    return { content: [{ type: 'text', text: `${topic}: ${model.content && !Array.isArray(model.content) && model.content.type === 'text' ? model.content.text : ''}` }] }
  },
}
const ts = await startTestService(t, {
  seed: false,
  mcpExtraTools: [...conformanceTools, twoAsks],
  mcpExtraPrompts: conformancePrompts,
  mcpExtraResources: conformanceResources,
  config: { mcp: { ...loadConfig({}).mcp, clientAnswerMs: ANSWER_MS } },
})
const [{ id: accountId }] = await ts.svc.db.sql`INSERT INTO accounts (name, daily_limit, monthly_limit) VALUES ('Asks', 100000, 100000) RETURNING id::text AS id`
const auth = await ts.keyHeader(accountId)
const url = ts.svc.mcpUrl
const ERAS: Era[] = ['legacy', 'modern']

/** A client declaring sampling and elicitation, its handlers answering as `answers` says; counts what it was asked. */
async function askedClient(t: Test, era: Era, answers: { elicit?: Record<string, unknown>; sample?: string } = {}) {
  const asked: Array<{ method: string; params: any }> = []
  const { client } = await mcpClient(t, url, auth, era, { capabilities: { sampling: {}, elicitation: {} } }, (c: Client) => {
    c.setRequestHandler('elicitation/create', async (req) => {
      asked.push({ method: 'elicitation/create', params: req.params })
      return (answers.elicit ?? { action: 'accept', content: { username: 'ada', email: 'ada@example.com' } }) as never
    })
    c.setRequestHandler('sampling/createMessage', async (req) => {
      asked.push({ method: 'sampling/createMessage', params: req.params })
      return { role: 'assistant', content: { type: 'text', text: answers.sample ?? 'forty-two' }, model: 'test-model', stopReason: 'endTurn' }
    })
  })
  return { client, asked }
}

const textOf = (r: unknown) => ((r as { content: Array<{ text?: string }> }).content[0]?.text ?? '')

t.test('initialize declares resource subscriptions', async (t) => {
  for (const era of ERAS) {
    const { client } = await mcpClient(t, url, auth, era)
    t.same(client.getServerCapabilities()?.resources, { subscribe: true, listChanged: false }, era)
  }
})

t.test('progress: a call with a progress token gets its notifications, increasing, before the result', async (t) => {
  for (const era of ERAS) {
    const { client } = await mcpClient(t, url, auth, era)
    const seen: Array<{ progress: number; total?: number; message?: string }> = []
    const r = await client.callTool({ name: 'test_tool_with_progress', arguments: {} }, { onprogress: (p) => void seen.push(p) })
    t.same(seen.map((p) => [p.progress, p.total]), [[0, 100], [50, 100], [100, 100]], `${era}: 0, 50 and 100 of 100`)
    t.equal(seen[1].message, 'read server_info', `${era}: with the tool's message`)
    t.match(r.structuredContent, { versions: Array }, `${era}: then the real tool's result`)
  }
  // Raw: the token is echoed, and a call without one answers plain JSON.
  const init = await rpc(url, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }, { authorization: auth })
  const h = { authorization: auth, 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-11-25' }
  const withToken = await rpc(url, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'test_tool_with_progress', arguments: {}, _meta: { progressToken: 'p-1' } } }, h)
  t.match(withToken.headers.get('content-type'), /^text\/event-stream/, 'with a token: an event stream')
  const messages = events(withToken.text)
  t.same(messages.slice(0, 3).map((m) => [m.method, m.params.progressToken, m.params.progress]), [['notifications/progress', 'p-1', 0], ['notifications/progress', 'p-1', 50], ['notifications/progress', 'p-1', 100]])
  t.equal(messages[3].id, 2, 'the result last')
  const without = await rpc(url, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'test_tool_with_progress', arguments: {} } }, h)
  t.match(without.headers.get('content-type'), /^application\/json/, 'without a token: one JSON answer')
  t.match(without.body.result.structuredContent, { versions: Array })
})

t.test('sampling: the client\'s model is asked and its answer is the tool\'s', async (t) => {
  for (const era of ERAS) {
    const { client, asked } = await askedClient(t, era, { sample: 'forty-two' })
    const r = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'The answer?' } })
    t.equal(textOf(r), 'LLM response: forty-two', era)
    t.same(asked.map((a) => [a.method, a.params.messages[0].content.text, a.params.maxTokens]), [['sampling/createMessage', 'The answer?', 100]], `${era}: asked once, with the prompt`)
  }
})

t.test('elicitation: accepted and declined answers reach the tool', async (t) => {
  for (const era of ERAS) {
    const accepting = await askedClient(t, era)
    const r = await accepting.client.callTool({ name: 'test_elicitation', arguments: { message: 'Who are you?' } })
    t.equal(textOf(r), 'User response: action=accept, content={"username":"ada","email":"ada@example.com"}', `${era}: accepted`)
    t.equal(accepting.asked[0].params.message, 'Who are you?')
    const declining = await askedClient(t, era, { elicit: { action: 'decline' } })
    const d = await declining.client.callTool({ name: 'test_elicitation', arguments: { message: 'Who are you?' } })
    t.equal(textOf(d), 'User response: action=decline, content={}', `${era}: declined`)
  }
})

t.test('two asks in one call: each is asked once, in order (2026-07-28: over two retries)', async (t) => {
  for (const era of ERAS) {
    const { client, asked } = await askedClient(t, era, { elicit: { action: 'accept', content: { topic: 'quotas' } }, sample: 'fine' })
    const r = await client.callTool({ name: 'test_two_asks', arguments: {} })
    t.equal(textOf(r), 'quotas: fine', era)
    t.same(asked.map((a) => a.method), ['elicitation/create', 'sampling/createMessage'], `${era}: neither asked twice`)
    t.equal(asked[1].params.messages[0].content.text, 'About quotas', `${era}: the second ask has the first answer`)
  }
})

t.test('2026-07-28: a call that asks answers input_required with the request and a state to echo', async (t) => {
  const { client } = await mcpClient(t, url, auth, 'modern', { capabilities: { elicitation: {} }, inputRequired: { autoFulfill: false } })
  const r = (await client.callTool({ name: 'test_elicitation', arguments: { message: 'Who?' } }, { allowInputRequired: true })) as unknown as Record<string, any>
  t.equal(r.resultType, 'input_required')
  t.same(Object.keys(r.inputRequests), ['1'])
  t.match(r.inputRequests['1'], { method: 'elicitation/create', params: { message: 'Who?', requestedSchema: { required: ['username', 'email'] } } })
  t.type(r.requestState, 'string')
})

t.test('a client that declared neither is never asked', async (t) => {
  for (const era of ERAS) {
    const { client } = await mcpClient(t, url, auth, era)
    const s = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'x' } })
    t.equal(s.isError, true, `${era}: the tool cannot ask`)
    t.match(textOf(s), /did not declare sampling/)
    const e = await client.callTool({ name: 'test_elicitation', arguments: { message: 'x' } })
    t.match(textOf(e), /did not declare elicitation/, era)
  }
})

/** A raw 2025-11-25 session whose client declared `capabilities`: its headers. */
async function rawSession(capabilities: Record<string, unknown> = { elicitation: {}, sampling: {} }): Promise<Record<string, string>> {
  const init = await rpc(url, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 'raw', version: '1' } } }, { authorization: auth })
  return { authorization: auth, 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-11-25', 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
}

/** A tool call whose event stream is read message by message as it comes. */
async function openCall(headers: Record<string, string>, name: string, args: unknown, signal?: AbortSignal) {
  const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: args } }), signal })
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader()
  let buffer = ''
  return {
    res,
    /** The next message, or undefined once the stream ended. */
    async next(): Promise<any> {
      for (;;) {
        const cut = buffer.indexOf('\n\n')
        if (cut >= 0) {
          const block = buffer.slice(0, cut)
          buffer = buffer.slice(cut + 2)
          const data = block.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).replace(/^ /, '')).join('\n')
          if (data) return JSON.parse(data)
          continue
        }
        const { value, done } = await reader.read()
        if (done) return undefined
        buffer += value
      }
    },
  }
}

const answer = (headers: Record<string, string>, body: unknown) => fetch(url, { method: 'POST', headers, body: JSON.stringify(body) })
const until = async (cond: () => boolean, ms = 3000) => {
  const end = Date.now() + ms
  while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 20))
  return cond()
}

t.test('2025-era: the request goes on the call\'s stream, and the answer POSTed in the session is 202', async (t) => {
  const h = await rawSession()
  const call = await openCall(h, 'test_elicitation', { message: 'Name?' })
  t.match(call.res.headers.get('content-type'), /^text\/event-stream/)
  const request = await call.next()
  t.match(request, { jsonrpc: '2.0', method: 'elicitation/create', params: { message: 'Name?' } })
  t.match(request.id, /^orgscan-[A-Za-z0-9_-]{22}$/, 'a string id that cannot be guessed')
  t.equal(ts.svc.mcpClientRequestsWaiting(), 1, 'one request waits')
  const posted = await answer(h, { jsonrpc: '2.0', id: request.id, result: { action: 'accept', content: { username: 'raw', email: 'r@example.com' } } })
  t.equal(posted.status, 202)
  t.equal(await posted.text(), '')
  const result = await call.next()
  t.equal(result.id, 7)
  t.equal(textOf(result.result), 'User response: action=accept, content={"username":"raw","email":"r@example.com"}')
  t.equal(await call.next(), undefined, 'then the stream ends')
  t.equal(ts.svc.mcpClientRequestsWaiting(), 0, 'nothing waits any more')
})

t.test('2025-era: no answer within the bound is a clear error result, and nothing is left waiting', async (t) => {
  const h = await rawSession()
  const started = Date.now()
  const call = await openCall(h, 'test_elicitation', { message: 'Name?' })
  const request = await call.next()
  const result = await call.next()
  const waited = Date.now() - started
  t.ok(waited >= ANSWER_MS - 50 && waited < ANSWER_MS + 2000, `answered after the bound (${waited} ms)`)
  t.equal(result.result.isError, true)
  t.same(result.result.structuredContent, {
    error: 'server_error',
    message: `The tool asked the client (elicitation/create) and got no answer within ${ANSWER_MS / 1000} seconds.`,
    reason: 'client_request_failed',
    retryable: true,
  })
  t.equal(await call.next(), undefined, 'the stream ends')
  t.equal(ts.svc.mcpClientRequestsWaiting(), 0, 'nothing is left waiting')
  const late = await answer(h, { jsonrpc: '2.0', id: request.id, result: { action: 'accept', content: {} } })
  t.equal(late.status, 202, 'a late answer is accepted and changes nothing')
})

t.test('2025-era: an SDK client whose handler never answers gets the error result at the bound', async (t) => {
  const { client } = await mcpClient(t, url, auth, 'legacy', { capabilities: { sampling: {} } }, (c: Client) => {
    c.setRequestHandler('sampling/createMessage', () => new Promise<never>(() => undefined))
  })
  const r = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'x' } })
  t.equal(r.isError, true)
  t.match(r.structuredContent, { error: 'server_error', reason: 'client_request_failed', message: /sampling\/createMessage\) and got no answer within/ })
  t.equal(ts.svc.mcpClientRequestsWaiting(), 0, 'nothing is left waiting')
})

t.test('2025-era: an error answer, or an answer of the wrong shape, fails the ask saying so', async (t) => {
  const h = await rawSession()
  const refused = await openCall(h, 'test_sampling', { prompt: 'x' })
  const r1 = await refused.next()
  await answer(h, { jsonrpc: '2.0', id: r1.id, error: { code: -1, message: 'User rejected sampling' } })
  const res1 = await refused.next()
  t.match(res1.result.structuredContent, { error: 'server_error', reason: 'client_request_failed', message: 'The tool asked the client (sampling/createMessage) and the client answered with an error: User rejected sampling.' })
  const odd = await openCall(h, 'test_elicitation', { message: 'x' })
  const r2 = await odd.next()
  await answer(h, { jsonrpc: '2.0', id: r2.id, result: { action: 'maybe' } })
  const res2 = await odd.next()
  t.match(res2.result.structuredContent, { reason: 'client_request_failed', message: /not a valid ElicitResult/ })
})

t.test('2025-era: only the session that was asked can answer', async (t) => {
  const h = await rawSession()
  const other = await rawSession()
  const call = await openCall(h, 'test_elicitation', { message: 'x' })
  const request = await call.next()
  const stray = await answer(other, { jsonrpc: '2.0', id: request.id, result: { action: 'accept', content: { username: 'intruder', email: 'i@example.com' } } })
  t.equal(stray.status, 202, 'another session\'s answer is accepted')
  await new Promise((r) => setTimeout(r, 100))
  t.equal(ts.svc.mcpClientRequestsWaiting(), 1, '…and changes nothing')
  await answer(h, { jsonrpc: '2.0', id: request.id, result: { action: 'accept', content: { username: 'owner', email: 'o@example.com' } } })
  t.match(textOf((await call.next()).result), /"username":"owner"/, 'the session\'s own answer is the one used')
})

t.test('2025-era: a client that goes away while asked frees the wait at once', async (t) => {
  const h = await rawSession()
  const abort = new AbortController()
  const call = await openCall(h, 'test_elicitation', { message: 'x' }, abort.signal)
  await call.next()
  t.equal(ts.svc.mcpClientRequestsWaiting(), 1)
  abort.abort()
  t.ok(await until(() => ts.svc.mcpClientRequestsWaiting() === 0, ANSWER_MS - 500), 'freed before the bound')
})

t.test('2025-era: a session that declared neither gets no request, and its call answers JSON', async (t) => {
  const h = await rawSession({})
  const r = await rpc(url, { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'test_elicitation', arguments: { message: 'x' } } }, h)
  t.match(r.headers.get('content-type'), /^application\/json/)
  t.match(r.body.result, { isError: true, content: [{ text: /did not declare elicitation/ }] })
})

t.test('resources/subscribe and unsubscribe: {} for a resource that exists, an error for one that does not', async (t) => {
  const { client } = await mcpClient(t, url, auth)
  for (const uri of ['service://rql', 'resource://filter-values/issues/category', 'test://watched-resource', 'test://template/7/data']) {
    t.same(await client.subscribeResource({ uri }), {}, `subscribe ${uri}`)
    t.same(await client.unsubscribeResource({ uri }), {}, `unsubscribe ${uri}`)
  }
  await t.rejects(client.subscribeResource({ uri: 'service://nothing' }), { code: -32602 }, 'an unknown resource')
  // 2026-07-28 has no resources/subscribe: its clients listen (subscriptions/listen), served by the SDK's handler.
  const modern = (await mcpClient(t, url, auth, 'modern')).client
  const sub = await modern.listen({ resourceSubscriptions: ['service://rql'] })
  t.ok(sub, 'a listen is acknowledged')
  await sub.close()
})

t.test('extra prompts and resources answer like orgscan\'s own, in both eras', async (t) => {
  for (const era of ERAS) {
    const { client } = await mcpClient(t, url, auth, era)
    const prompts = (await client.listPrompts()).prompts.map((p) => p.name)
    t.ok(prompts.includes('top_priority_fixes') && prompts.includes('test_prompt_with_arguments'), `${era}: both kinds listed`)
    const got = await client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'a', arg2: 'b' } })
    t.equal((got.messages[0].content as { text: string }).text, "Prompt with arguments: arg1='a', arg2='b'")
    await t.rejects(client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'a' } }), { code: -32602 }, `${era}: a missing argument`)
    const embedded = await client.getPrompt({ name: 'test_prompt_with_embedded_resource', arguments: { resourceUri: 'service://rql' } })
    t.match(embedded.messages[0].content, { type: 'resource', resource: { uri: 'service://rql', mimeType: 'text/markdown', text: /RQL/ } }, `${era}: orgscan's own resource embedded`)
    t.same((await client.complete({ ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' }, argument: { name: 'arg1', value: 'testV' } })).completion.values, ['testValue1', 'testValue2'])
    const uris = (await client.listResources()).resources.map((r) => r.uri)
    t.ok(uris.includes('service://issue-categories') && uris.includes('test://static-binary'), `${era}: both kinds of resources listed`)
    const templates = (await client.listResourceTemplates()).resourceTemplates.map((r) => r.uriTemplate)
    t.same(templates, ['resource://filter-values/{resource}/{field}', 'test://template/{id}/data'])
    const read = await client.readResource({ uri: 'test://template/123/data' })
    t.same(JSON.parse((read.contents[0] as { text: string }).text), { id: '123', templateTest: true, data: 'Data for ID: 123' }, `${era}: a template's variable`)
    t.match((await client.readResource({ uri: 'test://static-binary' })).contents[0], { mimeType: 'image/png', blob: /^iVBOR/ })
    await t.rejects(client.readResource({ uri: 'test://template/1/other' }), { code: -32602 }, `${era}: an address no template matches`)
  }
})

/** The JSON-RPC messages of a whole event stream, in order. */
function events(text: string): any[] {
  return text
    .split('\n\n')
    .filter((e) => e.trim() && e.includes('data:'))
    .map((e) => JSON.parse(e.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).replace(/^ /, '')).join('\n')))
}
