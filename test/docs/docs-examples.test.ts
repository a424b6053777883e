/**
 * The example calls of the references (docs/examples.json, shown in docs/reference/mcp.md and as the OpenAPI
 * document's response examples) are real: every registry tool is called with its example arguments through the
 * official MCP SDK client against the demo data, the same request is made over REST, and both answers must equal
 * the committed example. `npm run regen` (UPDATE_DOC_EXAMPLES=1 here) rewrites the file from these calls.
 */
import { t } from '../helpers/file-test.ts'
import { readFileSync, writeFileSync } from 'node:fs'
import { registry } from '../../resources/index.ts'
import { compileRegistry, type CompiledResource } from '../../runtime/core/registry.ts'
import { EXAMPLES_FILE, exampleListArgs, shown, type DocExample, type DocExamples } from '../../runtime/surfaces/docs/doc-examples.ts'
import { startTestService } from '../helpers/service.ts'
import { mcpClient } from '../helpers/mcp.ts'

const update = process.env.UPDATE_DOC_EXAMPLES === '1'
const resources = compileRegistry(registry)
const ts = await startTestService(t)
const org = ts.seed.orgs.find((o) => o.large)!
const auth = await ts.keyHeader(org.accountId)

t.test('every registry tool\'s example call answers what docs/examples.json shows, on MCP and REST', async (t) => {
  const { client } = await mcpClient(t, ts.svc.mcpUrl, auth)
  const call = async (name: string, args: Record<string, unknown>) => {
    const r = await client.callTool({ name, arguments: args })
    t.notOk(r.isError, `${name} succeeds`)
    return r.structuredContent as DocExample['result']
  }
  const objectsList = await call('list_org_objects', { orgId: org.salesforceId, limit: 1 })
  const parentId = (objectsList.data as Array<{ id: number }>)[0].id
  const actual: DocExamples = {}
  const record = async (name: string, args: Record<string, unknown>, rest: string, result: DocExample['result']) => {
    const r = await ts.get(rest, auth)
    t.equal(r.status, 200, `REST ${rest}`)
    t.same(r.body, result, `${name}: REST answers what the tool answers`)
    actual[name] = { arguments: args, rest, result: shown(result) }
  }
  /** The first record of each list example, by path: a get-only resource takes its id from the list at its path. */
  const firstByPath = new Map<string, Record<string, unknown>>()
  for (const c of resources as CompiledResource[]) {
    const d = c.decl
    let firstRecord = firstByPath.get(d.path)
    const base = d.scope === 'org' ? `/v1/orgs/${org.salesforceId}/` : '/v1/'
    if (d.operations.list) {
      let args = exampleListArgs(c, { orgId: org.salesforceId, parentId }, true)
      let result = await call(d.mcp.list!, args)
      if ((result.data as unknown[]).length === 0 && args.filter) {
        args = exampleListArgs(c, { orgId: org.salesforceId, parentId }, false)
        result = await call(d.mcp.list!, args)
      }
      t.ok((result.data as unknown[]).length > 0, `${d.mcp.list}: the example shows records`)
      firstRecord = (result.data as Array<Record<string, unknown>>)[0]
      firstByPath.set(d.path, firstRecord)
      await record(d.mcp.list!, args, result.links!.self, result)
    }
    if (d.operations.get) {
      const args: Record<string, unknown> = d.scope === 'org' || d.id?.param === 'orgId' ? { orgId: org.salesforceId } : {}
      let path = d.scope === 'org' ? `${base}${d.path}` : `/v1/${d.path}`
      if (d.id && d.kind !== 'singleton' && d.id.param !== 'orgId') {
        const id = firstRecord?.[d.id.field]
        t.ok(id !== undefined && id !== null, `${d.mcp.get}: its id comes from the list example`)
        args[d.id.param] = id
        path += '/' + encodeURIComponent(d.id.encoding === 'base64url' ? Buffer.from(String(id)).toString('base64url') : String(id))
      } else if (d.id?.param === 'orgId') {
        path = `/v1/orgs/${org.salesforceId}`
      }
      await record(d.mcp.get!, args, path, await call(d.mcp.get!, args))
    }
  }
  if (update) {
    writeFileSync(EXAMPLES_FILE, JSON.stringify(actual, null, 2) + '\n')
    t.comment(`wrote ${Object.keys(actual).length} examples to docs/examples.json; now run npm run docs`)
  }
  const committed = JSON.parse(readFileSync(EXAMPLES_FILE, 'utf8')) as DocExamples
  t.same(Object.keys(committed).sort(), Object.keys(actual).sort(), 'one example per registry tool')
  for (const [name, ex] of Object.entries(actual)) t.same(committed[name], ex, `${name}: the committed example is the real answer`)
})
