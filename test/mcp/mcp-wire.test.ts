/**
 * The MCP wire surface is pinned: tool names, titles, descriptions, annotations and input schemas, and the prompts
 * and their arguments, must equal the committed table test/fixtures/mcp-wire.json. Tool descriptions are part of
 * the versioned contract, so changing any of this is a deliberate act: regenerate the table with
 * `npm run regen` (which also adds a changelog entry naming the new fingerprint), review the diff, and say in that entry what
 * changed.
 */
import { t } from '../helpers/file-test.ts'
import { readFileSync, writeFileSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { startTestService } from '../helpers/service.ts'
import { mcpClient } from '../helpers/mcp.ts'
import { embeddedRunOnly } from '../helpers/runs.ts'

embeddedRunOnly(t, 'The MCP wire table')

const FILE = new URL('../fixtures/mcp-wire.json', import.meta.url)
const ts = await startTestService(t, { seed: false })
const { client } = await mcpClient(t, ts.svc.mcpUrl, await ts.keyHeader((await ts.svc.db.sql`INSERT INTO accounts (name, daily_limit, monthly_limit) VALUES ('Wire', 10, 10) RETURNING id::text AS id`)[0].id))

const { tools } = await client.listTools()
const { prompts } = await client.listPrompts()
const wire = {
  tools: tools.map((x) => ({ name: x.name, title: x.title, description: x.description, annotations: x.annotations, inputSchema: x.inputSchema })),
  prompts: prompts.map((p) => ({ name: p.name, title: p.title, description: p.description, arguments: p.arguments })),
}

// `npm run regen` rewrites the table this way, then adds the changelog entry the second test asks for.
const updating = process.env.ORGSCAN_UPDATE_WIRE === '1'
if (updating) writeFileSync(FILE, JSON.stringify(wire, null, 2) + '\n')

t.test('the MCP wire surface equals the committed table', async (t) => {
  const committed = JSON.parse(readFileSync(FILE, 'utf8'))
  t.same(wire.tools.map((x) => x.name), committed.tools.map((x: { name: string }) => x.name), 'the same tools, in the same order')
  for (const tool of wire.tools) {
    t.same(tool, committed.tools.find((x: { name: string }) => x.name === tool.name), `${tool.name} unchanged`)
  }
  t.same(wire.prompts, committed.prompts, 'the same prompts and arguments')
})

t.test('the changelog records the wire table\'s current fingerprint', { skip: updating && 'regen writes the entry after rewriting the table' }, async (t) => {
  const fingerprint = createHash('sha256').update(readFileSync(FILE)).digest('hex').slice(0, 12)
  const changelog = readFileSync(new URL('../../docs/changelog.md', import.meta.url), 'utf8')
  t.ok(changelog.includes(fingerprint), `docs/changelog.md names ${fingerprint}: add an entry for the wire change (tagged additive, breaking or description-update)`)
})
