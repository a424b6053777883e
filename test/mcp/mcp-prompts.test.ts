/**
 * The prompts as offered (arguments, completions, refused arguments), and each walked as an assistant would: get it
 * for the large demo org, make exactly the tool calls it names (from its JSON plan, which must match its text), and
 * every call succeeds. A prompt naming a tool, field or filter that does not work fails here (and at start-up, see
 * test/runtime/registry.test.ts); what each plan finds is checked in mcp-prompt-plans.test.ts.
 */
import { t } from '../helpers/file-test.ts'
import { prompts as declared, registry as declaredRegistry } from '../../resources/index.ts'
import { startTestService } from '../helpers/service.ts'
import { mcpClient } from '../helpers/mcp.ts'
import { runPromptPlan } from '../helpers/prompt-plan.ts'
import { buildCatalog } from '../../runtime/surfaces/mcp/server.ts'
import { fixedVersions } from '../../runtime/core/version-state.ts'
import { compileRegistry } from '../../runtime/core/registry.ts'
import { definePrompt, type PromptStep } from '../../runtime/core/define.ts'

const ts = await startTestService(t)
const org = ts.seed.orgs.find((o) => o.large)!
const auth = await ts.keyHeader(org.accountId)

type Step = { tool: string; arguments: Record<string, unknown> }
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
  t.test(`${p.name}: every call it names succeeds`, async (t) => {
    const { client } = await mcpClient(t, ts.svc.mcpUrl, auth)
    const run = await runPromptPlan(client, p.name, { orgId: org.salesforceId })
    t.ok(run.plan.steps.length >= 2, 'a plan of several calls')
    for (const [i, s] of run.steps.entries()) {
      t.ok(run.text.includes(`${s.step.tool} ${JSON.stringify(s.step.arguments)}`), `step ${i + 1}: the text names the same call as the plan`)
      for (const c of s.calls) t.notOk(c.isError, `step ${i + 1}: ${s.step.tool} ${JSON.stringify(c.arguments)}`)
    }
    t.ok(run.steps[0].records.length > 0, 'the first call returns records')
  })
}

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
  await t.rejects(get('security_risk_audit', { orgId: 'x") ; bad' }), { message: /orgId contains '"': an org id has only letters and digits\./ }, 'orgId is checked like the others, saying what is wrong')
  await t.rejects(get('security_risk_audit', { orgId: '00D5g000004ZxQ' }), { message: /orgId has 14 characters: an org id has 15, or 18 with its checksum\./ })
  const plan = async (name: string, args: Record<string, string>) =>
    JSON.parse(((await get(name, args)).messages[1].content as { resource: { text: string } }).resource.text) as { steps: Step[] }
  t.match((await plan('unused_field_cleanup', { percent: '2.5' })).steps[0].arguments.filter, /lt\(percentPopulated,2\.5\)/, 'a decimal percent is used as given')
  t.match((await plan('connected_app_review', { days: '30' })).steps[0].arguments.filter, /lt\(lastUsedDate,\d{4}-\d{2}-\d{2}\)/)
  t.match((await plan('top_priority_fixes', { category: 'security' })).steps[0].arguments.filter, /eq\(category,security\)/)
})

t.test('a step referring to a field its source step does not return stops start-up', async (t) => {
  const resources = compileRegistry(declaredRegistry)
  const build = (steps: PromptStep[]) => () =>
    buildCatalog({
      resources,
      versions: fixedVersions([]),
      clock: Date.now,
      prompts: [definePrompt({ name: 'bad_prompt', title: 'Bad', description: 'x', arguments: [{ name: 'orgId', description: 'x', required: true, complete: 'org' }], task: () => 'x', report: 'x', steps: ({ args }) => steps.map((s) => ({ ...s, arguments: { orgId: args.orgId!, ...s.arguments } })) })],
    })
  const fields: PromptStep = { tool: 'list_org_fields', arguments: { fields: ['apiName'] }, why: 'x' }
  const count: PromptStep = { tool: 'count_org_records', arguments: { resource: 'fields', by: ['objectApiName'] }, why: 'x' }
  const follow = (filter: string): PromptStep => ({ tool: 'list_org_fields', arguments: { filter }, why: 'x', from: { step: 1, take: 5 } })
  t.throws(build([fields, follow('in(objectApiName,$items.objectApiName)')]), /refers to \$items.objectApiName, not a field of step 1's records/, 'a field left out by fields')
  t.doesNotThrow(build([fields, follow('in(id,$items.id)')]), "the record's id always comes")
  t.doesNotThrow(build([count, follow('in(objectApiName,$items.objectApiName)')]), "a count's by field")
  t.throws(build([count, follow('in(apiName,$items.apiName)')]), /refers to \$items.apiName/, 'a count has only its by fields and count')
  t.throws(build([{ ...fields, arguments: { fields: ['$item.apiName'] } }]), /a list of names, without references/)
  t.throws(build([{ ...fields, arguments: { fields: ['colour'] } }]), /would fail: Unknown field "colour"/, 'fields are checked as the tool checks them')
  t.throws(build([{ ...count, arguments: { resource: 'fields', by: ['label'] } }]), /would fail: Cannot count by "label"/, 'so is by')
  t.throws(build([{ ...count, arguments: { ...count.arguments, filter: 'eq(colour,red)' } }]), /would fail: Unknown filter field "colour"/, "and a count's filter")
})
