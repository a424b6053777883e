/**
 * Custom code of a demo org: Apex classes and triggers, Lightning components and Visualforce pages, with line
 * counts, class types, ESLint findings and PMD violations. Built once per org, rendered per scan.
 */
import { ALWAYS, alive, lifeOf, type Ctx, type Life } from './context.ts'
import { Rng } from './prng.ts'
import { camel, round } from './util.ts'
import type { ObjModel } from './schema.ts'
import { CLASS_PATTERNS, COMMON_CLASSES, COMPONENT_NOUNS, ESLINT_RULES, PACKAGE_CLASSES, PMD_RULES, VF_PAGES } from './vocab-code.ts'

export interface CodeFile {
  id: number
  name: string
  type: 'apex_class' | 'apex_trigger' | 'lwc' | 'aura' | 'visualforce'
  namespace: string | null
  classType: string
  apiVersion: number
  lines: number
  commentShare: number
  blankShare: number
  /** Trigger details. */
  object?: string
  events?: string[]
  active?: boolean
  coverage?: number | null
  life: Life
  lint: Array<{ id: number; rule: (typeof ESLINT_RULES)[number]; file: string; line: number; column: number }>
  pmd: Array<{ id: number; rule: (typeof PMD_RULES)[number]; line: number }>
}

/** Object name stem for code names: Warranty_Claim__c → WarrantyClaim. */
export const stem = (api: string) => api.replace(/^[A-Za-z0-9]+__(?=.+__c$)/, '').replace(/__(c|mdt|kav)$/, '').replace(/_/g, '')

const PACKAGE_TRIGGERS: Readonly<Record<string, Array<[string, string]>>> = {
  SBQQ: [['QuoteAfter', 'SBQQ__Quote__c'], ['QuoteLineBefore', 'SBQQ__QuoteLine__c']],
  npsp: [['TDTM_Opportunity', 'Opportunity'], ['TDTM_Contact', 'Contact'], ['TDTM_Account', 'Account']],
  dsfs: [['DocuSignStatusTrigger', 'dsfs__DocuSign_Status__c']],
  et4ae5: [['triggerIndividualEmailResult', 'et4ae5__IndividualEmailResult__c']],
}
const EVENTS = ['before_insert', 'before_update', 'before_delete', 'after_insert', 'after_update', 'after_delete', 'after_undelete']

function apiVersion(rng: Rng): number {
  const r = rng.next()
  return r < 0.5 ? rng.int(58, 65) : r < 0.85 ? rng.int(40, 57) : rng.int(24, 39)
}

/** Standard objects nobody writes triggers, flows or components for. */
const PASSIVE = new Set(['UserRole', 'Group', 'Note', 'Attachment', 'Solution', 'Idea', 'Territory2', 'Macro', 'Partner', 'Document', 'Report', 'Dashboard', 'Topic', 'ContentDocument', 'ContactPointEmail', 'Individual', 'CaseComment', 'PricebookEntry', 'Pricebook2'])

/** Objects that code is written against: the used business standard objects first, then custom ones by volume. */
export function codeObjects(schema: readonly ObjModel[]): ObjModel[] {
  const std = schema.filter((o) => o.kind === 'standard' && o.records > 0 && !PASSIVE.has(o.apiName))
  const custom = schema.filter((o) => o.kind === 'custom' && o.life === ALWAYS).sort((a, b) => b.records - a.records || a.id - b.id)
  return [...std, ...custom]
}

export function buildCode(ctx: Ctx, schema: readonly ObjModel[]): CodeFile[] {
  const rng = Rng.of(ctx.def.key, ctx.scale, 'code')
  const objs = codeObjects(schema)
  const has = new Set(schema.map((o) => o.apiName))
  const files: CodeFile[] = []
  const add = (name: string, type: CodeFile['type'], namespace: string | null, classType: string, extra: Partial<CodeFile> = {}) => {
    const test = classType === 'test'
    files.push({
      id: files.length + 1, name, type, namespace, classType, apiVersion: type === 'lwc' ? Math.max(45, apiVersion(rng)) : apiVersion(rng),
      lines: type === 'apex_trigger' ? rng.logInt(6, 420) : test ? rng.int(40, 600) : rng.logInt(15, type === 'apex_class' ? 3200 : 900),
      commentShare: rng.float(0.03, 0.22), blankShare: rng.float(0.06, 0.15),
      life: lifeOf(ctx, `code:${type}:${name}`, 0.04, 0.02), lint: [], pmd: [], ...extra,
    })
  }
  // Apex classes.
  const nPkg = Math.min(ctx.def.namespaces.length * 2, Math.max(1, Math.round(ctx.size.apexClasses * 0.03)))
  const names: Array<[string, string]> = [...COMMON_CLASSES.map(([n, t]) => [n, t] as [string, string])]
  for (const [p, t] of CLASS_PATTERNS) for (const o of objs) names.push([p.replace('{O}', stem(o.apiName)), t])
  const ownTarget = Math.max(1, ctx.size.apexClasses - nPkg)
  const seen = new Set<string>()
  for (const [n, t] of [...COMMON_CLASSES.slice(0, 3), ...rng.sample(names, names.length)]) {
    if (seen.size >= ownTarget) break
    if (seen.has(n)) continue
    seen.add(n)
    add(n, 'apex_class', null, t)
  }
  for (let i = 0; i < nPkg && ctx.def.namespaces.length; i++) {
    const [n, t] = PACKAGE_CLASSES[i % PACKAGE_CLASSES.length]
    add(n, 'apex_class', ctx.def.namespaces[i % ctx.def.namespaces.length], t)
  }
  // Triggers: one per busy object, a second legacy trigger on a few, and the packages' own.
  const trig: Array<[string, string, string | null]> = []
  for (const ns of ctx.def.namespaces) for (const [n, o] of PACKAGE_TRIGGERS[ns] ?? []) if (has.has(o)) trig.push([n, o, ns])
  if (ctx.def.namespaces.includes('dlrs')) for (const o of objs.slice(0, 2)) trig.push([`dlrs_${stem(o.apiName)}Trigger`, o.apiName, null])
  for (const [i, o] of objs.entries()) {
    trig.push([`${stem(o.apiName)}Trigger`, o.apiName, null])
    if (i % 9 === 0) trig.push([`${stem(o.apiName)}LegacyTrigger`, o.apiName, null])
  }
  for (const [n, o, ns] of trig.slice(0, ctx.size.triggers)) {
    const events = rng.sample(EVENTS, rng.int(1, 4)).sort((a, b) => EVENTS.indexOf(a) - EVENTS.indexOf(b))
    add(n, 'apex_trigger', ns, 'trigger', { object: o, events, active: rng.chance(0.9), coverage: ns ? null : round(rng.chance(0.2) ? rng.float(0, 74) : rng.float(75, 100), 1) })
  }
  // Lightning web components, Aura components, Visualforce pages.
  const comps = rng.names(objs.slice(0, 40).flatMap((o) => COMPONENT_NOUNS.map((n) => `${stem(o.apiName)}|${n}`)), ctx.size.lwc + ctx.size.aura, '').map((x) => x.split('|'))
  for (const [s, n] of comps.slice(0, ctx.size.lwc)) add(camel([s, n]), 'lwc', null, 'component')
  for (const [s, n] of comps.slice(ctx.size.lwc, ctx.size.lwc + ctx.size.aura)) add(`${s}${n}Cmp`, 'aura', null, 'component')
  for (let i = 0; i < ctx.size.visualforce; i++) add(VF_PAGES[i] ?? `${stem(objs[i % objs.length].apiName)}Page${Math.floor(i / objs.length) || ''}`, 'visualforce', null, 'page')
  // Findings, with ids derived from the file id so they are stable across scans.
  let lintDone = 0
  let pmdDone = 0
  for (const f of files) {
    const r = Rng.of(ctx.def.key, 'findings', f.id)
    if (f.type === 'lwc' || f.type === 'aura') {
      const n = lintDone < 3 ? r.int(1, 3) : r.weighted([[0, 30], [1, 25], [2, 20], [3, 12], [5, 8], [8, 5]] as const)
      const rules = ESLINT_RULES.filter(([, t]) => t === f.type || t === 'any')
      for (let k = 0; k < n; k++) {
        f.lint.push({ id: f.id * 10 + k, rule: r.pick(rules), file: f.type === 'lwc' ? `${f.name}.js` : `${f.name}${r.chance(0.5) ? 'Controller' : 'Helper'}.js`, line: r.int(3, 260), column: r.int(1, 60) })
      }
      lintDone += n
    } else if (f.type === 'apex_class' && f.namespace === null) {
      const test = f.classType === 'test'
      const n = pmdDone < 3 ? r.int(1, 3) : test ? r.weighted([[0, 60], [1, 30], [2, 10]] as const) : r.weighted([[0, 25], [1, 25], [2, 20], [3, 15], [5, 10], [9, 5]] as const)
      // Severe rules are rarer: weight by PMD priority (1 = most severe).
      const rules = PMD_RULES.filter(([rule]) => (test ? /UnitTest|Debug|Unused/.test(rule) : !/UnitTest/.test(rule))).map((x) => [x, [0, 1, 3, 6, 8, 8][x[2]]] as const)
      for (let k = 0; k < n; k++) f.pmd.push({ id: f.id * 20 + k, rule: r.weighted(rules), line: r.int(5, Math.max(6, f.lines - 1)) })
      pmdDone += n
    }
  }
  return files
}

const PATHS: Record<CodeFile['type'], (n: string) => string> = {
  apex_class: (n) => `force-app/main/default/classes/${n}.cls`,
  apex_trigger: (n) => `force-app/main/default/triggers/${n}.trigger`,
  lwc: (n) => `force-app/main/default/lwc/${n}/${n}.js`,
  aura: (n) => `force-app/main/default/aura/${n}/${n}.cmp`,
  visualforce: (n) => `force-app/main/default/pages/${n}.page`,
}

export function codeCountRecords(files: readonly CodeFile[], v: number): Record<string, unknown>[] {
  return files.filter((f) => alive(f.life, v)).map((f) => {
    const comment = Math.round(f.lines * f.commentShare)
    const blank = Math.round(f.lines * f.blankShare)
    return {
      id: f.id, name: f.name, path: f.namespace ? `installed/${f.namespace}/${PATHS[f.type](f.name).split('/').slice(-2).join('/')}` : PATHS[f.type](f.name),
      type: f.type, namespace: f.namespace, apiVersion: f.apiVersion, totalLines: f.lines, codeLines: f.lines - comment - blank,
      commentLines: comment, blankLines: blank,
    }
  })
}

export function classTypeRecords(files: readonly CodeFile[], v: number): Record<string, unknown>[] {
  return files.filter((f) => f.type === 'apex_class' && alive(f.life, v)).map((f) => ({ id: f.id, className: f.name, namespace: f.namespace, classType: f.classType }))
}

export function triggerRecords(files: readonly CodeFile[], v: number): Record<string, unknown>[] {
  return files.filter((f) => f.type === 'apex_trigger' && alive(f.life, v)).map((f) => ({
    id: f.id, name: f.name, objectApiName: f.object!, namespace: f.namespace, status: f.active ? 'active' : 'inactive',
    events: f.events!, lines: f.lines, apiVersion: f.apiVersion, coveragePercent: f.coverage ?? null,
  }))
}

export function esLintRecords(files: readonly CodeFile[], v: number): Record<string, unknown>[] {
  return files.filter((f) => f.lint.length && alive(f.life, v)).flatMap((f) => f.lint.map((l) => ({
    id: l.id, fileName: l.file, bundle: f.name, componentType: f.type as 'lwc' | 'aura', ruleId: l.rule[0], severity: l.rule[2],
    message: l.rule[3], line: l.line, column: l.column,
  })))
}

export function pmdRecords(files: readonly CodeFile[], v: number): Record<string, unknown>[] {
  return files.filter((f) => f.pmd.length && alive(f.life, v)).flatMap((f) => f.pmd.map((p) => ({
    id: p.id, fileName: `${f.name}.cls`, className: f.name, rule: p.rule[0], ruleSet: p.rule[1], priority: p.rule[2], line: p.line, message: p.rule[3],
  })))
}
