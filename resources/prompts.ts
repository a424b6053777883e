/** The MCP prompts: recipes an assistant follows, each step an exact tool call (validated against the registry at start-up). */
import { definePrompt, type PromptArgument } from '../runtime/define.ts'

const orgArg: PromptArgument = { name: 'orgId', description: 'The org to work on (15 or 18 characters; list_orgs lists them).', required: true, complete: 'org' }

/** `YYYY-MM-DD` that many days before `today`. */
function daysBefore(today: string, days: number): string {
  return new Date(Date.parse(`${today}T00:00:00Z`) - days * 86_400_000).toISOString().slice(0, 10)
}

/** A numeric argument (checked against its declared range before the prompt is rendered), or the default. */
function numberOr(raw: string | undefined, dflt: number): number {
  return raw === undefined || raw === '' ? dflt : Number(raw)
}

const RISKY = 'or(eq(modifyAllData,true),eq(viewAllData,true),eq(manageUsers,true),eq(authorApex,true),eq(dataExport,true))'

export const topPriorityFixes = definePrompt({
  name: 'top_priority_fixes',
  title: 'Top priority fixes',
  description: 'What to fix first in an org: its critical and high issues, cheapest first, each with the recommendation and remediation steps.',
  arguments: [orgArg, { name: 'category', description: 'Only issues of this category (see service://issue-categories).', complete: 'field:issues.category' }],
  task: ({ args }) => `Help the administrator of org ${args.orgId} decide what to fix first${args.category ? ` among its ${args.category} issues` : ''}.`,
  steps: ({ args }) => [
    {
      tool: 'list_org_issues',
      arguments: {
        orgId: args.orgId!,
        filter: args.category ? `and(isNull(namespace),ge(priority,3),eq(category,${args.category}))` : 'and(isNull(namespace),ge(priority,3))',
        sort: '-priority,effort',
        limit: 20,
      },
      why: 'The critical (4) and high (3) issues the administrator can fix (not from managed packages), most severe and cheapest first.',
    },
    {
      tool: 'get_org_issue_recommendation',
      arguments: { orgId: args.orgId!, issueKey: '$item.issueKey' },
      from: { step: 1, take: 5, each: true },
      why: 'Why each of the top five matters, how to fix it and what it affects.',
    },
  ],
  report: 'List the five issues in that order: title, priority, effort and estimatedMinutes, why it matters (rationale), the remediation steps, and the affected items. End with the other listed issues in one line each.',
})

export const securityRiskAudit = definePrompt({
  name: 'security_risk_audit',
  title: 'Security risk audit',
  description: 'Who holds dangerous permissions (Modify All Data, View All Data, Manage Users, Author Apex, Export), which connected apps any user can authorize, and the security issues of the latest scan.',
  arguments: [orgArg],
  task: ({ args }) => `Audit the security of org ${args.orgId}: powerful permissions, open connected apps and the security issues the scan found.`,
  steps: ({ args }) => [
    { tool: 'list_org_sf_profiles', arguments: { orgId: args.orgId!, filter: RISKY, sort: '-riskyPermissionCount', limit: 50 }, why: 'Profiles granting at least one risky permission, most risky first.' },
    {
      tool: 'list_org_permission_sets',
      arguments: { orgId: args.orgId!, filter: `and(gt(assignedUsers,0),${RISKY})`, sort: '-riskyPermissionCount', limit: 50 },
      why: 'Permission sets that grant a risky permission to at least one user.',
    },
    {
      tool: 'list_org_connected_apps',
      arguments: { orgId: args.orgId!, filter: 'eq(permittedUsers,all_self_authorize)', sort: '-userCount', limit: 50 },
      why: 'Connected apps every user may authorize without an administrator, most used first.',
    },
    { tool: 'list_org_issues', arguments: { orgId: args.orgId!, filter: 'eq(category,security)', sort: '-priority,effort', limit: 50 }, why: 'The security issues of the latest scan.' },
  ],
  report: 'Report the highest risks first: which profiles and permission sets grant which risky permissions to how many users, the self-authorized connected apps, then the security issues by priority. Recommend the smallest change that removes each risk.',
})

export const legacyAutomationCleanup = definePrompt({
  name: 'legacy_automation_cleanup',
  title: 'Legacy automation cleanup',
  description: 'Active workflow rules and Process Builder processes to migrate to flows, and the objects where they overlap with triggers.',
  arguments: [orgArg],
  task: ({ args }) => `Plan the migration of legacy automation in org ${args.orgId} to record-triggered flows.`,
  steps: ({ args }) => [
    { tool: 'list_org_workflows', arguments: { orgId: args.orgId!, filter: 'eq(active,true)', sort: 'objectApiName,name', limit: 200 }, why: 'The active workflow rules, by object.' },
    {
      tool: 'list_org_flows',
      arguments: { orgId: args.orgId!, filter: 'and(eq(processType,process_builder),eq(status,active))', sort: 'apiName', limit: 200 },
      why: 'The active Process Builder processes (retired by the platform in favour of flows).',
    },
    { tool: 'list_org_triggers', arguments: { orgId: args.orgId!, filter: 'eq(status,active)', sort: 'objectApiName,name', limit: 200 }, why: 'The active Apex triggers, to find objects automated twice.' },
    { tool: 'list_org_issues', arguments: { orgId: args.orgId!, filter: 'eq(category,automation)', sort: '-priority,effort', limit: 50 }, why: 'The automation issues of the latest scan.' },
  ],
  report: 'Group the workflow rules and processes by object. For each object, say what to rebuild as one record-triggered flow, and flag objects that also have active triggers (order-of-execution risk). Finish with the automation issues.',
})

export const connectedAppReview = definePrompt({
  name: 'connected_app_review',
  title: 'Connected app review',
  description: 'Connected apps not used for a long time (or never), who they are assigned to, and the apps any user can authorize.',
  arguments: [orgArg, { name: 'days', description: 'Unused for at least this many days: a whole number from 1 to 36500 (default 365).', number: { integer: true, min: 1, max: 36_500 } }],
  task: ({ args }) => `Review the connected apps of org ${args.orgId}: which can be removed, and which are too open.`,
  steps: ({ args, today }) => [
    {
      tool: 'list_org_connected_apps',
      arguments: { orgId: args.orgId!, filter: `or(isNull(lastUsedDate),lt(lastUsedDate,${daysBefore(today, numberOr(args.days, 365))}))`, sort: 'lastUsedDate', limit: 50 },
      why: 'Apps never used, or not used in that time, longest unused first.',
    },
    {
      tool: 'list_org_connected_app_assignments',
      arguments: { orgId: args.orgId!, filter: 'in(connectedAppId,$items.id)', limit: 200 },
      from: { step: 1, take: 10 },
      why: 'The profiles and permission sets the first ten of them are assigned to.',
    },
    {
      tool: 'list_org_connected_apps',
      arguments: { orgId: args.orgId!, filter: 'eq(permittedUsers,all_self_authorize)', sort: '-userCount', limit: 50 },
      why: 'Apps every user may authorize without an administrator.',
    },
  ],
  report: 'List the removal candidates with their last use and assignments (removing an assignment first is the safe step), then the self-authorized apps to switch to admin-approved.',
})

export const unusedFieldCleanup = definePrompt({
  name: 'unused_field_cleanup',
  title: 'Unused field cleanup',
  description: 'Custom fields that are almost never populated and not used by layouts, reports or automation: candidates for deletion.',
  arguments: [orgArg, { name: 'percent', description: 'Populated on fewer than this share of records: a number from 0 to 100, e.g. 2.5 (default 5).', number: { integer: false, min: 0, max: 100 } }],
  task: ({ args }) => `Find custom fields of org ${args.orgId} that can be deleted.`,
  steps: ({ args }) => [
    {
      tool: 'list_org_fields',
      arguments: {
        orgId: args.orgId!,
        filter: `and(eq(isCustom,true),isNull(namespace),lt(percentPopulated,${numberOr(args.percent, 5)}),eq(usedInLayouts,0),eq(usedInReports,0),eq(usedInAutomations,0))`,
        sort: 'percentPopulated,objectApiName',
        limit: 200,
      },
      why: 'Custom fields (not from managed packages) rarely populated and used nowhere, emptiest first.',
    },
    {
      tool: 'list_org_objects',
      arguments: { orgId: args.orgId!, filter: 'and(eq(isCustom,true),gt(customFieldCount,0))', sort: '-customFieldCount', limit: 20 },
      why: 'The custom objects with the most custom fields, where clean-up helps most.',
    },
    { tool: 'list_org_issues', arguments: { orgId: args.orgId!, filter: 'eq(category,data_quality)', sort: '-priority,effort', limit: 50 }, why: 'The data-quality issues of the latest scan.' },
  ],
  report: 'Group the candidate fields by object with their populated share, and say how to confirm each is safe to delete (field history, integrations, Apex references) before deleting it.',
})

/** The prompts, in the order prompts/list shows them. */
export const prompts = [topPriorityFixes, securityRiskAudit, legacyAutomationCleanup, connectedAppReview, unusedFieldCleanup]
