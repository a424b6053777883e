/**
 * The demo data agrees with itself: every number an issue or its recommendation states in words (users holding a
 * grant, violations, custom fields, percentages, dates, …) equals the issue's affectedCount or the value in the
 * records the issue is about, counted here from those records (not from the generator's own notes); a grant that no
 * user holds ranks below every held one. Checked on the generated bundles of every org and completed scan at the
 * tests' scale, on the latest scans at full scale (where the rarer rules fire), and on what REST serves for the
 * large org (where derived fields such as percentUsed come from SQL).
 */
import { t } from '../helpers/file-test.ts'
import { DEMO_ORG_DEFS, demoBundle } from '../../demo/seed.ts'
import { SEED_SCALE, startTestService } from '../helpers/service.ts'

type Rec = Record<string, any>
/** The records of one scan by resource name, and its cloud usage. */
interface Scan {
  data: Record<string, Rec[]>
  cloudUsage: Rec
}

// ---------------------------------------------------------------------------------------------------------------
// What the records say: per rule, the facts (named numbers) its texts may state, and which of them affectedCount is.

interface Facts {
  /** The fact affectedCount must equal; 'items' = the number of affected items. */
  unit: string
  values: Record<string, number | string>
}

const PMD_RULE = /^(apex_|pmd_|operation_in_loop$)/
const GRANT_FLAG: Record<string, string> = { modify_all_data: 'modifyAllData', view_all_data: 'viewAllData', data_export: 'dataExport' }

/** The record an affected item points at, by its type and id (or name where the item has no id). */
function resolve(rule: string, item: Rec, s: Scan): Rec | undefined {
  const by = (list: string, field: string, value: unknown) => s.data[list]?.find((r) => String(r[field]) === String(value))
  switch (item.type) {
    case 'Profile': return by('sfProfiles', 'sfProfileId', item.id)
    case 'PermissionSet': return by('permissionSets', 'permissionSetId', item.id)
    case 'ConnectedApp': return by('connectedApps', 'id', item.id)
    // PMD findings name the class and carry the violation's id; other issues about a class carry its code-count id.
    case 'ApexClass': return PMD_RULE.test(rule) ? by('pmds', 'id', item.id) : by('codeCounts', 'id', item.id)
    case 'ApexTrigger': return rule === 'outdated_api_version' ? by('codeCounts', 'id', item.id) : by('triggers', 'id', item.id)
    case 'LightningComponentBundle':
    case 'AuraDefinitionBundle': return by('esLints', 'id', item.id)
    case 'WorkflowRule': return by('workflows', 'id', item.id)
    case 'Flow': return by('flows', 'id', item.id)
    case 'CustomObject': return by('objects', 'id', item.id)
    case 'CustomField': return by('fields', 'id', item.id)
    case 'OrgLimit': return by('orgLimits', 'name', item.name)
    case 'UserLicense':
    case 'PermissionSetLicense': return by('licenseUsages', 'apiName', item.name)
    case 'InstalledPackage': return by('installedPackages', 'id', item.id)
    case 'User': return by('loginActivity', 'userId', item.id)
    case 'Cloud': return (s.cloudUsage.clouds as Rec[]).find((c) => c.cloud === item.name)
    default: return undefined
  }
}

/** used / cap × 100 to two decimals, as the org-limits resource defines percentUsed. */
const pctUsed = (used: number, cap: number) => (cap === 0 ? 0 : Math.round((used * 10_000) / cap) / 100)

/** Per rule (PMD rules share one entry), from the record of its first affected item and the scan. */
const FACTS: Record<string, (r: Rec, s: Scan) => Facts> = {
  modify_all_data: (r) => ({ unit: 'users', values: { users: r.assignedUsers } }),
  view_all_data: (r) => ({ unit: 'users', values: { users: r.assignedUsers } }),
  data_export: (r) => ({ unit: 'users', values: { users: r.assignedUsers } }),
  unused_connected_app: (r) => ({ unit: 'users', values: { users: r.userCount } }),
  self_authorized_full_access: () => ({ unit: 'items', values: {} }),
  pmd: (r, s) => ({ unit: 'violations', values: { violations: s.data.pmds.filter((p) => p.className === r.className && p.rule === r.rule).length } }),
  outdated_api_version: (r) => ({ unit: 'items', values: { apiVersion: r.apiVersion } }),
  low_test_coverage: (r) => ({ unit: 'items', values: { coverage: r.coveragePercent } }),
  eslint_errors: (r, s) => {
    const errors = s.data.esLints.filter((l) => l.bundle === r.bundle && l.severity === 'error')
    return { unit: 'errors', values: { errors: errors.length, rules: new Set(errors.map((l) => l.ruleId)).size } }
  },
  multiple_triggers: (r, s) => ({ unit: 'triggers', values: { triggers: s.data.triggers.filter((x) => x.objectApiName === r.objectApiName && x.status === 'active').length } }),
  process_builder: () => ({ unit: 'items', values: {} }),
  workflow_rules: (r, s) => ({ unit: 'workflowRules', values: { workflowRules: s.data.workflows.filter((w) => w.objectApiName === r.objectApiName && w.active).length } }),
  unused_object: (r, s) => ({ unit: 'items', values: { customFields: customFieldsOf(r, s), records: r.recordCount } }),
  custom_field_limit: (r, s) => ({ unit: 'customFields', values: { customFields: customFieldsOf(r, s) } }),
  unused_field: (r) => ({ unit: 'items', values: { populated: r.populatedCount, records: r.recordCount, percent: r.percentPopulated } }),
  near_limit: (r) => ({ unit: 'items', values: { used: r.cap - r.remaining, cap: r.cap, percent: r.percentUsed ?? pctUsed(r.cap - r.remaining, r.cap) } }),
  unused_licenses: (r) => ({ unit: 'unassigned', values: { unassigned: r.total - r.used, total: r.total } }),
  license_expiring: (r) => ({ unit: 'users', values: { users: r.used, expirationDate: r.expirationDate } }),
  package_license_expired: (r): Facts => (r.seatsUsed === null ? { unit: 'items', values: {} } : { unit: 'users', values: { users: r.seatsUsed } }),
  inactive_users: (r, s) => ({ unit: 'users', values: { users: s.data.loginActivity.filter((u) => u.licenseType === r.licenseType && u.isActive && u.logins90 === 0).length } }),
  unused_cloud: (r) => ({ unit: 'items', values: { activeUsers: r.activeUsers } }),
  unassigned_permission_set: (r) => ({ unit: 'items', values: { users: r.assignedUsers } }),
}

/** Custom fields of an object, counted from the field records of the scan. */
function customFieldsOf(o: Rec, s: Scan): number {
  return s.data.fields.filter((f) => f.sobjectId === o.id && f.isCustom).length
}

// ---------------------------------------------------------------------------------------------------------------
// What the texts say: numbers next to known nouns, thresholds the texts name, and zero in words.

const N = String.raw`(\d[\d,]*(?:\.\d+)?)`
type Claim = { re: RegExp; facts: string[] } | { re: RegExp; constant: number } | { re: RegExp; zero: string }
const claim = (re: string, facts: string[]): Claim => ({ re: new RegExp(re, 'g'), facts })

/** In order: a claim's match is taken out of the text before the next claim reads it. */
const CLAIMS: Claim[] = [
  // Thresholds and policies the texts name: fixed numbers, not measurements of the org.
  { re: /below (?:the )?(75) %/g, constant: 75 },
  { re: /needs (75) % overall/g, constant: 75 },
  { re: /for (90) days/g, constant: 90 },
  { re: /after (30) days/g, constant: 30 },
  { re: /for (15) days/g, constant: 15 },
  { re: /with (200) records/g, constant: 200 },
  // Measurements.
  claim(String.raw`(\d{4}-\d{2}-\d{2})`, ['expirationDate']),
  claim(`${N} of ${N} (?:«» )?licenses`, ['unassigned', 'total']),
  claim(`${N} of ${N} records?`, ['populated', 'records']),
  claim(`${N} of ${N} used`, ['used', 'cap']),
  claim(String.raw`every record \(${N} records?\)`, ['records']),
  claim(`${N} % test coverage`, ['coverage']),
  claim(`API version ${N}`, ['apiVersion']),
  claim(`${N} %`, ['percent']),
  claim(`${N} (?:active )?(?:«» )?users?`, ['users']),
  claim(`${N} violations?`, ['violations']),
  claim(`${N} ESLint errors?`, ['errors']),
  claim(`${N} (?:active )?workflow rules?`, ['workflowRules']),
  claim(`${N} rules?`, ['rules']),
  claim(`${N} (?:active )?triggers?`, ['triggers']),
  claim(`${N} custom fields?`, ['customFields']),
  // Zero in words.
  { re: /nobody (?:is assigned|holds)|no user (?:is assigned|holds)|has no assignments/gi, zero: 'users' },
  { re: /no active users/g, zero: 'activeUsers' },
  { re: /(?:holds|has) no records/g, zero: 'records' },
  { re: /is empty on/g, zero: 'populated' },
]

const NOUN = String.raw`(?:active )?(?:«» )?(?:ESLint |custom |workflow )?(?:user|violation|error|rule|trigger|field|record|license)`
/** "1 user(s)", "1 users", "2 user": a count whose noun does not agree with it. */
const DISAGREES = [/\(s\)/, new RegExp(String.raw`(?<![\d,.])1 ${NOUN}s\b`), new RegExp(String.raw`(?<![\d,.])(?!1 )\d[\d,]*(?:\.\d+)? ${NOUN}\b(?!s)`)]

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** The text with every name of the issue's records replaced by «» (names may hold digits: `Custom: EMEA Sales 2`). */
function mask(text: string, names: string[]): string {
  let out = text
  for (const n of names) out = out.replace(new RegExp(`(?<![\\w])${escape(n)}(?![\\w])`, 'g'), '«»')
  // Identifiers with digits that are not a record's name (a class named in a step, a field API name).
  return out.replace(/(?<![\w.])(?=\w*[A-Za-z_])(?=\w*\d)\w+(?![\w])/g, '«»')
}

const asNumber = (s: string) => Number(s.replace(/,/g, ''))

/** Problems with one text: numbers that disagree with a fact, claim a fact the issue has not, or are unexplained. */
function checkText(text: string, names: string[], facts: Record<string, number | string>): string[] {
  const problems: string[] = []
  let rest = mask(text, names)
  if (DISAGREES.some((re) => re.test(rest))) problems.push(`count and noun disagree in "${text}"`)
  for (const c of CLAIMS) {
    rest = rest.replace(c.re, (...m: any[]) => {
      const groups = m.slice(1, -2).filter((g) => g !== undefined) as string[]
      if ('constant' in c) {
        if (asNumber(groups[0]) !== c.constant) problems.push(`"${m[0]}" is not the fixed ${c.constant}`)
      } else if ('zero' in c) {
        if (!(c.zero in facts)) problems.push(`"${m[0]}" states ${c.zero} = 0, but the issue's records have no ${c.zero}`)
        else if (facts[c.zero] !== 0) problems.push(`"${m[0]}" in "${text}" says 0 ${c.zero}, the records say ${facts[c.zero]}`)
      } else {
        c.facts.forEach((name, i) => {
          const said = groups[i]
          if (!(name in facts)) problems.push(`"${m[0]}" in "${text}" states ${name}, but the issue's records have no ${name}`)
          else if (typeof facts[name] === 'string' ? said !== facts[name] : asNumber(said) !== Number(facts[name])) {
            problems.push(`"${m[0]}" in "${text}" says ${name} = ${said}, the records say ${facts[name]}`)
          }
        })
      }
      return ' ~ '
    })
  }
  const left = rest.match(/\d[\d,.]*/g)
  if (left) problems.push(`unexplained number(s) ${left.join(', ')} in "${text}"`)
  return problems
}

/** The names in an issue's records that its texts may quote. */
function namesOf(records: Rec[], items: Rec[], issueKey: string): string[] {
  const names = new Set<string>(items.map((i) => String(i.name)))
  names.add(issueKey.split('.').slice(2).join('.'))
  for (const r of records) {
    for (const k of ['name', 'label', 'apiName', 'className', 'bundle', 'fileName', 'objectApiName', 'message', 'username', 'licenseType', 'profileName', 'rule', 'ruleId', 'namespace', 'cloud']) {
      if (typeof r[k] === 'string' && r[k].length > 0) names.add(r[k])
    }
    if (typeof r.cloud === 'string') names.add(r.cloud.replace(/_/g, ' '))
  }
  return [...names].sort((a, b) => b.length - a.length)
}

interface Checked {
  problems: string[]
  rules: Set<string>
  /** Issues with a count of users, for the ranking check: rule, users, priority. */
  held: Array<{ rule: string; users: number; priority: number; key: string }>
  recommendations: number
}

/** Checks every issue of one scan against its recommendation and records. */
function checkScan(where: string, s: Scan, issues: Rec[], recs: Rec[], out: Checked): void {
  const recByKey = new Map(recs.map((r) => [r.issueKey, r]))
  for (const issue of issues) {
    const p = (msg: string) => out.problems.push(`${where} ${issue.issueKey}: ${msg}`)
    const rec = recByKey.get(issue.issueKey)
    if (!rec) {
      p('no recommendation')
      continue
    }
    out.recommendations++
    const rule = issue.issueKey.split('.')[1]
    out.rules.add(rule)
    for (const k of ['title', 'category', 'priority', 'effort']) if (rec[k] !== issue[k]) p(`recommendation ${k} ${JSON.stringify(rec[k])} differs from the issue's ${JSON.stringify(issue[k])}`)
    const items = rec.affectedItems as Rec[]
    const records = items.map((i) => resolve(rule, i, s))
    if (items.length === 0 || records.some((r) => r === undefined)) {
      p(`affected items ${JSON.stringify(items)} do not all resolve to records of the scan`)
      continue
    }
    const factsOf = FACTS[PMD_RULE.test(rule) ? 'pmd' : rule]
    if (!factsOf) {
      p(`rule ${rule} has no entry in this test: say which records its numbers come from`)
      continue
    }
    const f = factsOf(records[0]!, s)
    if (GRANT_FLAG[rule] && records[0]![GRANT_FLAG[rule]] !== true) p(`the ${items[0].type} record does not grant ${GRANT_FLAG[rule]}`)
    const expected = f.unit === 'items' ? items.length : f.values[f.unit]
    if (issue.affectedCount !== expected) p(`affectedCount ${issue.affectedCount}, but the records count ${expected} ${f.unit}`)
    if (f.unit === 'users') out.held.push({ rule, users: Number(f.values.users), priority: issue.priority, key: issue.issueKey })
    const names = namesOf(records as Rec[], items, issue.issueKey)
    const texts = [issue.title, issue.impact, rec.summary, rec.rationale, ...(rec.remediationSteps as string[])]
    for (const text of texts) for (const msg of checkText(text, names, f.values)) p(msg)
  }
}

/** A grant (or token, or license) nobody holds ranks below every one of the same rule that somebody holds, and is never high priority. */
function checkRanking(where: string, held: Checked['held'], problems: string[]): void {
  for (const h of held.filter((x) => x.users === 0)) {
    if (h.priority >= 3) problems.push(`${where} ${h.key}: held by no user, yet priority ${h.priority} (high or critical)`)
    const above = held.filter((x) => x.rule === h.rule && x.users > 0 && x.priority <= h.priority)
    if (above.length > 0) problems.push(`${where} ${h.key}: held by no user, yet ranks with ${above[0].key} (held by ${above[0].users}, priority ${above[0].priority})`)
  }
}

function checkBundles(scale: number, which: (def: (typeof DEMO_ORG_DEFS)[number], i: number) => boolean): Checked {
  const out: Checked = { problems: [], rules: new Set(), held: [], recommendations: 0 }
  for (const def of DEMO_ORG_DEFS) {
    for (let i = 0; i < def.scans.length; i++) {
      if (def.scans[i].status !== 'completed' || !which(def, i)) continue
      const b = demoBundle(def, i, { scale })
      const { issues, recommendations, cloudUsage, ...data } = b.data as Record<string, any>
      const where = `${def.key} scan ${i + 1} (scale ${scale})`
      const from = out.held.length
      checkScan(where, { data, cloudUsage }, issues, recommendations, out)
      checkRanking(where, out.held.slice(from), out.problems)
    }
  }
  return out
}

/** Every rule of the demo scanner this test knows: all of them must occur in the data it checks. */
const KNOWN_RULES = [
  'modify_all_data', 'view_all_data', 'data_export', 'unused_connected_app', 'self_authorized_full_access', 'apex_apexsoqlinjection',
  'operation_in_loop', 'pmd_emptycatchblock', 'outdated_api_version', 'low_test_coverage', 'eslint_errors', 'multiple_triggers',
  'process_builder', 'workflow_rules', 'unused_object', 'custom_field_limit', 'unused_field', 'near_limit', 'unused_licenses',
  'license_expiring', 'package_license_expired', 'inactive_users', 'unused_cloud', 'unassigned_permission_set',
]

const report = (problems: string[]) => (problems.length === 0 ? 'none' : `${problems.length}, e.g.\n  ${problems.slice(0, 12).join('\n  ')}`)

const seen = new Set<string>()

t.test(`generated bundles at the tests' scale: every number in the texts is the records' number`, async (t) => {
  const r = checkBundles(SEED_SCALE, () => true)
  for (const x of r.rules) seen.add(x)
  t.ok(r.recommendations > 300, `${r.recommendations} recommendations checked`)
  t.ok(r.held.some((h) => h.users === 0), 'some grants are held by nobody (the ranking check has cases)')
  t.same(r.problems, [], `problems: ${report(r.problems)}`)
})

t.test('generated bundles at full scale (latest scans): the same, with the rules that need a large org', async (t) => {
  const r = checkBundles(1, (def, i) => def.scans.slice(i + 1).every((s) => s.status !== 'completed'))
  for (const x of r.rules) seen.add(x)
  t.ok(r.recommendations > 2_000, `${r.recommendations} recommendations checked`)
  t.same(r.problems, [], `problems: ${report(r.problems)}`)
  t.same(KNOWN_RULES.filter((x) => !seen.has(x)), [], 'every known rule occurs in the checked data')
})

t.test('what REST serves for the large org agrees too (percentUsed and the other derived fields from SQL)', async (t) => {
  const ts = await startTestService(t)
  const org = ts.seed.orgs.find((o) => o.large)!
  const auth = await ts.keyHeader(org.accountId)
  const base = `/v1/orgs/${org.salesforceId}`
  const all = async (name: string): Promise<Rec[]> => {
    const rows: Rec[] = []
    for (let offset = 0; ; offset += 200) {
      // Org limits come in one page and take no paging parameters.
      const r = await ts.get(name === 'orgLimits' ? `${base}/${name}` : `${base}/${name}?limit=200&offset=${offset}&filter=`, auth)
      t.equal(r.status, 200, `GET ${name} offset ${offset}`)
      rows.push(...(r.body.data as Rec[]))
      if (!r.body.meta?.hasMore) return rows
    }
  }
  const names = ['sfProfiles', 'permissionSets', 'connectedApps', 'pmds', 'codeCounts', 'triggers', 'esLints', 'workflows', 'flows',
    'objects', 'fields', 'orgLimits', 'licenseUsages', 'installedPackages', 'loginActivity']
  const data: Record<string, Rec[]> = {}
  for (const n of names) data[n] = await all(n)
  const cloudUsage = (await ts.get(`${base}/cloudUsage`, auth)).body.data as Rec
  const issues = await all('issues')
  const recs: Rec[] = []
  for (const i of issues) {
    const r = await ts.get(`${base}/issues/${Buffer.from(i.issueKey).toString('base64url')}`, auth)
    t.equal(r.status, 200, `GET recommendation ${i.issueKey}`)
    recs.push(r.body.data)
  }
  const out: Checked = { problems: [], rules: new Set(), held: [], recommendations: 0 }
  checkScan(`REST ${org.name}`, { data, cloudUsage }, issues, recs, out)
  checkRanking(`REST ${org.name}`, out.held, out.problems)
  t.equal(out.recommendations, issues.length, `${issues.length} served recommendations checked`)
  t.ok(out.rules.has('near_limit'), 'a near-limit issue (percentUsed derived in SQL) is among them')
  t.same(out.problems, [], `problems: ${report(out.problems)}`)
})
