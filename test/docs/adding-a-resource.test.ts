/**
 * "A resource is one declaration": a throwaway resource declared here (the example of docs/adding-a-resource.md),
 * with its table created from the DDL the registry expects, appears everywhere with no other code — its REST routes
 * (list, filter, sort, get), its MCP tools, its OpenAPI path, its REST and MCP reference entries and its client type.
 */
import { t } from '../helpers/file-test.ts'
import { defineResource, f } from '../../runtime/core/define.ts'
import { prompts, registry } from '../../resources/index.ts'
import { compileRegistry } from '../../runtime/core/registry.ts'
import { expectedTables, renderDdl } from '../../runtime/platform/db/ddl.ts'
import { buildOpenApi } from '../../runtime/surfaces/docs/openapi.ts'
import { generateDocs } from '../../runtime/surfaces/docs/generate.ts'
import { startTestService } from '../helpers/service.ts'
import { mcpClient } from '../helpers/mcp.ts'

const sharingRules = defineResource({
  name: 'sharingRules',
  title: 'Sharing rule',
  description: 'Criteria- and owner-based sharing rules per object, with the access level they grant.',
  id: { field: 'id', param: 'sharingRuleId', encoding: 'int' },
  fields: {
    id: f.int({ description: 'Record id, stable across scans.' }),
    objectApiName: f.text({ description: 'API name of the object the rule shares.' }),
    accessLevel: f.enum(['read', 'edit'], { description: 'Access the rule grants.' }),
    namespace: f.text({ nullable: true, description: 'Managed package namespace; null when the rule is the org\'s own.' }),
  },
  filterable: ['id', 'objectApiName', 'accessLevel', 'namespace'],
  sortable: ['id', 'objectApiName'],
  defaultSort: 'objectApiName',
})

const withRule = [...registry, sharingRules]
const ts = await startTestService(t, { registry: withRule })
const org = ts.seed.orgs.find((o) => o.large)!
const auth = await ts.keyHeader(org.accountId)
const sql = ts.svc.db.sql
const table = expectedTables(compileRegistry(withRule)).find((x) => x.table === 'sharing_rules')!
await sql.unsafe(renderDdl(table))
const [{ scan }] = await sql`SELECT latest_scan_id AS scan FROM orgs WHERE salesforce_id = ${org.salesforceId}`
await sql`INSERT INTO sharing_rules (scan_id, id, object_api_name, access_level, namespace) VALUES
  (${scan}, 1, 'Opportunity', 'read', NULL), (${scan}, 2, 'Account', 'edit', NULL), (${scan}, 3, 'Case', 'read', 'acme')`

t.test('REST routes', async (t) => {
  const list = await ts.get(`/v1/orgs/${org.salesforceId}/sharingRules`, auth)
  t.equal(list.status, 200)
  t.same(list.body.data.map((r: { objectApiName: string }) => r.objectApiName), ['Account', 'Case', 'Opportunity'], 'the default sort')
  const filtered = await ts.get(`/v1/orgs/${org.salesforceId}/sharingRules?filter=and(eq(accessLevel,read),isNull(namespace))&sort=-id`, auth)
  t.same(filtered.body.data.map((r: { id: number }) => r.id), [1])
  const one = await ts.get(`/v1/orgs/${org.salesforceId}/sharingRules/2`, auth)
  t.same(one.body.data, { id: 2, objectApiName: 'Account', accessLevel: 'edit', namespace: null })
  const bad = await ts.get(`/v1/orgs/${org.salesforceId}/sharingRules?filter=eq(accessLevel,write)`, auth)
  t.equal(bad.body.error.code, 'invalid_filter_value')
})

t.test('MCP tools', async (t) => {
  const { client } = await mcpClient(t, ts.svc.mcpUrl, auth)
  const names = (await client.listTools()).tools.map((x) => x.name)
  t.ok(names.includes('list_org_sharing_rules') && names.includes('get_org_sharing_rule'), 'derived tool names')
  const r = await client.callTool({ name: 'list_org_sharing_rules', arguments: { orgId: org.salesforceId, filter: 'eq(objectApiName,Case)' } })
  t.same((r.structuredContent as { data: unknown[] }).data, [{ id: 3, objectApiName: 'Case', accessLevel: 'read', namespace: 'acme' }])
})

t.test('OpenAPI, references and client types', async (t) => {
  const compiled = compileRegistry(withRule)
  const doc = buildOpenApi(compiled) as { paths: Record<string, unknown> }
  t.ok(doc.paths['/v1/orgs/{orgId}/sharingRules'], 'the list path')
  t.ok(doc.paths['/v1/orgs/{orgId}/sharingRules/{sharingRuleId}'], 'the get path')
  const files = generateDocs(compiled, prompts)
  t.match(files.get('docs/reference/rest.md'), /## Sharing rules\n\nCriteria- and owner-based sharing rules/)
  t.match(files.get('docs/reference/mcp.md'), /### `list_org_sharing_rules` — List sharing rules/)
  t.match(files.get('client/generated.ts'), /export interface SharingRule \{[^}]*accessLevel: "read" \| "edit"/)
  t.match(files.get('client/generated.ts'), /listOrgSharingRules\(params: \{ orgId: string;[^)]*\): Promise<Page<SharingRule>>/, 'a client method for the list')
  t.match(files.get('client/generated.ts'), /getOrgSharingRule\(params: \{ orgId: string; sharingRuleId: number \| string[^}]*\}\): Promise<SharingRule>/, 'and one for the record')
})
