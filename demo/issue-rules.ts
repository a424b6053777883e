/**
 * Issue rules of the demo scanner: each turns the records of one scan into findings with a stable issueKey
 * (`<category>.<rule>.<subject>`), so an issue found again in the next scan keeps its key.
 */
import type { ISSUE_CATEGORIES } from '../resources/issues.ts'
import { keyPart, plural } from './util.ts'

type Rec = Record<string, any>
export type Category = (typeof ISSUE_CATEGORIES)[number]

export interface Finding {
  issueKey: string
  rule: string
  title: string
  category: Category
  priority: number
  effort: number
  namespace: string | null
  impact: string
  /**
   * The count the issue's title or impact states (users holding a grant, violations, custom fields, unassigned
   * seats, …), else the number of affected items: ranking by it ranks by how much the issue affects.
   */
  affectedCount: number
  affectedItems: Array<{ type: string; name: string; id: string | null }>
  /** Name of the subject, for the recommendation text. */
  subject: string
  /** The other numbers and dates the issue states, taken from its records, so the recommendation repeats them rather than recomputing them. */
  facts: Facts
}

export type Facts = Record<string, number | string | boolean>

export interface ScanData {
  data: Record<string, Rec[]>
  cloudUsage: Rec
  /** Scan start (ms), for "unused for a year". */
  at: number
}

const DAY = 86_400_000
const fmt = (n: number) => n.toLocaleString('en-US')

function f(rule: string, category: Category, subject: string, o: Omit<Finding, 'issueKey' | 'rule' | 'category' | 'subject' | 'facts'> & { facts?: Facts }): Finding {
  return { issueKey: `${category}.${rule}.${keyPart(subject)}`, rule, category, subject, ...o, facts: o.facts ?? {} }
}

/** used / cap × 100 to two decimals, as the org-limits resource derives percentUsed (integer arithmetic, so a half rounds up as in SQL). */
function percentUsed(used: number, cap: number): number {
  return cap === 0 ? 0 : Math.round((used * 10_000) / cap) / 100
}

function grantees(s: ScanData): Array<{ kind: 'Profile' | 'PermissionSet'; id: string; name: string; ns: string | null; users: number; r: Rec }> {
  return [
    ...s.data.sfProfiles.map((r) => ({ kind: 'Profile' as const, id: r.sfProfileId as string, name: r.name as string, ns: null, users: r.assignedUsers as number, r })),
    ...s.data.permissionSets.map((r) => ({ kind: 'PermissionSet' as const, id: r.permissionSetId as string, name: r.name as string, ns: r.namespace as string | null, users: r.assignedUsers as number, r })),
  ]
}

/** Who holds a grant, for an impact sentence; with nobody assigned, the risk is to whoever is assigned next. */
function holders(users: number): string {
  return users === 0 ? 'Nobody is assigned it yet, but anyone who is' : plural(users, 'user')
}

function security(s: ScanData, out: Finding[]): void {
  for (const g of grantees(s)) {
    // A grant is as serious as the number of users holding it: one nobody holds is a latent risk, ranked below every held one.
    const item = [{ type: g.kind, name: g.name, id: g.id }]
    const what = g.kind === 'Profile' ? 'Profile' : 'Permission set'
    const subject = g.kind === 'Profile' ? g.name : `PermissionSet.${g.name}`
    const facts = { what, name: g.name }
    if (g.r.modifyAllData) {
      out.push(f('modify_all_data', 'security', subject, {
        title: `${what} "${g.name}" grants Modify All Data`, priority: g.users === 0 ? 2 : g.name === 'System Administrator' ? 3 : 4, effort: 2, namespace: g.ns,
        impact: `${holders(g.users)} can view, edit and delete every record in the org, bypassing sharing.`, affectedCount: g.users, affectedItems: item, facts,
      }))
    } else if (g.r.viewAllData) {
      out.push(f('view_all_data', 'security', subject, {
        title: `${what} "${g.name}" grants View All Data`, priority: g.users === 0 ? 1 : 3, effort: 2, namespace: g.ns,
        impact: `${holders(g.users)} can read every record regardless of sharing rules.`, affectedCount: g.users, affectedItems: item, facts,
      }))
    }
    if (g.r.dataExport && !g.r.modifyAllData) {
      out.push(f('data_export', 'security', subject, {
        title: `${what} "${g.name}" allows weekly data export`, priority: g.users === 0 ? 1 : 2, effort: 1, namespace: g.ns,
        impact: `${holders(g.users)} can export all org data to CSV.`, affectedCount: g.users, affectedItems: item, facts,
      }))
    }
  }
  for (const a of s.data.connectedApps) {
    const item = [{ type: 'ConnectedApp', name: a.name, id: String(a.id) }]
    const last = a.lastUsedDate ? Date.parse(a.lastUsedDate) : null
    if (last === null || s.at - last > 365 * DAY) {
      out.push(f('unused_connected_app', 'security', a.name, {
        title: `Connected app "${a.name}" ${last === null ? 'has never been used' : 'has not been used for over a year'}`, priority: a.userCount === 0 ? 2 : 3, effort: 1, namespace: a.namespace,
        impact: a.userCount === 0 ? 'Nobody holds a token for it: the app only widens the attack surface.' : `${plural(a.userCount, 'user')} still ${a.userCount === 1 ? 'holds' : 'hold'} OAuth tokens for an app nobody uses.`,
        affectedCount: a.userCount, affectedItems: item, facts: { neverUsed: last === null },
      }))
    }
    if (a.permittedUsers === 'all_self_authorize' && a.oauthScopes.includes('full')) {
      out.push(f('self_authorized_full_access', 'security', a.name, {
        title: `Connected app "${a.name}" lets any user self-authorize full access`, priority: 3, effort: 2, namespace: a.namespace,
        impact: 'Any user can grant this app full access to their data without admin approval.', affectedCount: item.length, affectedItems: item,
      }))
    }
  }
}

function code(s: ScanData, out: Finding[]): void {
  const byClass = new Map<string, Rec[]>()
  for (const p of s.data.pmds) {
    const k = `${p.className}\u0000${p.rule}`
    const l = byClass.get(k)
    if (l) l.push(p)
    else byClass.set(k, [p])
  }
  for (const list of byClass.values()) {
    const p = list[0]
    const items = list.map((x) => ({ type: 'ApexClass', name: `${x.className} (line ${x.line})`, id: String(x.id) }))
    const lines = `${plural(list.length, 'violation')} of ${p.rule} in ${p.className}`
    const facts = { pmdRule: p.rule }
    if (p.ruleSet === 'Security') {
      out.push(f(`apex_${keyPart(p.rule).toLowerCase()}`, 'security', p.className, {
        title: `${p.rule} in Apex class ${p.className}`, priority: p.rule === 'ApexSOQLInjection' ? 4 : p.priority <= 2 ? 3 : 2, effort: 3, namespace: null,
        impact: `${lines}: ${p.message}.`, affectedCount: list.length, affectedItems: items, facts,
      }))
    } else if (p.rule === 'OperationWithLimitsInLoop') {
      out.push(f('operation_in_loop', 'performance', p.className, {
        title: `SOQL or DML inside a loop in ${p.className}`, priority: 3, effort: 3, namespace: null,
        impact: `${lines}; bulk loads can hit governor limits.`, affectedCount: list.length, affectedItems: items, facts,
      }))
    } else if (p.ruleSet === 'Design' || p.ruleSet === 'Error Prone') {
      out.push(f(`pmd_${keyPart(p.rule).toLowerCase()}`, 'code_quality', p.className, {
        title: `${p.rule} in Apex class ${p.className}`, priority: p.ruleSet === 'Error Prone' ? 2 : 1, effort: 2, namespace: null,
        impact: `${lines}.`, affectedCount: list.length, affectedItems: items, facts,
      }))
    }
  }
  for (const c of s.data.codeCounts) {
    if ((c.type === 'apex_class' || c.type === 'apex_trigger') && c.apiVersion < 40 && c.namespace === null) {
      out.push(f('outdated_api_version', 'code_quality', c.name, {
        title: `${c.type === 'apex_class' ? 'Apex class' : 'Trigger'} ${c.name} uses API version ${c.apiVersion.toFixed(1)}`, priority: c.apiVersion < 31 ? 3 : 1, effort: 2, namespace: null,
        impact: 'Old API versions miss current platform behaviour and are scheduled for retirement.', affectedCount: 1,
        affectedItems: [{ type: c.type === 'apex_class' ? 'ApexClass' : 'ApexTrigger', name: c.name, id: String(c.id) }], facts: { apiVersion: c.apiVersion.toFixed(1) },
      }))
    }
  }
  for (const t of s.data.triggers) {
    if (t.coveragePercent !== null && t.coveragePercent < 75) {
      out.push(f('low_test_coverage', 'code_quality', t.name, {
        title: `Trigger ${t.name} has ${t.coveragePercent} % test coverage`, priority: 3, effort: 3, namespace: t.namespace,
        impact: 'Deployments fail when org-wide or trigger coverage drops below 75 %.', affectedCount: 1, affectedItems: [{ type: 'ApexTrigger', name: t.name, id: String(t.id) }],
        facts: { coveragePercent: t.coveragePercent },
      }))
    }
  }
  const lintByBundle = new Map<string, Rec[]>()
  for (const l of s.data.esLints) if (l.severity === 'error') lintByBundle.set(l.bundle, [...(lintByBundle.get(l.bundle) ?? []), l])
  for (const [bundle, list] of lintByBundle) {
    const rules = [...new Set(list.map((l) => l.ruleId))]
    out.push(f('eslint_errors', 'code_quality', bundle, {
      title: `Component ${bundle} has ${plural(list.length, 'ESLint error')}`, priority: 2, effort: 2, namespace: null,
      impact: `Rules broken: ${rules.join(', ')}.`, affectedCount: list.length, facts: { rules: rules.length },
      affectedItems: list.map((l) => ({ type: list[0].componentType === 'lwc' ? 'LightningComponentBundle' : 'AuraDefinitionBundle', name: `${l.fileName}:${l.line}`, id: String(l.id) })),
    }))
  }
}

function automation(s: ScanData, out: Finding[]): void {
  const trig = new Map<string, Rec[]>()
  for (const t of s.data.triggers) if (t.status === 'active') trig.set(t.objectApiName, [...(trig.get(t.objectApiName) ?? []), t])
  for (const [obj, list] of trig) {
    if (list.length < 2) continue
    out.push(f('multiple_triggers', 'automation', obj, {
      title: `${obj} has ${list.length} active triggers`, priority: 2, effort: 4, namespace: null,
      impact: 'The order in which several triggers on one object run is not guaranteed.', affectedCount: list.length,
      affectedItems: list.map((t) => ({ type: 'ApexTrigger', name: t.name, id: String(t.id) })),
    }))
  }
  for (const fl of s.data.flows) {
    if ((fl.processType === 'process_builder' || fl.processType === 'workflow') && fl.status === 'active') {
      out.push(f('process_builder', 'automation', fl.apiName, {
        title: `Process Builder process ${fl.label} should be migrated to Flow`, priority: 2, effort: 3, namespace: null,
        impact: 'Process Builder is retired: no new features or support, and it is slower than record-triggered flows.', affectedCount: 1,
        affectedItems: [{ type: 'Flow', name: fl.apiName, id: String(fl.id) }],
      }))
    }
  }
  const wf = new Map<string, Rec[]>()
  for (const w of s.data.workflows) if (w.active) wf.set(w.objectApiName, [...(wf.get(w.objectApiName) ?? []), w])
  for (const [obj, list] of wf) {
    out.push(f('workflow_rules', 'automation', obj, {
      title: `${obj} still runs ${plural(list.length, 'workflow rule')}`, priority: 2, effort: 3, namespace: null,
      impact: 'Workflow rules are retired; mixing them with flows and triggers makes the save order hard to reason about.', affectedCount: list.length,
      affectedItems: list.map((w) => ({ type: 'WorkflowRule', name: `${obj}.${w.name}`, id: String(w.id) })),
    }))
  }
}

function schema(s: ScanData, out: Finding[]): void {
  for (const o of s.data.objects) {
    const last = o.lastUsedDate ? Date.parse(o.lastUsedDate) : null
    if (o.isCustom && o.recordCount === 0 && !o.apiName.endsWith('__mdt') && (last === null || s.at - last > 365 * DAY)) {
      out.push(f('unused_object', 'technical_debt', o.apiName, {
        title: `Custom object ${o.apiName} has no records`, priority: 1, effort: 2, namespace: o.namespace,
        impact: `${plural(o.customFieldCount, 'custom field')} and their metadata are maintained for an empty object.`, affectedCount: 1,
        affectedItems: [{ type: 'CustomObject', name: o.apiName, id: String(o.id) }], facts: { customFields: o.customFieldCount, neverUsed: last === null },
      }))
    }
    if (o.customFieldCount >= 250) {
      out.push(f('custom_field_limit', 'configuration', o.apiName, {
        title: `${o.apiName} has ${o.customFieldCount} custom fields`, priority: o.customFieldCount >= 500 ? 3 : 2, effort: 4, namespace: o.namespace,
        impact: 'Objects near the custom-field limit are slow to load and hard to maintain.', affectedCount: o.customFieldCount,
        affectedItems: [{ type: 'CustomObject', name: o.apiName, id: String(o.id) }],
      }))
    }
  }
  for (const fl of s.data.fields) {
    if (!fl.isCustom || fl.recordCount === 0 || fl.percentPopulated >= 1) continue
    out.push(f('unused_field', 'data_quality', `${fl.objectApiName}.${fl.apiName}`, {
      title: `Field ${fl.objectApiName}.${fl.apiName} is ${fl.percentPopulated === 0 ? 'never' : 'almost never'} populated`,
      priority: fl.usedInLayouts > 0 ? 2 : 1, effort: 1, namespace: fl.namespace,
      impact: `${fmt(fl.populatedCount)} of ${plural(fl.recordCount, 'record')} ${fl.populatedCount === 1 || fl.recordCount === 1 ? 'has' : 'have'} a value (${fl.percentPopulated} %).`,
      affectedCount: 1, affectedItems: [{ type: 'CustomField', name: `${fl.objectApiName}.${fl.apiName}`, id: String(fl.id) }],
      facts: { populated: fl.populatedCount, records: fl.recordCount, percent: fl.percentPopulated },
    }))
  }
}

function org(s: ScanData, out: Finding[]): void {
  for (const l of s.data.orgLimits) {
    const used = l.cap - l.remaining
    const pct = percentUsed(used, l.cap)
    if (pct < 80) continue
    out.push(f('near_limit', 'limits', l.name, {
      title: `${l.name} is ${pct} % used`, priority: pct >= 90 ? 4 : 3, effort: /Storage/.test(l.name) ? 4 : 2, namespace: null,
      impact: `${fmt(used)} of ${fmt(l.cap)} used; at the limit the platform rejects further work.`,
      affectedCount: 1, affectedItems: [{ type: 'OrgLimit', name: l.name, id: null }], facts: { used, cap: l.cap, percent: pct },
    }))
  }
  for (const l of s.data.licenseUsages) {
    if (l.type === 'user' && l.name !== 'Identity' && l.total - l.used >= 10 && l.used < l.total * 0.75) {
      out.push(f('unused_licenses', 'licensing', l.name, {
        title: `${fmt(l.total - l.used)} of ${fmt(l.total)} ${l.name} licenses are unassigned`, priority: 2, effort: 1, namespace: null,
        impact: 'Paid seats are not assigned to anyone.', affectedCount: l.total - l.used, affectedItems: [{ type: 'UserLicense', name: l.apiName, id: null }],
        facts: { total: l.total },
      }))
    }
    if (l.expirationDate && Date.parse(l.expirationDate) - s.at < 60 * DAY) {
      out.push(f('license_expiring', 'licensing', l.apiName, {
        title: `${l.name} licenses expire on ${l.expirationDate}`, priority: l.used === 0 ? 1 : 3, effort: 1, namespace: null,
        impact: l.used === 0 ? 'No user is assigned it; renew it only if it will be used.' : `${plural(l.used, 'user')} ${l.used === 1 ? 'loses' : 'lose'} the features of this license when it expires.`,
        affectedCount: l.used, affectedItems: [{ type: 'PermissionSetLicense', name: l.apiName, id: null }], facts: { name: l.name, expirationDate: l.expirationDate },
      }))
    }
  }
  for (const p of s.data.installedPackages) {
    if (p.licenseStatus === 'Expired') {
      // A package without seats is licensed to the whole org: its users are not counted, the package is the one affected item.
      const users = p.seatsUsed as number | null
      out.push(f('package_license_expired', 'licensing', p.namespace ?? p.name, {
        title: `The license of package ${p.name} has expired`, priority: users === 0 ? 1 : 3, effort: 2, namespace: p.namespace,
        impact: users === null ? 'Users of the package lose access to its features and data.' : users === 0 ? 'No user holds a seat of the package.' : `${plural(users, 'user')} of the package ${users === 1 ? 'loses' : 'lose'} access to its features and data.`,
        affectedCount: users ?? 1, affectedItems: [{ type: 'InstalledPackage', name: p.name, id: String(p.id) }], facts: { name: p.name, seated: users !== null },
      }))
    }
  }
  const idle = new Map<string, Rec[]>()
  for (const u of s.data.loginActivity) if (u.isActive && u.logins90 === 0) idle.set(u.licenseType, [...(idle.get(u.licenseType) ?? []), u])
  for (const [lic, list] of idle) {
    out.push(f('inactive_users', 'adoption', lic, {
      title: `${plural(list.length, `active ${lic} user`)} did not log in for 90 days`, priority: list.length >= 20 ? 3 : 2, effort: 1, namespace: null,
      impact: 'Licenses are paid for users who do not use the org; stale accounts are also a security risk.', affectedCount: list.length,
      affectedItems: list.slice(0, 50).map((u) => ({ type: 'User', name: u.username, id: u.userId })),
    }))
  }
  for (const c of s.cloudUsage.summary.unusedClouds as string[]) {
    out.push(f('unused_cloud', 'adoption', c, {
      title: `Licensed ${c.replace(/_/g, ' ')} cloud has no active users`, priority: 2, effort: 3, namespace: null,
      impact: 'The org pays for a cloud nobody uses.', affectedCount: 1, affectedItems: [{ type: 'Cloud', name: c, id: null }],
    }))
  }
  for (const p of s.data.permissionSets) {
    if (p.isCustom && p.assignedUsers === 0) {
      out.push(f('unassigned_permission_set', 'configuration', p.name, {
        title: `Permission set ${p.label} is not assigned to anyone`, priority: 1, effort: 1, namespace: p.namespace,
        impact: 'Unused permission sets clutter access reviews.', affectedCount: 1, affectedItems: [{ type: 'PermissionSet', name: p.name, id: p.permissionSetId }],
      }))
    }
  }
}

/** All findings of one scan, in a stable order. */
export function findIssues(s: ScanData): Finding[] {
  const out: Finding[] = []
  security(s, out)
  code(s, out)
  automation(s, out)
  schema(s, out)
  org(s, out)
  const seen = new Set<string>()
  return out.filter((x) => (seen.has(x.issueKey) ? false : (seen.add(x.issueKey), true)))
}
