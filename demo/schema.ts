/**
 * The demo org's data model: standard, managed-package, custom and custom-metadata objects with their fields.
 * Built once per org (ids assigned in a fixed order, so they are stable across scans), rendered per scan.
 */
import { ALWAYS, alive, createdAt, growth, lifeOf, within, type Ctx, type Life } from './context.ts'
import { Rng, unit } from './prng.ts'
import { clamp, iso, labelOf, round, DAY_MS } from './util.ts'
import {
  COMMON_CUSTOM_FIELDS, COMMON_CUSTOM_OBJECTS, FIELD_WORDS_A, FIELD_WORDS_B, METADATA_TYPES, OBJECT_WORDS_A, OBJECT_WORDS_B,
  PACKAGE_SCHEMA, STANDARD_OBJECTS, SYSTEM_FIELDS, fieldTypeOf,
} from './vocab-schema.ts'

export type ObjKind = 'standard' | 'package' | 'custom' | 'mdt'

export interface FieldModel {
  id: number
  apiName: string
  label: string
  type: string
  length: number | null
  isCustom: boolean
  namespace: string | null
  /** Percent populated in the latest scan, and in the earlier ones. */
  pct: number
  oldPct: number
  isRequired: boolean
  isUnique: boolean
  isExternalId: boolean
  referenceTo: string[]
  helpText: string | null
  description: string | null
  layouts: number
  reports: number
  automations: number
  created: number
  modU: number
  life: Life
}

export interface ObjModel {
  id: number
  apiName: string
  label: string
  kind: ObjKind
  namespace: string | null
  records: number
  created: number
  /** Days between the last use and the scan; null: never used. */
  lastUsedAgo: number | null
  sharingModel: string
  life: Life
  fields: FieldModel[]
}

const HELP = [
  'Populated by the nightly ERP sync; do not edit manually.', 'Used by the renewal forecast report.',
  'Set automatically when the record is approved.', 'Enter the value agreed with the customer.',
  'Required by Finance for quarter-end reporting.', 'Legacy value migrated from the previous CRM.',
]
const DESCRIPTIONS = [
  'Created for the 2019 territory redesign.', 'Requested by Sales Ops (ticket SO-1182).', 'Mirrors the SAP customer master.',
  'Temporary field for the data migration project.', 'Drives the lead routing rules.', 'Feeds the executive dashboard.',
  'Owned by the Customer Success team.', 'Deprecated: replaced by the new scoring model.',
]

const CUSTOM_FIELD_WORDS = FIELD_WORDS_A.flatMap((a) => FIELD_WORDS_B.map((b) => `${a}_${b}`))
const PACKAGE_FIELD_WORDS = FIELD_WORDS_A.flatMap((a) => FIELD_WORDS_B.map((b) => `${a}${b.replace('_', '')}`))

function pctFor(rng: Rng, kind: 'system' | 'standard' | 'custom' | 'package'): number {
  if (kind === 'system') return 100
  const r = rng.next()
  const [unused, low, mid] = kind === 'standard' ? [0.08, 0.12, 0.3] : kind === 'package' ? [0.33, 0.17, 0.25] : [0.2, 0.18, 0.3]
  if (r < unused) return rng.chance(0.5) ? 0 : round(rng.next(), 2)
  if (r < unused + low) return round(rng.float(1, 5), 2)
  if (r < unused + low + mid) return round(rng.float(5, 50), 2)
  return round(rng.float(50, 100), 2)
}

function objectNames(ctx: Ctx, rng: Rng): Array<{ apiName: string; kind: ObjKind; namespace: string | null; std?: string }> {
  const n = ctx.size.objects
  const pkg = ctx.def.namespaces.map((ns) => (PACKAGE_SCHEMA[ns]?.objects ?? []).map((o) => ({ apiName: `${ns}__${o}__c`, ns })))
  const pkgTotal = pkg.reduce((a, l) => a + l.length, 0)
  const nStd = Math.min(STANDARD_OBJECTS.length, Math.max(4, Math.round(n * 0.35)))
  const nPkg = Math.min(pkgTotal, Math.max(pkg.length > 0 ? 2 : 0, Math.round(n * 0.15)))
  const nMdt = Math.min(METADATA_TYPES.length, Math.max(1, Math.round(n * 0.005)))
  const out: Array<{ apiName: string; kind: ObjKind; namespace: string | null; std?: string }> = []
  for (const [api, std] of STANDARD_OBJECTS.slice(0, nStd)) out.push({ apiName: api, kind: 'standard', namespace: null, std })
  for (let i = 0, taken = 0; taken < nPkg; i++) {
    const list = pkg[i % pkg.length]
    const o = list[Math.floor(i / pkg.length)]
    if (o) {
      out.push({ apiName: o.apiName, kind: 'package', namespace: o.ns })
      taken++
    }
  }
  for (const m of METADATA_TYPES.slice(0, nMdt)) out.push({ apiName: `${m}__mdt`, kind: 'mdt', namespace: null })
  const combos = rng.names(OBJECT_WORDS_A.flatMap((a) => OBJECT_WORDS_B.map((b) => `${a}_${b}`)), n)
  const seen = new Set<string>()
  for (const name of [...COMMON_CUSTOM_OBJECTS, ...combos]) {
    if (out.length >= n) break
    if (seen.has(name)) continue
    seen.add(name)
    out.push({ apiName: `${name}__c`, kind: 'custom', namespace: null })
  }
  return out
}

const STD_LABEL: Record<string, string> = { Product2: 'Product', Pricebook2: 'Price Book', PricebookEntry: 'Price Book Entry', OpportunityLineItem: 'Opportunity Product', Knowledge__kav: 'Knowledge', Territory2: 'Territory', ContentVersion: 'Content Version' }
const STD_WEIGHT: Record<string, number> = { Account: 40, Opportunity: 30, Contact: 25, Lead: 18, Case: 18, Product2: 6, Quote: 5, Order: 5 }
const STD_VOLUME: Record<string, number> = { Account: 0.3, Contact: 0.8, Opportunity: 0.4, Lead: 1, Case: 0.6, Task: 3, Event: 1, EmailMessage: 2, CampaignMember: 0.9, User: 0.0025 }
const STD_SHARING: Record<string, string> = { Account: 'Private', Contact: 'ControlledByParent', Opportunity: 'Private', Lead: 'ReadWriteTransfer', Case: 'Private', Campaign: 'FullAccess', User: 'Read', Task: 'Private', Event: 'Private' }

export function buildSchema(ctx: Ctx): ObjModel[] {
  const rng = Rng.of(ctx.def.key, ctx.scale, 'schema')
  const names = objectNames(ctx, rng)
  const volume = ctx.size.users * 400
  const objects: ObjModel[] = names.map((o, i) => {
    const life = o.kind === 'custom' ? lifeOf(ctx, o.apiName, 0.03, 0.015) : ALWAYS
    const records =
      o.kind === 'standard' ? Math.round(volume * (STD_VOLUME[o.apiName] ?? rng.float(0, 0.05)) * rng.float(0.7, 1.3))
      : o.kind === 'mdt' ? rng.int(3, 60)
      : rng.chance(o.kind === 'custom' ? 0.2 : 0.15) ? 0
      : rng.logInt(1, Math.max(2, Math.round(volume * 0.05)))
    const lastUsedAgo = records === 0 ? (rng.chance(0.5) ? null : rng.int(380, 1400)) : rng.chance(0.1) ? rng.int(200, 700) : rng.int(0, 6)
    return {
      id: i + 1, apiName: o.apiName, label: o.kind === 'standard' ? STD_LABEL[o.apiName] ?? labelOf(o.apiName) : labelOf(o.apiName),
      kind: o.kind, namespace: o.namespace, records, created: o.kind === 'standard' ? ctx.orgCreated : createdAt(ctx, rng, life),
      lastUsedAgo, life, fields: [],
      sharingModel: o.kind === 'standard' ? STD_SHARING[o.apiName] ?? 'ReadWrite' : o.kind === 'mdt' ? 'Read'
        : rng.weighted([['ReadWrite', 5], ['Private', 3], ['Read', 1], ['ControlledByParent', 1]] as const),
    }
  })
  // Standard and system fields, then the custom-field budget spread by weight.
  const base = objects.map((o, i) => {
    const sys: string[] = o.kind === 'mdt' ? ['Id', 'DeveloperName', 'MasterLabel', 'Label', 'NamespacePrefix', 'QualifiedApiName'] : [...SYSTEM_FIELDS]
    const std = o.kind === 'standard' ? names[i].std!.split(' ') : o.kind === 'mdt' ? [] : ['Name']
    return { sys, std }
  })
  const fixed = base.reduce((a, b) => a + b.sys.length + b.std.length, 0)
  const budget = Math.max(objects.length, ctx.size.fields - fixed)
  const weights = objects.map((o) => (o.kind === 'standard' ? STD_WEIGHT[o.apiName] ?? 2 : o.kind === 'package' ? 1.5 : o.kind === 'mdt' ? 0.5 : rng.float(0.3, 2.2)))
  const wsum = weights.reduce((a, b) => a + b, 0)
  let nextField = 1
  let remaining = budget
  objects.forEach((o, i) => {
    const frng = Rng.of(ctx.def.key, ctx.scale, 'fields', o.apiName)
    const share = i === objects.length - 1 ? remaining : Math.max(1, Math.round((budget * weights[i]) / wsum))
    const nCustom = Math.max(o.kind === 'standard' ? 0 : 1, Math.min(remaining, share))
    remaining -= nCustom
    const add = (apiName: string, kind: 'system' | 'standard' | 'custom' | 'package', ns: string | null) => {
      const word = apiName.replace(/^[A-Za-z0-9]+__(?=.+__c$)/, '')
      const t = fieldTypeOf(word, o.apiName)
      const custom = kind === 'custom' || kind === 'package'
      const life = custom && o.kind !== 'package' ? within(o.life, lifeOf(ctx, `${o.apiName}.${apiName}`)) : o.life
      let pct = o.records === 0 ? 0 : pctFor(frng, kind)
      if (t.type === 'Checkbox' && kind !== 'custom') pct = o.records === 0 ? 0 : 100
      const flip = unit(`${ctx.def.key}:flip:${o.apiName}.${apiName}`)
      const oldPct = custom && flip < 0.04 && o.records > 0 ? (pct < 1 ? round(frng.float(8, 40), 2) : pct >= 5 ? 0 : pct) : pct
      const ext = custom && /(Legacy_Id|External_Id|ERP_.*Number|_Key)$/.test(word.replace(/__c$/, ''))
      const unused = pct < 1
      o.fields.push({
        id: nextField++, apiName, label: labelOf(apiName), type: t.type, length: t.length, isCustom: custom, namespace: ns, pct, oldPct,
        isRequired: /^(Name|LastName|Company|StageName|CloseDate|Subject|Status)$/.test(apiName) || (kind === 'custom' && frng.chance(0.03)),
        isUnique: ext && frng.chance(0.5), isExternalId: ext, referenceTo: t.referenceTo,
        helpText: custom && frng.chance(0.25) ? frng.pick(HELP) : null,
        description: kind === 'custom' && frng.chance(0.35) ? frng.pick(DESCRIPTIONS) : null,
        layouts: kind === 'system' ? frng.int(0, 2) : unused && frng.chance(0.7) ? 0 : frng.int(0, 6),
        reports: unused ? (frng.chance(0.85) ? 0 : frng.int(1, 2)) : frng.logInt(1, 40) - 1,
        automations: unused ? 0 : frng.chance(0.3) ? frng.int(1, 5) : 0,
        created: kind === 'system' || kind === 'standard' ? Math.max(o.created, ctx.orgCreated) : createdAt(ctx, frng, life, o.created),
        modU: frng.next(), life,
      })
    }
    for (const f of base[i].sys) add(f, 'system', null)
    for (const f of base[i].std) add(f, 'standard', null)
    const used = new Set(o.fields.map((f) => f.apiName))
    if (o.kind === 'standard') {
      for (const ns of ctx.def.namespaces) for (const w of PACKAGE_SCHEMA[ns]?.standardFields[o.apiName] ?? []) add(`${ns}__${w}__c`, 'package', ns)
    }
    const ns = o.namespace
    const pool = o.kind === 'package'
      ? frng.names(PACKAGE_FIELD_WORDS, nCustom, '').map((w) => `${ns}__${w}__c`)
      : [...(o.kind === 'standard' ? COMMON_CUSTOM_FIELDS : []), ...frng.names(CUSTOM_FIELD_WORDS, nCustom)].map((w) => `${w}__c`)
    let added = 0
    for (const name of pool) {
      if (added >= nCustom) break
      if (used.has(name)) continue
      used.add(name)
      add(name, o.kind === 'package' ? 'package' : 'custom', ns)
      added++
    }
  })
  return objects
}

export const objectAlive = (o: ObjModel, v: number) => alive(o.life, v)

/** Record count of an object at version v. */
export const recordsAt = (ctx: Ctx, o: ObjModel, v: number) => Math.round(o.records * growth(ctx, v))

export function objectRecords(ctx: Ctx, schema: readonly ObjModel[], v: number): Record<string, unknown>[] {
  const t = ctx.times[v]
  return schema.filter((o) => alive(o.life, v)).map((o) => {
    const fields = o.fields.filter((f) => alive(f.life, v))
    return {
      id: o.id, apiName: o.apiName, label: o.label, isCustom: o.kind !== 'standard', namespace: o.namespace,
      recordCount: recordsAt(ctx, o, v), fieldCount: fields.length, customFieldCount: fields.filter((f) => f.isCustom).length,
      lastUsedDate: o.lastUsedAgo === null ? null : iso(Math.max(o.created, t - o.lastUsedAgo * DAY_MS - (o.id % 23) * 3_600_000)),
      createdDate: iso(o.created), sharingModel: o.sharingModel,
    }
  })
}

export function fieldRecords(ctx: Ctx, schema: readonly ObjModel[], v: number): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = []
  const hi = ctx.times[v] - 3_600_000
  for (const o of schema) {
    if (!alive(o.life, v)) continue
    const rc = recordsAt(ctx, o, v)
    for (const f of o.fields) {
      if (!alive(f.life, v)) continue
      const pct = v === ctx.last ? f.pct : f.oldPct
      const populated = Math.round((rc * pct) / 100)
      const created = f.created
      out.push({
        id: f.id, sobjectId: o.id, objectApiName: o.apiName, apiName: f.apiName, label: f.label, type: f.type, length: f.length,
        isCustom: f.isCustom, namespace: f.namespace, percentPopulated: rc === 0 ? 0 : clamp(round((populated * 100) / rc, 2), 0, 100),
        populatedCount: populated, recordCount: rc, isRequired: f.isRequired, isUnique: f.isUnique, isExternalId: f.isExternalId,
        referenceTo: f.referenceTo, helpText: f.helpText, description: f.description, usedInLayouts: f.layouts,
        usedInReports: f.reports, usedInAutomations: f.automations, createdDate: iso(created),
        lastModifiedDate: iso(Math.max(created, Math.min(hi, created + f.modU * (ctx.times[ctx.last] - created)))),
      })
    }
  }
  return out
}
