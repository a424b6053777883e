/** MCP clients for tests: the official SDK client over Streamable HTTP, in the 2025-11-25 or the 2026-07-28 era. */
import type { Test } from 'tap'
import { request } from 'node:http'
import { Client, StreamableHTTPClientTransport, type ClientOptions } from '@modelcontextprotocol/client'
import type { McpTool } from '../../runtime/surfaces/mcp/resource-tools.ts'

/** A tool only tests register (`mcpExtraTools`): it needs the mcp:write scope, which no API key holds. */
export const writeProbe: McpTool = {
  definition: { name: 'test_write_probe', title: 'Write probe', description: 'Needs the mcp:write scope; registered only by tests.', inputSchema: { type: 'object' } },
  scope: 'mcp:write',
  run: async () => ({ content: [{ type: 'text', text: 'written' }] }),
}

/** A tool only tests register: it throws, with text a client must never see. */
export const failingProbe: McpTool = {
  definition: { name: 'test_failing_probe', title: 'Failing probe', description: 'Throws; registered only by tests.', inputSchema: { type: 'object' } },
  scope: 'mcp:read',
  run: async () => {
    throw new Error('boom: SELECT secret FROM internals')
  },
}

export type Era = 'legacy' | 'modern'

export interface McpTestClient {
  client: Client
  transport: StreamableHTTPClientTransport
}

/**
 * A connected client sending `authorization` on every request; closed when the test ends. `options`: the client's
 * own (its capabilities, say), `setup` runs before it connects (to register its handlers).
 */
export async function mcpClient(t: Test, url: string, authorization: string | undefined, era: Era = 'legacy', options: ClientOptions = {}, setup?: (client: Client) => void): Promise<McpTestClient> {
  const client = new Client({ name: 'orgscan-tests', version: '1.0.0' }, era === 'modern' ? { ...options, versionNegotiation: { mode: { pin: '2026-07-28' } } } : options)
  setup?.(client)
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: authorization ? { authorization } : {} } })
  await client.connect(transport)
  t.teardown(() => client.close())
  return { client, transport }
}

/**
 * A JSON-RPC request with node:http (for what the SDK client would never send; unlike fetch, it sends a `Host`
 * header as given).
 */
export function rpc(url: string, body: unknown, headers: Record<string, string> = {}, method = 'POST'): Promise<{ status: number; headers: Headers; body: any; text: string }> {
  const payload = method === 'POST' ? (typeof body === 'string' ? body : JSON.stringify(body)) : undefined
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (d) => (text += d))
      res.on('end', () => {
        let parsed: unknown
        try {
          parsed = text ? JSON.parse(text) : undefined
        } catch {
          parsed = undefined
        }
        const h = new Headers()
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') h.set(k, v)
        resolve({ status: res.statusCode ?? 0, headers: h, body: parsed, text })
      })
    })
    req.on('error', reject)
    req.end(payload)
  })
}

/** The body of a 2025-11-25 initialize request. */
export function initializeBody(id: string | number = 1): unknown {
  return { jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw-test', version: '1.0.0' } } }
}
