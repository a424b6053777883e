/**
 * Each prompt walked as an assistant would: get it for the large demo org, make exactly the tool calls it names
 * (from its JSON plan, which must match its text), and every call succeeds with a non-empty result whose records
 * satisfy the step's purpose. A prompt naming a tool, field or filter that does not work fails here (and at
 * start-up, see test/runtime/registry.test.ts).
 */
import { t } from '../helpers/file-test.ts'
import { prompts as declared } from '../../resources/index.ts'
import { startTestService } from '../helpers/service.ts'
import { mcpClient } from '../helpers/mcp.ts'

const ts = await startTestService(t)
const org = ts.seed.orgs.find((o) => o.large)!
const auth = await ts.keyHeader(org.accountId)

type Step = { tool: string; arguments: Record<string, string | number>; why: string; from?: { step: number; take: number; each?: boolean } }
type Data = Array<Record<string, unknown>>

/** Replaces $item.<field> (a whole value keeps the record's type) and $items.<field> with the source records' values. */
function resolve(args: Record<string, string | number>, item: Record<string, unknown> | undefined, items: Data): Record<string, unknown> {
  const one = (v: string) => {
    const whole = /^\$item\.(\w+)$/.exec(v)
    if (whole) return item![whole[1]]
    return v.replace(/\$items\.(\w+)/g, (_m, f: string) => items.map((r) => String(r[f])).join(',')).replace(/\$item\.(\w+)/g, (_m, f: string) => String(item![f]))
  }
  return Object.fromEntries(Object.entries(args).map(([k, v]) => [k, typeof v === 'string' ? one(v) : v]))
}

t.test('the five prompts are offered, with their arguments', async (t) => {
  const { client } = await mcpClient(t, ts.svc.mcpUrl, auth)
  const { prompts } = await client.listPrompts()
  t.same(prompts.map((p) => p.name), ['top_priority_fixes', 'security_risk_audit', 'legacy_automation_cleanup', 'connected_app_review', 'unused_field_cleanup'])
  for (const p of prompts) t.match(p.arguments, [{ name: 'orgId', required: true }], `${p.name} takes the org`)
  const done = await client.complete({ ref: { type: 'ref/prompt', name: 'security_risk_audit' }, argument: { name: 'orgId', value: org.salesforceId.slice(0, 6) } })
  t.ok(done.completion.values.includes(org.salesforceId), 'orgId completes to the caller orgs')
  const cat = await client.complete({ ref: { type: 'ref/prompt', name: 'top_priority_fixes' }, argument: { name: 'category', value: 'sec' } })
  t.same(cat.completion.values, ['security'])
  await t.rejects(client.complete({ ref: { type: 'ref/prompt', name: 'no_such_prompt' }, argument: { name: 'orgId', value: '' } }), { code: -32602, message: /Unknown prompt: no_such_prompt/ }, 'an unknown prompt is -32602, not an empty completion')
  const { resources } = await client.listResources()
  for (const r of resources) {
    const none = await client.complete({ ref: { type: 'ref/resource', uri: r.uri }, argument: { name: 'x', value: '' } })
    t.same(none.completion, { values: [], total: 0, hasMore: false }, `${r.uri}: a listed resource has nothing to complete, and is not unknown`)
  }
  await t.rejects(client.complete({ ref: { type: 'ref/resource', uri: 'resource://nothing-here' }, argument: { name: 'x', value: '' } }), { code: -32602 })
  // Every list is one page: a cursor can only be one this server never gave.
  const lists: Array<() => Promise<unknown>> = [() => client.listTools({ cursor: 'abc' }), () => client.listPrompts({ cursor: 'abc' }), () => client.listResources({ cursor: 'abc' }), () => client.listResourceTemplates({ cursor: 'abc' })]
  for (const list of lists) {
    await t.rejects(list(), { code: -32602, message: /Invalid cursor/ })
  }
})

for (const p of declared) {
  t.test(`${p.name}: every call it names succeeds with records`, async (t) => {
    const { client } = await mcpClient(t, ts.svc.mcpUrl, auth)
    const got = await client.getPrompt({ name: p.name, arguments: { orgId: org.salesforceId } })
    const text = (got.messages[0].content as { text: string }).text
    const plan = JSON.parse((got.messages[1].content as { resource: { text: string } }).resource.text) as { steps: Step[] }
    t.ok(plan.steps.length >= 2, 'a plan of several calls')
    const results: Data[] = []
    for (const [i, step] of plan.steps.entries()) {
      t.ok(text.includes(`${step.tool} ${JSON.stringify(step.arguments)}`), `step ${i + 1}: the text names the same call as the plan`)
      const source = step.from ? results[step.from.step - 1].slice(0, step.from.take) : []
      if (step.from) t.ok(source.length > 0, `step ${i + 1}: step ${step.from.step} gave records to continue with`)
      const calls = step.from?.each ? source.map((item) => resolve(step.arguments, item, source)) : [resolve(step.arguments, undefined, source)]
      let first: Data | undefined
      for (const args of calls) {
        const r = await client.callTool({ name: step.tool, arguments: args })
        t.notOk(r.isError, `step ${i + 1}: ${step.tool} ${JSON.stringify(args)}`)
        const data = (r.structuredContent as { data: Data | Record<string, unknown> }).data
        const rows = Array.isArray(data) ? data : [data]
        t.ok(rows.length > 0, `step ${i + 1}: ${step.tool} returned records`)
        first ??= rows
      }
      results.push(first ?? [])
    }
  })
}

t.test('the records are what the steps say they are', async (t) => {
  const { client } = await mcpClient(t, ts.svc.mcpUrl, auth)
  const call = async (name: string, args: Record<string, unknown>) => ((await client.callTool({ name, arguments: { orgId: org.salesforceId, ...args } })).structuredContent as { data: Data }).data
  const plan = async (name: string) => JSON.parse(((await client.getPrompt({ name, arguments: { orgId: org.salesforceId } })).messages[1].content as { resource: { text: string } }).resource.text) as { steps: Step[] }
  const top = (await plan('top_priority_fixes')).steps[0]
  const issues = await call(top.tool, top.arguments)
  t.ok(issues.length > 0, 'top priority fixes: issues listed')
  t.ok(issues.every((i) => (i.priority as number) >= 3 && i.namespace === null), 'top priority fixes: critical and high, fixable issues')
  const risky = (await plan('security_risk_audit')).steps[0]
  const profiles = await call(risky.tool, risky.arguments)
  t.ok(profiles.length > 0, 'risky profiles listed')
  t.ok(profiles.every((p) => p.modifyAllData || p.viewAllData || p.manageUsers || p.authorApex || p.dataExport), 'every profile listed holds a risky permission')
  const unused = (await plan('unused_field_cleanup')).steps[0]
  const fields = await call(unused.tool, unused.arguments)
  t.ok(fields.length > 0, 'candidate fields listed')
  t.ok(fields.every((f) => f.isCustom && (f.percentPopulated as number) < 5 && f.usedInLayouts === 0), 'rarely populated custom fields used nowhere')
})

t.test('a prompt argument that is not a valid value is refused (-32602), never replaced or spliced into a filter', async (t) => {
  const { client } = await mcpClient(t, ts.svc.mcpUrl, auth)
  const get = (name: string, args: Record<string, string>) => client.getPrompt({ name, arguments: { orgId: org.salesforceId, ...args } })
  for (const [name, args] of [
    ['connected_app_review', { days: 'abc' }],
    ['connected_app_review', { days: '0' }],
    ['connected_app_review', { days: '-5' }],
    ['connected_app_review', { days: '1.5' }],
    ['connected_app_review', { days: '99999' }],
    ['unused_field_cleanup', { percent: '150' }],
    ['unused_field_cleanup', { percent: 'abc' }],
    ['top_priority_fixes', { category: 'bogus' }],
    ['top_priority_fixes', { category: 'security),or(eq(priority,1)' }],
    ['security_risk_audit', { orgId: 'x") ; bad' }],
    ['security_risk_audit', { orgId: '00D5g000004ZxQ' }],
  ] as const) {
    await t.rejects(get(name, args), { code: -32602 }, `${name} ${JSON.stringify(args)}`)
  }
  await t.rejects(get('security_risk_audit', { orgId: 'x") ; bad' }), { message: /orgId must be a 15- or 18-character org id/ }, 'orgId is checked like the others')
  const plan = async (name: string, args: Record<string, string>) =>
    JSON.parse(((await get(name, args)).messages[1].content as { resource: { text: string } }).resource.text) as { steps: Step[] }
  t.match((await plan('unused_field_cleanup', { percent: '2.5' })).steps[0].arguments.filter, /lt\(percentPopulated,2\.5\)/, 'a decimal percent is used as given')
  t.match((await plan('connected_app_review', { days: '30' })).steps[0].arguments.filter, /lt\(lastUsedDate,\d{4}-\d{2}-\d{2}\)/)
  t.match((await plan('top_priority_fixes', { category: 'security' })).steps[0].arguments.filter, /eq\(category,security\)/)
})
