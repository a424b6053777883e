/**
 * Recommendation texts of the demo scanner: for every issue rule, why it matters, how to fix it and where to
 * read more. `recommendationOf` renders one recommendation record for one finding.
 */
import type { Finding } from './issue-rules.ts'
import { plural } from './util.ts'

interface Advice {
  summary: (x: Finding) => string
  rationale: string
  steps: (x: Finding) => string[]
  refs: Array<{ title: string; url: string }>
  /** Minutes per affected item, and a fixed overhead. */
  minutes: [number, number]
}

const fmt = (n: number) => n.toLocaleString('en-US')

/** "Profile Sales User" / "Permission set Data_Export_Access": the grantee of a permission issue. */
const grantee = (x: Finding) => `${x.facts.what} ${x.facts.name}`

/** A grant nobody holds (affectedCount 0): said in words, not as "0 users". */
const unheld = (x: Finding, what: string) => `${grantee(x)} grants ${what}, but no user is assigned it yet; remove it before anyone is.`

const HELP = (id: string) => `https://help.salesforce.com/s/articleView?id=${id}&type=5`
const R = {
  perms: { title: 'User Permissions and Access', url: HELP('sf.admin_userperms.htm') },
  psg: { title: 'Permission Sets and Permission Set Groups', url: HELP('sf.perm_sets_overview.htm') },
  apps: { title: 'Manage Access to a Connected App', url: HELP('sf.connected_app_manage.htm') },
  oauth: { title: 'Manage OAuth Access Policies for a Connected App', url: HELP('sf.connected_app_manage_oauth.htm') },
  pmd: { title: 'PMD Apex rules', url: 'https://pmd.github.io/pmd/pmd_rules_apex.html' },
  secure: { title: 'Secure Coding Guide: Apex', url: 'https://developer.salesforce.com/docs/atlas.en-us.secure_coding_guide.meta/secure_coding_guide/secure_coding_guidelines.htm' },
  limitsApex: { title: 'Execution Governors and Limits', url: 'https://developer.salesforce.com/docs/atlas.en-us.apexcode.meta/apexcode/apex_gov_limits.htm' },
  apiVersions: { title: 'Salesforce Platform API Versions 21.0 through 30.0 Retirement', url: HELP('000381744') },
  coverage: { title: 'Code Coverage Best Practices', url: 'https://developer.salesforce.com/docs/atlas.en-us.apexcode.meta/apexcode/apex_code_coverage_best_pract.htm' },
  eslint: { title: 'ESLint rules for Lightning Web Components', url: 'https://github.com/salesforce/eslint-plugin-lwc' },
  order: { title: 'Triggers and Order of Execution', url: 'https://developer.salesforce.com/docs/atlas.en-us.apexcode.meta/apexcode/apex_triggers_order_of_execution.htm' },
  migrate: { title: 'Migrate to Flow Tool Considerations', url: HELP('sf.migrate_to_flow_tool_considerations.htm') },
  delObject: { title: 'Delete Custom Objects', url: HELP('sf.dev_objectdelete.htm') },
  delField: { title: 'Delete Fields', url: HELP('sf.deleting_fields.htm') },
  fieldLimits: { title: 'Custom Field Allocations per Object', url: HELP('sf.custom_field_allocations.htm') },
  limits: { title: 'Salesforce Developer Limits and Allocations Quick Reference', url: 'https://developer.salesforce.com/docs/atlas.en-us.salesforce_app_limits_cheatsheet.meta/salesforce_app_limits_cheatsheet/salesforce_app_limits_overview.htm' },
  storage: { title: 'Data and File Storage Allocations', url: HELP('sf.overview_storage.htm') },
  licenses: { title: 'User Licenses', url: HELP('sf.users_understanding_license_types.htm') },
  logins: { title: 'Monitor Login History', url: HELP('sf.users_login_history.htm') },
  freeze: { title: 'Freeze or Unfreeze User Accounts', url: HELP('sf.users_freeze.htm') },
}

const ADVICE: Record<string, Advice> = {
  modify_all_data: {
    summary: (x) => (x.affectedCount === 0 ? unheld(x, 'Modify All Data') : `${grantee(x)} grants Modify All Data to ${plural(x.affectedCount, 'user')}.`),
    rationale: 'Modify All Data bypasses sharing, field-level security and validation ownership: a compromised or careless account can change or delete every record. Only a handful of named administrators should hold it.',
    steps: (x) => ['Review who is assigned and why they need unrestricted write access.', `Remove Modify All Data from ${x.facts.name}.`, 'Grant object-level "Modify All" on the few objects actually needed, through a permission set.', 'Re-run the scan to confirm the finding is resolved.'],
    refs: [R.perms, R.psg], minutes: [2, 45],
  },
  view_all_data: {
    summary: (x) => (x.affectedCount === 0 ? unheld(x, 'View All Data') : `${grantee(x)} lets ${plural(x.affectedCount, 'user')} read all data.`),
    rationale: 'View All Data exposes every record, including confidential opportunities and cases, regardless of the sharing model.',
    steps: () => ['Confirm the business need with the assignees\u2019 managers.', 'Replace View All Data with object-level View All where required.', 'Move the remaining access into a permission set with an expiry date.'],
    refs: [R.perms], minutes: [2, 30],
  },
  data_export: {
    summary: (x) => (x.affectedCount === 0 ? unheld(x, 'Weekly Data Export') : `${grantee(x)} lets ${plural(x.affectedCount, 'user')} export all org data every week.`),
    rationale: 'The weekly data export produces a complete copy of the org\u2019s data outside the platform\u2019s access controls.',
    steps: () => ['Limit Weekly Data Export to the backup service account.', 'Remove the permission from this profile or permission set.'],
    refs: [R.perms], minutes: [1, 15],
  },
  unused_connected_app: {
    summary: (x) => `Connected app ${x.subject} ${x.facts.neverUsed ? 'has never been used' : 'shows no use for more than a year'}; ${x.affectedCount === 0 ? 'nobody holds a token for it' : `${plural(x.affectedCount, 'user')} still ${x.affectedCount === 1 ? 'holds' : 'hold'} OAuth tokens for it`}.`,
    rationale: 'Unused connected apps keep OAuth tokens and integration users alive: they widen the attack surface without delivering value.',
    steps: (x) => [`Check with the app owner whether ${x.subject} is still needed.`, 'Revoke its OAuth tokens under Connected Apps OAuth Usage.', 'Uninstall or delete the app, and deactivate its integration user if it has one.'],
    refs: [R.apps, R.oauth], minutes: [5, 30],
  },
  self_authorized_full_access: {
    summary: (x) => `Any user may authorize ${x.subject} with the "full" scope.`,
    rationale: 'Self-authorization with full access lets a phishing or rogue app obtain complete API access to a user\u2019s data.',
    steps: () => ['Set Permitted Users to "Admin approved users are pre-authorized".', 'Assign the app to the profiles or permission sets that need it.', 'Narrow the OAuth scopes to api and refresh_token.'],
    refs: [R.oauth], minutes: [1, 20],
  },
  operation_in_loop: {
    summary: (x) => `${x.subject} runs SOQL or DML inside a loop (${plural(x.affectedCount, 'violation')} of ${x.facts.pmdRule}).`,
    rationale: 'Queries and DML statements inside loops multiply with the number of records and hit governor limits during bulk loads and integrations.',
    steps: (x) => [`Collect record ids first and query once outside the loop in ${x.subject}.`, 'Accumulate changes in a list and perform one DML statement.', 'Add a bulk test with 200 records.'],
    refs: [R.limitsApex, R.pmd], minutes: [30, 30],
  },
  outdated_api_version: {
    summary: (x) => `${x.subject} is saved with API version ${x.facts.apiVersion}, which is outdated.`,
    rationale: 'Code on old API versions does not get current platform behaviour and breaks when those versions are retired.',
    steps: (x) => [`Update the API version of ${x.subject} in its metadata file.`, 'Run its tests and fix behavioural differences.', 'Deploy through the normal release process.'],
    refs: [R.apiVersions], minutes: [20, 10],
  },
  low_test_coverage: {
    summary: (x) => `Trigger ${x.subject} has ${x.facts.coveragePercent} % test coverage, below the 75 % coverage requirement.`,
    rationale: 'Every trigger needs some coverage and the org needs 75 % overall to deploy; low coverage also means untested behaviour.',
    steps: () => ['Write tests covering insert, update and delete paths, including bulk cases.', 'Move logic into a handler class that can be tested directly.'],
    refs: [R.coverage], minutes: [60, 30],
  },
  eslint_errors: {
    summary: (x) => `Component ${x.subject} has ${plural(x.affectedCount, 'ESLint error')}, breaking ${plural(x.facts.rules as number, 'rule')}.`,
    rationale: 'ESLint errors in Lightning components point to security problems (innerHTML), Locker violations or bugs.',
    steps: () => ['Run `npx eslint` on the bundle locally.', 'Fix the errors, then enable the rules in CI.'],
    refs: [R.eslint], minutes: [15, 15],
  },
  multiple_triggers: {
    summary: (x) => `${x.subject} has ${plural(x.affectedCount, 'active trigger')}.`,
    rationale: 'Salesforce does not guarantee the order of several triggers on one object; behaviour can change between releases.',
    steps: (x) => [`Consolidate the triggers of ${x.subject} into a single trigger.`, 'Delegate to a trigger handler class.', 'Deactivate and delete the legacy triggers.'],
    refs: [R.order], minutes: [90, 60],
  },
  process_builder: {
    summary: (x) => `Process ${x.subject} still runs on Process Builder.`,
    rationale: 'Process Builder is retired and slower than record-triggered flows; it no longer receives fixes.',
    steps: (x) => [`Open Migrate to Flow and select ${x.subject}.`, 'Test the generated flow in a sandbox.', 'Activate the flow and deactivate the process.'],
    refs: [R.migrate], minutes: [60, 30],
  },
  workflow_rules: {
    summary: (x) => `${x.subject} has ${plural(x.affectedCount, 'active workflow rule')}.`,
    rationale: 'Workflow rules are retired; consolidating them into record-triggered flows makes the save order predictable.',
    steps: () => ['Use the Migrate to Flow tool for each rule.', 'Combine the generated flows per object and trigger type.', 'Deactivate the workflow rules.'],
    refs: [R.migrate, R.order], minutes: [30, 30],
  },
  unused_object: {
    summary: (x) => `${x.subject} holds no records, ${x.facts.neverUsed ? 'has never been used' : 'has not been used for a year'} and still carries ${plural(x.facts.customFields as number, 'custom field')}.`,
    rationale: 'Empty custom objects add metadata, tabs and permissions that every release and access review has to carry.',
    steps: (x) => [`Search for references to ${x.subject} (Apex, flows, reports).`, 'Export its metadata for the archive.', 'Delete the object; it stays in the recycle bin for 15 days.'],
    refs: [R.delObject], minutes: [10, 30],
  },
  custom_field_limit: {
    summary: (x) => `${x.subject} has ${plural(x.affectedCount, 'custom field')}.`,
    rationale: 'Wide objects approach the per-object field allocation, slow down page layouts and reports, and usually hide many unused fields.',
    steps: (x) => [`List the unused fields of ${x.subject} (see the unused-field issues).`, 'Delete or archive fields with no data and no references.'],
    refs: [R.fieldLimits], minutes: [1, 120],
  },
  unused_field: {
    summary: (x) => (x.facts.populated === 0
      ? `${x.subject} is empty on every record (${plural(x.facts.records as number, 'record')}).`
      : `${x.subject} has a value on ${x.facts.percent} % of records (${fmt(x.facts.populated as number)} of ${plural(x.facts.records as number, 'record')}).`),
    rationale: 'Fields nobody fills in clutter layouts, reports and integrations, and count against the object\u2019s field allocation.',
    steps: (x) => [`Check where ${x.subject} is referenced (Where is this used?).`, 'Remove it from page layouts and reports.', 'Delete the field, or document why it must stay.'],
    refs: [R.delField], minutes: [10, 5],
  },
  near_limit: {
    summary: (x) => `${x.subject} is close to its allocation: ${fmt(x.facts.used as number)} of ${fmt(x.facts.cap as number)} used (${x.facts.percent} %).`,
    rationale: 'When a platform limit is reached, the platform rejects further work: API calls fail, records cannot be saved.',
    steps: (x) => [`Find the largest consumers of ${x.subject}.`, /Storage/.test(x.subject) ? 'Archive or delete old records and files.' : 'Spread or reduce the load.', 'Buy additional capacity if the growth is expected.'],
    refs: [R.limits, R.storage], minutes: [0, 240],
  },
  unused_licenses: {
    summary: (x) => `${fmt(x.affectedCount)} of ${fmt(x.facts.total as number)} ${x.subject} licenses are not assigned.`,
    rationale: 'Unassigned licenses are paid for without use; the count can be reduced at the next renewal.',
    steps: () => ['Confirm the expected hiring plan with the business.', 'Reduce the license count at renewal.'],
    refs: [R.licenses], minutes: [0, 30],
  },
  license_expiring: {
    summary: (x) => `${x.facts.name} licenses expire on ${x.facts.expirationDate}; ${x.affectedCount === 0 ? 'no user is assigned one' : `${plural(x.affectedCount, 'user')} ${x.affectedCount === 1 ? 'loses' : 'lose'} the licensed features then`}.`,
    rationale: 'Users lose the licensed features on the expiration date.',
    steps: () => ['Contact the account executive to renew.', 'Or plan the removal of the feature with its users.'],
    refs: [R.licenses], minutes: [0, 30],
  },
  package_license_expired: {
    summary: (x) => `The license of package ${x.facts.name} has expired${!x.facts.seated ? '' : x.affectedCount === 0 ? '; no user holds a seat' : `; ${plural(x.affectedCount, 'user')} ${x.affectedCount === 1 ? 'has' : 'have'} lost access to it`}.`,
    rationale: 'An expired package license blocks users from the package\u2019s features.',
    steps: () => ['Renew the license with the publisher.', 'Or uninstall the package after exporting its data.'],
    refs: [R.licenses], minutes: [0, 60],
  },
  inactive_users: {
    summary: (x) => `${plural(x.affectedCount, `active ${x.subject} user`)} ${x.affectedCount === 1 ? 'has' : 'have'} not logged in for 90 days.`,
    rationale: 'Idle accounts use paid licenses and are an easy target for credential stuffing.',
    steps: () => ['Freeze the accounts and notify their managers.', 'Deactivate users who no longer need access after 30 days.', 'Reassign their licenses.'],
    refs: [R.logins, R.freeze], minutes: [2, 20],
  },
  unused_cloud: {
    summary: (x) => `The ${x.subject.replace(/_/g, ' ')} cloud is licensed but unused.`,
    rationale: 'Cloud licenses are a significant cost; an unused cloud is either an adoption problem or a cost to cut.',
    steps: () => ['Talk to the business owner about the adoption plan.', 'Otherwise drop the licenses at renewal.'],
    refs: [R.licenses], minutes: [0, 60],
  },
  unassigned_permission_set: {
    summary: (x) => `Permission set ${x.subject} has no assignments.`,
    rationale: 'Unassigned permission sets make access reviews longer and may be reassigned by mistake later.',
    steps: () => ['Confirm the permission set is obsolete.', 'Delete it, or add a description explaining its purpose.'],
    refs: [R.psg], minutes: [0, 10],
  },
}

function adviceOf(rule: string): Advice {
  if (ADVICE[rule]) return ADVICE[rule]
  const security = rule.startsWith('apex_')
  return {
    summary: (x) => `${x.subject} has ${plural(x.affectedCount, 'violation')} of the PMD rule ${x.facts.pmdRule}.`,
    rationale: security
      ? 'Security rule violations in Apex can expose data to users who should not see it or allow injection attacks.'
      : 'Complex or error-prone Apex is hard to change safely and hides bugs.',
    steps: (x) => [`Open ${x.subject} and review the flagged lines.`, security ? 'Enforce sharing and CRUD/FLS (with sharing, WITH USER_MODE) and bind variables in queries.' : 'Refactor into smaller methods with tests.', 'Re-run PMD in CI to keep it fixed.'],
    refs: security ? [R.secure, R.pmd] : [R.pmd], minutes: [20, 20],
  }
}

export function recommendationOf(x: Finding): Record<string, unknown> {
  const a = adviceOf(x.rule)
  return {
    issueKey: x.issueKey, title: x.title, category: x.category, priority: x.priority, effort: x.effort,
    summary: a.summary(x), rationale: a.rationale, remediationSteps: a.steps(x), affectedItems: x.affectedItems.slice(0, 50),
    references: a.refs, estimatedMinutes: a.minutes[1] + a.minutes[0] * Math.min(x.affectedCount, 100),
  }
}
