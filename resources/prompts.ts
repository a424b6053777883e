/**
 * The MCP prompts: recipes an assistant follows, each step an exact tool call (validated against the registry at
 * start-up). Each step fetches only the fields its job needs (`fields`), and breakdowns are grouped counts
 * (`count_org_records`) rather than pages of records, so that a job's tool results stay within 30,000 characters on
 * the largest demo org (`npm run bench:prompts` measures them; docs/adr/0155-prompt-plans.md).
 */
import { definePrompt, type PromptArgument } from '../runtime/core/define.ts'

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
const RISKY_FIELDS = ['modifyAllData', 'viewAllData', 'manageUsers', 'authorApex', 'dataExport', 'riskyPermissionCount']
/** Most severe first, then what affects the most users or items, then the cheapest: a grant nobody holds never leads. */
const BY_IMPACT = '-priority,-affectedCount,effort'

export const topPriorityFixes = definePrompt({
  name: 'top_priority_fixes',
  title: 'Top priority fixes',
  description: 'What to fix first in an org: its critical and high issues ranked by impact (priority, then how many users or items each affects), each with the recommendation and remediation steps.',
  arguments: [orgArg, { name: 'category', description: 'Only issues of this category (see service://issue-categories).', complete: 'field:issues.category' }],
  task: ({ args }) => `Help the administrator of org ${args.orgId} decide what to fix first${args.category ? ` among its ${args.category} issues` : ''}.`,
  steps: ({ args }) => {
    const own = args.category ? `and(isNull(namespace),eq(category,${args.category}))` : 'isNull(namespace)'
    return [
      {
        tool: 'count_org_records',
        arguments: { orgId: args.orgId!, resource: 'issues', by: ['priority'], filter: own, limit: 4 },
        why: 'How many issues the administrator can fix (not from managed packages) each priority has: the size of the whole job.',
      },
      {
        tool: 'list_org_issues',
        arguments: {
          orgId: args.orgId!,
          filter: args.category ? `and(isNull(namespace),ge(priority,3),eq(category,${args.category}))` : 'and(isNull(namespace),ge(priority,3))',
          sort: BY_IMPACT,
          fields: ['title', 'category', 'priority', 'effort', 'affectedCount'],
          limit: 15,
        },
        why: 'The critical (4) and high (3) issues, ranked by impact: most severe first, then those affecting the most users or items (affectedCount), then the cheapest.',
      },
      {
        tool: 'get_org_issue_recommendation',
        arguments: { orgId: args.orgId!, issueKey: '$item.issueKey', fields: ['summary', 'rationale', 'remediationSteps', 'affectedItems', 'estimatedMinutes'] },
        from: { step: 2, take: 5, each: true },
        why: 'Why each of the top five matters, how to fix it and what it affects.',
      },
    ]
  },
  report: 'List the five issues in the order of step 2 (never reorder them by effort alone: an issue affecting nobody, affectedCount 0, is a latent risk and comes last): title, priority, how many users or items it affects, effort and estimatedMinutes, why it matters (rationale), the remediation steps, and the affected items. Then the other listed issues in one line each, and how many issues remain at each priority (step 1).',
})

export const securityRiskAudit = definePrompt({
  name: 'security_risk_audit',
  title: 'Security risk audit',
  description: 'Who holds dangerous permissions (Modify All Data, View All Data, Manage Users, Author Apex, Export) and whether those accounts are still used, which connected apps any user can authorize, and the security issues of the latest scan.',
  arguments: [orgArg],
  task: ({ args }) => `Audit the security of org ${args.orgId}: powerful permissions and the accounts holding them, open connected apps and the security issues the scan found.`,
  steps: ({ args }) => {
    const dormant = 'and(eq(isActive,true),eq(logins90,0),in(profileName,$items.name))'
    return [
      {
        tool: 'list_org_sf_profiles',
        arguments: { orgId: args.orgId!, filter: `and(gt(assignedUsers,0),${RISKY})`, sort: '-riskyPermissionCount,-assignedUsers', fields: ['name', 'assignedUsers', 'activeUsers', ...RISKY_FIELDS], limit: 50 },
        why: 'Profiles granting at least one risky permission to at least one user, most risky first.',
      },
      {
        tool: 'list_org_permission_sets',
        arguments: { orgId: args.orgId!, filter: `and(gt(assignedUsers,0),${RISKY})`, sort: '-riskyPermissionCount,-assignedUsers', fields: ['name', 'namespace', 'assignedUsers', ...RISKY_FIELDS], limit: 50 },
        why: 'Permission sets granting a risky permission to at least one user, most risky first.',
      },
      {
        tool: 'count_org_records',
        arguments: { orgId: args.orgId!, resource: 'loginActivity', by: ['profileName'], filter: dormant, limit: 50 },
        from: { step: 1, take: 50 },
        why: 'Login activity: per risky profile, its active users who have not logged in for 90 days (dormant accounts holding dangerous permissions, the first to deactivate).',
      },
      {
        tool: 'list_org_login_activity',
        arguments: { orgId: args.orgId!, filter: dormant, sort: 'lastLoginDate', fields: ['username', 'profileName', 'lastLoginDate'], limit: 15 },
        from: { step: 1, take: 50 },
        why: 'Those dormant accounts by name, never logged in or longest idle first (meta.total counts them all).',
      },
      {
        tool: 'list_org_connected_apps',
        arguments: { orgId: args.orgId!, filter: 'eq(permittedUsers,all_self_authorize)', sort: '-userCount', fields: ['name', 'namespace', 'oauthScopes', 'userCount', 'lastUsedDate'], limit: 50 },
        why: 'Connected apps every user may authorize without an administrator, most used first (the scope full is the worst).',
      },
      {
        tool: 'count_org_records',
        arguments: { orgId: args.orgId!, resource: 'issues', by: ['priority'], filter: 'eq(category,security)', limit: 4 },
        why: 'How many security issues the scan found at each priority.',
      },
      {
        tool: 'list_org_issues',
        arguments: { orgId: args.orgId!, filter: 'and(eq(category,security),ge(priority,3))', sort: BY_IMPACT, fields: ['title', 'priority', 'affectedCount'], limit: 15 },
        why: 'The critical and high security issues, by impact (meta.total counts them).',
      },
    ]
  },
  report: 'Report the highest risks first: which profiles and permission sets grant which risky permissions to how many users, how many of those accounts are dormant (active, no login for 90 days; name the first ones) and should be deactivated, the self-authorized connected apps, then the security issues by priority. Recommend the smallest change that removes each risk.',
})

export const legacyAutomationCleanup = definePrompt({
  name: 'legacy_automation_cleanup',
  title: 'Legacy automation cleanup',
  description: 'Every active workflow rule and legacy process (Process Builder and workflow processes) to migrate to flows, by object, and the objects where they overlap with triggers.',
  arguments: [orgArg],
  task: ({ args }) => `Plan the migration of legacy automation in org ${args.orgId} to record-triggered flows.`,
  steps: ({ args }) => [
    {
      tool: 'list_org_workflows',
      arguments: { orgId: args.orgId!, filter: 'eq(active,true)', sort: 'objectApiName,name', fields: ['name', 'objectApiName'], limit: 200 },
      why: 'Every active workflow rule, by object (meta.total counts them; page on with offset if it is more than 200).',
    },
    {
      tool: 'list_org_flows',
      arguments: { orgId: args.orgId!, filter: 'and(in(processType,process_builder,workflow),eq(status,active))', sort: 'apiName', fields: ['apiName', 'processType', 'objectApiName'], limit: 200 },
      why: 'Every active legacy process: Process Builder and workflow processes, both retired in favour of record-triggered flows.',
    },
    {
      tool: 'list_org_triggers',
      arguments: { orgId: args.orgId!, filter: 'eq(status,active)', sort: 'objectApiName,name', fields: ['objectApiName'], limit: 200 },
      why: 'The objects with active Apex triggers (one record per trigger), to find objects automated twice.',
    },
    {
      tool: 'list_org_issues',
      arguments: { orgId: args.orgId!, filter: 'eq(category,automation)', sort: BY_IMPACT, fields: ['title', 'priority', 'affectedCount'], limit: 10 },
      why: 'The automation issues of the latest scan, those affecting the most first (meta.total counts them).',
    },
  ],
  report: 'Say how many active workflow rules and legacy processes there are (the meta.total of steps 1 and 2). Group them by object; for each object, say what to rebuild as one record-triggered flow, and flag objects that also have active triggers (order-of-execution risk). Finish with the automation issues.',
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
      arguments: {
        orgId: args.orgId!,
        filter: `or(isNull(lastUsedDate),lt(lastUsedDate,${daysBefore(today, numberOr(args.days, 365))}))`,
        sort: 'lastUsedDate',
        fields: ['name', 'namespace', 'lastUsedDate', 'userCount', 'permittedUsers'],
        limit: 50,
      },
      why: 'Apps never used, or not used in that time (managed packages\' too), never used and longest unused first.',
    },
    {
      tool: 'list_org_connected_app_assignments',
      arguments: { orgId: args.orgId!, filter: 'in(connectedAppId,$items.id)', fields: ['connectedAppId', 'assigneeName'], limit: 200 },
      from: { step: 1, take: 50 },
      why: 'The profiles and permission sets those apps are assigned to.',
    },
    {
      tool: 'list_org_connected_apps',
      arguments: { orgId: args.orgId!, filter: 'eq(permittedUsers,all_self_authorize)', sort: '-userCount', fields: ['name', 'namespace', 'oauthScopes', 'userCount', 'lastUsedDate'], limit: 50 },
      why: 'Apps every user may authorize without an administrator, most used first (the scope full is the worst).',
    },
  ],
  report: 'List the removal candidates with their last use, users and assignments (removing an assignment first is the safe step; an app of a managed package goes with its package), then the self-authorized apps to switch to admin-approved, those with the scope full first.',
})

export const unusedFieldCleanup = definePrompt({
  name: 'unused_field_cleanup',
  title: 'Unused field cleanup',
  description: 'Custom fields that are almost never populated and not used by layouts, reports or automation, counted per object: candidates for deletion.',
  arguments: [orgArg, { name: 'percent', description: 'Populated on fewer than this share of records: a number from 0 to 100, e.g. 2.5 (default 5).', number: { integer: false, min: 0, max: 100 } }],
  task: ({ args }) => `Find custom fields of org ${args.orgId} that can be deleted.`,
  steps: ({ args }) => {
    const unused = `and(eq(isCustom,true),isNull(namespace),gt(recordCount,0),lt(percentPopulated,${numberOr(args.percent, 5)}),eq(usedInLayouts,0),eq(usedInReports,0),eq(usedInAutomations,0))`
    return [
      {
        tool: 'count_org_records',
        arguments: { orgId: args.orgId!, resource: 'fields', by: ['objectApiName'], filter: unused, limit: 25 },
        why: 'Custom fields (not from managed packages) of objects with records, rarely populated and used nowhere, counted per object, most first: meta.total is every candidate, meta.groups the objects they are on.',
      },
      {
        tool: 'list_org_fields',
        arguments: { orgId: args.orgId!, filter: unused.replace(/\)$/, ',in(objectApiName,$items.objectApiName))'), sort: 'objectApiName,percentPopulated', fields: ['objectApiName', 'apiName', 'type', 'percentPopulated', 'recordCount'], limit: 100 },
        from: { step: 1, take: 5 },
        why: 'The candidates of the five objects with the most, emptiest first.',
      },
    ]
  },
  report: 'Say how many candidate fields there are on how many objects (step 1), then the fields of the top objects grouped by object with their populated share, and how to confirm each is safe to delete (field history, integrations, Apex and formula references) before deleting it.',
})

/** The prompts, in the order prompts/list shows them. */
export const prompts = [topPriorityFixes, securityRiskAudit, legacyAutomationCleanup, connectedAppReview, unusedFieldCleanup]
