/**
 * Each prompt's plan, run as an assistant would (test/helpers/prompt-plan.ts: get the prompt, make every call of its
 * JSON plan with the official MCP client, `$item`/`$items` resolved as its text says), finds what the data says,
 * computed here from the scan bundles the data was imported from:
 * - legacy automation counts every active workflow rule and every active legacy process the scan's issues count
 *   (Process Builder and workflow processes);
 * - top fixes rank by impact (priority, then affectedCount), so a grant nobody holds is never first, even when a
 *   scanner rates it critical;
 * - the security audit reads login activity: the dormant accounts of the risky profiles;
 * - the connected app review and the unused field clean-up find the apps and fields their issues name.
 * Run on the seeded demo's largest org and on a copy of it at a larger scale, where the rarer records exist (an active
 * workflow process, grants nobody holds); one of those grants is made critical and the cheapest to fix. The characters
 * of the tool results of each job on the largest org stay within 30,000 (at full scale: `npm run bench:prompts`).
 */
import type { Test } from 'tap'
import { t } from '../helpers/file-test.ts'
import { DEMO_ORG_DEFS, demoBundle } from '../../demo/seed.ts'
import { importScan, type ScanBundle } from '../../runtime/platform/import.ts'
import { checksum } from '../../runtime/core/org-id.ts'
import { SEED_SCALE, startTestService } from '../helpers/service.ts'
import { mcpClient } from '../helpers/mcp.ts'
import { runPromptPlan, type PlanRun, type Rec } from '../helpers/prompt-plan.ts'

const BUDGET = 30_000
/** Today for the prompts: the day after the demo's latest scans. */
const NOW = Date.parse('2026-11-01T00:00:00Z')
const DAY = 86_400_000

/** A record of a bundle, as generated. */
type Row = Record<string, any>
/** A resource's records in a bundle. */
const rows = (b: ScanBundle, name: string) => b.data[name] as Row[]

const ts = await startTestService(t, { clock: () => NOW })
const large = ts.seed.orgs.find((o) => o.large)!
const def = DEMO_ORG_DEFS.find((d) => d.salesforceId === large.salesforceId)!
const resources = ts.svc.ctx.resources
const seeded = demoBundle(def, def.scans.length - 1, { scale: SEED_SCALE, resources })

// The larger copy: a new org of the same account, and one grant nobody holds rated critical and trivial to fix.
const bigger = structuredClone(demoBundle(def, def.scans.length - 1, { scale: 0.1, resources }))
const copyId = '00D5g000009PrCp' + checksum('00D5g000009PrCp')
bigger.org = { ...bigger.org, salesforceId: copyId, name: 'Acme Production (larger copy)' }
const issuesOf = (b: ScanBundle) => rows(b, 'issues')
const unheld = issuesOf(bigger).find((i) => /^security\.(modify_all_data|view_all_data|data_export)\./.test(String(i.issueKey)) && i.affectedCount === 0)!
Object.assign(unheld, { priority: 4, effort: 1 })
Object.assign((bigger.data.recommendations as Rec[]).find((r) => r.issueKey === unheld.issueKey)!, { priority: 4, effort: 1 })
await importScan(ts.svc.db.sql, resources, large.accountId, bigger)
ts.svc.adminChanged({ account: large.accountId })

const auth = await ts.keyHeader(large.accountId)
const cases: Array<{ name: string; orgId: string; bundle: ScanBundle }> = [
  { name: 'the largest demo org', orgId: large.salesforceId, bundle: seeded },
  { name: 'its larger copy', orgId: copyId, bundle: bigger },
]

t.ok(unheld, 'the larger copy has a grant nobody holds')
t.ok((bigger.data.flows as Rec[]).some((f) => f.processType === 'workflow' && f.status === 'active'), 'the larger copy has an active workflow process')

/** The issues of a rule (`<category>.<rule>.<subject>`). */
const ruleIssues = (b: ScanBundle, rule: string) => issuesOf(b).filter((i) => String(i.issueKey).startsWith(`${rule}.`))
/** The affected items of an issue, from its recommendation. */
const affected = (b: ScanBundle, issueKey: unknown) => ((b.data.recommendations as Rec[]).find((r) => r.issueKey === issueKey)!.affectedItems as Rec[])
const tally = (xs: readonly unknown[]) => {
  const m = new Map<string, number>()
  for (const x of xs) m.set(String(x), (m.get(String(x)) ?? 0) + 1)
  return m
}
const sorted = (xs: Iterable<unknown>) => [...xs].map(String).sort()
const isRisky = (p: Row) => p.modifyAllData || p.viewAllData || p.manageUsers || p.authorApex || p.dataExport

/** Every call of the run succeeded; the records of each step, by its number. */
function stepsOf(t: Test, run: PlanRun): Rec[][] {
  for (const [i, s] of run.steps.entries()) {
    for (const c of s.calls) t.notOk(c.isError, `step ${i + 1}: ${s.step.tool}${c.isError ? ` ${JSON.stringify(c.arguments)} failed: ${c.structured?.message}` : ''}`)
  }
  return run.steps.map((s) => s.records)
}
const totalOf = (run: PlanRun, step: number) => run.steps[step - 1].calls[0]?.structured?.meta?.total as number | undefined

for (const c of cases) {
  t.test(`${c.name}: legacy automation counts every active workflow rule and legacy process the issues count`, async (t) => {
    const { client } = await mcpClient(t, ts.svc.mcpUrl, auth)
    const run = await runPromptPlan(client, 'legacy_automation_cleanup', { orgId: c.orgId })
    stepsOf(t, run)
    const wfIssues = ruleIssues(c.bundle, 'automation.workflow_rules')
    const processIssues = ruleIssues(c.bundle, 'automation.process_builder')
    const rules = run.steps.find((s) => s.step.tool === 'list_org_workflows')!
    const processes = run.steps.find((s) => s.step.tool === 'list_org_flows')!
    const ruleCount = wfIssues.reduce((a, i) => a + (i.affectedCount as number), 0)
    t.equal(rules.calls[0].structured?.meta?.total, ruleCount, `the active workflow rules: ${ruleCount}, as the issues count them`)
    t.equal(ruleCount, rows(c.bundle, 'workflows').filter((w) => w.active).length, 'which are all the active rules')
    t.same(sorted(rules.records.map((r) => r.id)), sorted(wfIssues.flatMap((i) => affected(c.bundle, i.issueKey).map((a) => a.id))), 'listed, each one')
    t.ok(rules.records.every((r) => typeof r.objectApiName === 'string'), 'with its object')
    t.equal(processes.calls[0].structured?.meta?.total, processIssues.length, `the active legacy processes: ${processIssues.length}, one issue each`)
    t.same(sorted(processes.records.map((r) => r.apiName)), sorted(processIssues.flatMap((i) => affected(c.bundle, i.issueKey).map((a) => a.name))), 'listed, each one')
    const triggers = run.steps.find((s) => s.step.tool === 'list_org_triggers')!
    t.same(sorted(new Set(triggers.records.map((r) => r.objectApiName))), sorted(new Set(rows(c.bundle, 'triggers').filter((x) => x.status === 'active').map((x) => x.objectApiName))), 'the objects with active triggers')
  })

  t.test(`${c.name}: top fixes rank by impact, never a grant nobody holds first`, async (t) => {
    const { client } = await mcpClient(t, ts.svc.mcpUrl, auth)
    const run = await runPromptPlan(client, 'top_priority_fixes', { orgId: c.orgId })
    const [byPriority, listed] = stepsOf(t, run)
    const recs = run.steps[2].calls.map((x) => x.structured?.data as Rec)
    const own = issuesOf(c.bundle).filter((i) => i.namespace === null)
    t.same(new Map(byPriority.map((g) => [String(g.priority), g.count])), tally(own.map((i) => i.priority)), 'the issues counted by priority')
    const rank = (a: Rec, b: Rec) => (b.priority as number) - (a.priority as number) || (b.affectedCount as number) - (a.affectedCount as number) || (a.effort as number) - (b.effort as number)
    const expected = own.filter((i) => (i.priority as number) >= 3).sort(rank)
    const key = (i: Rec) => `${i.priority}/${i.affectedCount}/${i.effort}`
    t.same(listed.map(key), expected.slice(0, listed.length).map(key), 'the most severe, then the most affecting, then the cheapest')
    t.equal(listed.length, Math.min(expected.length, 15))
    t.ok(listed.length > 0 && (listed[0].affectedCount as number) > 0, `the first affects someone: ${listed[0]?.title}`)
    if (c.bundle === bigger) {
      const at = listed.findIndex((i) => i.issueKey === unheld.issueKey)
      const held = expected.filter((i) => i.priority === 4 && (i.affectedCount as number) > 0).length
      t.ok(at === -1 || at >= held, `the critical grant nobody holds comes after the ${held} critical issues that affect someone`)
    }
    t.equal(run.steps[2].calls.length, Math.min(5, listed.length), 'a recommendation for each of the top five')
    t.same(recs.map((r) => r.issueKey), listed.slice(0, 5).map((i) => i.issueKey), 'in that order')
    t.ok(recs.every((r) => Array.isArray(r.remediationSteps) && typeof r.rationale === 'string' && !('references' in r)), 'with what to do, and only what the report uses')
  })

  t.test(`${c.name}: the security audit includes login activity`, async (t) => {
    const { client } = await mcpClient(t, ts.svc.mcpUrl, auth)
    const run = await runPromptPlan(client, 'security_risk_audit', { orgId: c.orgId })
    stepsOf(t, run)
    const step = (tool: string, resource?: string) => run.steps.find((s) => s.step.tool === tool && (resource === undefined || s.step.arguments.resource === resource))!
    const profiles = rows(c.bundle, 'sfProfiles').filter((p) => p.assignedUsers > 0 && isRisky(p))
    t.same(sorted(step('list_org_sf_profiles').records.map((p) => p.name)), sorted(profiles.map((p) => p.name)), 'every profile granting a risky permission to someone')
    const sets = rows(c.bundle, 'permissionSets').filter((p) => p.assignedUsers > 0 && isRisky(p))
    t.same(sorted(step('list_org_permission_sets').records.map((p) => p.name)), sorted(sets.map((p) => p.name)), 'every such permission set')
    const names = new Set(profiles.map((p) => p.name))
    const dormant = rows(c.bundle, 'loginActivity').filter((u) => u.isActive && u.logins90 === 0 && names.has(u.profileName))
    const counted = step('count_org_records', 'loginActivity')
    const list = step('list_org_login_activity')
    t.ok(counted && list, 'login activity is read')
    if (dormant.length === 0) t.equal(counted.calls[0]?.structured?.meta?.total ?? 0, 0, 'no dormant account holds a risky profile')
    else {
      t.same(new Map(counted.records.map((g) => [g.profileName, g.count])), tally(dormant.map((u) => u.profileName)), 'the dormant accounts of each risky profile')
      t.equal(list.calls[0].structured?.meta?.total, dormant.length, 'listed with their total')
      t.ok(list.records.every((u) => names.has(u.profileName as string) && typeof u.username === 'string'), 'by name')
    }
    t.ok(dormant.length > 0 || c.bundle === seeded, 'the larger copy has dormant accounts holding risky profiles')
    t.same(sorted(step('list_org_connected_apps').records.map((a) => a.name)), sorted(rows(c.bundle, 'connectedApps').filter((a) => a.permittedUsers === 'all_self_authorize').map((a) => a.name)), 'the self-authorized apps')
    const security = issuesOf(c.bundle).filter((i) => i.category === 'security')
    t.same(new Map(step('count_org_records', 'issues').records.map((g) => [String(g.priority), g.count])), tally(security.map((i) => i.priority)), 'the security issues by priority')
  })

  t.test(`${c.name}: the connected app review finds the apps its issues name`, async (t) => {
    const { client } = await mcpClient(t, ts.svc.mcpUrl, auth)
    const run = await runPromptPlan(client, 'connected_app_review', { orgId: c.orgId })
    const [unused, assignments, open] = stepsOf(t, run)
    const named = ruleIssues(c.bundle, 'security.unused_connected_app').flatMap((i) => affected(c.bundle, i.issueKey).map((a) => Number(a.id)))
    t.ok(named.length > 0, 'the scan names unused apps')
    const ids = new Set(unused.map((a) => a.id))
    t.ok(named.every((id) => ids.has(id)), `every unused app an issue names (${named.length}) is a removal candidate`)
    const cutoff = NOW - 365 * DAY
    t.same(sorted(ids), sorted(rows(c.bundle, 'connectedApps').filter((a) => a.lastUsedDate === null || Date.parse(a.lastUsedDate) < cutoff).map((a) => a.id)), 'and only apps unused for 365 days')
    t.same(sorted(assignments.map((a) => a.id)), sorted(rows(c.bundle, 'connectedAppAssignments').filter((a) => ids.has(a.connectedAppId)).map((a) => a.id)), 'with every assignment of theirs')
    const full = ruleIssues(c.bundle, 'security.self_authorized_full_access').flatMap((i) => affected(c.bundle, i.issueKey).map((a) => Number(a.id)))
    t.ok(full.every((id) => open.some((a) => a.id === id && (a.oauthScopes as string[]).includes('full'))), 'every self-authorized app with full access an issue names, with its scopes')
    t.same(sorted(open.map((a) => a.id)), sorted(rows(c.bundle, 'connectedApps').filter((a) => a.permittedUsers === 'all_self_authorize').map((a) => a.id)), 'every self-authorized app')
  })

  t.test(`${c.name}: the unused field clean-up finds the fields its issues name`, async (t) => {
    const { client } = await mcpClient(t, ts.svc.mcpUrl, auth)
    const run = await runPromptPlan(client, 'unused_field_cleanup', { orgId: c.orgId })
    const [perObject, listed] = stepsOf(t, run)
    const fields = rows(c.bundle, 'fields')
    const candidate = (f: Row) => f.isCustom && f.namespace === null && f.recordCount > 0 && f.percentPopulated < 5 && f.usedInLayouts === 0 && f.usedInReports === 0 && f.usedInAutomations === 0
    const candidates = fields.filter(candidate)
    const counts = tally(candidates.map((f) => f.objectApiName))
    t.equal(totalOf(run, 1), candidates.length, `every candidate counted: ${candidates.length}`)
    t.equal(run.steps[0].calls[0].structured?.meta?.groups, counts.size, `on ${counts.size} objects`)
    t.ok(perObject.every((g) => counts.get(g.objectApiName as string) === g.count), 'each object with its number of candidates')
    t.same(perObject.map((g) => g.count), [...counts.values()].sort((a, b) => b - a).slice(0, perObject.length), 'the objects with the most first')
    // The scan's own finding: fields (almost) never populated; those of the org's own, used nowhere, are candidates.
    const byId = new Map(fields.map((f) => [String(f.id), f]))
    const flagged = ruleIssues(c.bundle, 'data_quality.unused_field').map((i) => byId.get(String(affected(c.bundle, i.issueKey)[0].id))!)
    const deletable = flagged.filter((f) => f.namespace === null && f.usedInLayouts === 0 && f.usedInReports === 0 && f.usedInAutomations === 0)
    t.ok(deletable.length > 0, 'the scan flags fields used nowhere')
    t.ok(deletable.every(candidate), 'every one of them is a candidate')
    const top = new Set(perObject.slice(0, 5).map((g) => g.objectApiName))
    const shown = new Set(listed.map((f) => f.id))
    t.ok(listed.length < 100, 'the top objects\' candidates fit in one page')
    t.same(sorted(shown), sorted(candidates.filter((f) => top.has(f.objectApiName)).map((f) => f.id)), 'the candidates of the top five objects are listed')
    const named = deletable.filter((f) => top.has(f.objectApiName))
    t.ok(named.every((f) => shown.has(f.id)), `with every flagged field of theirs (${named.length})`)
  })
}

t.test('each job costs at most 30,000 characters of tool results on the largest org', async (t) => {
  const { client } = await mcpClient(t, ts.svc.mcpUrl, auth)
  const names = (await client.listPrompts()).prompts.map((p) => p.name)
  t.equal(names.length, 5)
  for (const name of names) {
    for (const c of cases) {
      const run = await runPromptPlan(client, name, { orgId: c.orgId })
      t.ok(run.chars > 0 && run.chars <= BUDGET, `${name} on ${c.name}: ${run.chars} characters`)
    }
  }
})
