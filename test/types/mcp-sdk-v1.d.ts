// The v1 MCP SDK is a test tool, installed on first need outside node_modules (test/helpers/test-tools.ts), so its own
// declarations are not there when the project is type-checked: these declare the part test/mcp/mcp-errors.test.ts uses.
declare module '@modelcontextprotocol/sdk/client/index.js' {
  export class Client {
    constructor(info: { name: string; version: string })
    connect(transport: unknown): Promise<void>
    close(): Promise<void>
    listTools(): Promise<{ tools: Array<{ name: string; outputSchema?: unknown }> }>
    callTool(request: { name: string; arguments?: Record<string, unknown> }): Promise<unknown>
  }
}
declare module '@modelcontextprotocol/sdk/client/streamableHttp.js' {
  export class StreamableHTTPClientTransport {
    constructor(url: URL, options?: { requestInit?: { headers?: Record<string, string> } })
  }
}
