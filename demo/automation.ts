/**
 * Declarative automation (flows, Process Builder, workflow rules) and the metadata item inventory of a demo
 * org. Built once per org, rendered per scan.
 */
import { ALWAYS, alive, createdAt, lifeOf, type Ctx, type Life } from './context.ts'
import { Rng } from './prng.ts'
import { DAY_MS, iso, keyPart } from './util.ts'
import type { Access } from './access.ts'
import { codeObjects, stem, type CodeFile } from './code.ts'
import type { ObjModel } from './schema.ts'
import { FLOW_SUFFIXES, WORKFLOW_NAMES } from './vocab-code.ts'

export interface FlowModel {
  id: number
  apiName: string
  processType: string
  status: string
  object: string | null
  triggerType: string | null
  version: number
  bumped: boolean
  apiVersion: number
  elements: number
  modified: number
  life: Life
}

export interface WorkflowModel {
  id: number
  name: string
  object: string
  active: boolean
  triggerType: string
  actions: number
  modified: number
  life: Life
}

const YEAR = 365 * DAY_MS

export function buildFlows(ctx: Ctx, schema: readonly ObjModel[]): FlowModel[] {
  const rng = Rng.of(ctx.def.key, ctx.scale, 'flows')
  const objs = codeObjects(schema).slice(0, 80)
  const seen = new Set<string>()
  const out: FlowModel[] = []
  while (out.length < ctx.size.flows) {
    const type = rng.weighted([['record_triggered', 35], ['screen', 18], ['autolaunched_flow', 18], ['process_builder', 13], ['scheduled', 7], ['workflow', 4], ['flow', 5]] as const)
    const o = objs[Math.min(objs.length - 1, Math.floor(Math.pow(rng.next(), 1.8) * objs.length))]
    let apiName = `${stem(o.apiName)}_${rng.pick(FLOW_SUFFIXES[type])}`
    for (let k = 2; seen.has(apiName); k++) apiName = `${stem(o.apiName)}_${rng.pick(FLOW_SUFFIXES[type])}_${k}`
    seen.add(apiName)
    const legacy = type === 'process_builder' || type === 'workflow'
    const withObject = type === 'record_triggered' || legacy || (type === 'scheduled' && rng.chance(0.5))
    const life = lifeOf(ctx, `flow:${apiName}`, 0.04, 0.02)
    const created = createdAt(ctx, rng, life)
    out.push({
      id: out.length + 1, apiName, processType: type, life,
      status: rng.weighted([['active', 70], ['draft', 10], ['obsolete', 12], ['inactive', 8]] as const),
      object: withObject ? o.apiName : null,
      triggerType: type === 'record_triggered' ? rng.weighted([['RecordAfterSave', 5], ['RecordBeforeSave', 4], ['RecordBeforeDelete', 1]] as const)
        : type === 'scheduled' ? 'Scheduled' : type === 'autolaunched_flow' && rng.chance(0.15) ? 'PlatformEvent' : null,
      version: rng.logInt(1, 25), bumped: rng.chance(0.15), apiVersion: legacy ? rng.int(38, 49) : rng.int(50, 65),
      elements: rng.logInt(3, 150),
      modified: legacy ? Math.max(created, ctx.now - rng.float(1.5, 6) * YEAR) : created + rng.next() * (ctx.times[ctx.last] - created),
    })
  }
  return out
}

export function buildWorkflows(ctx: Ctx, schema: readonly ObjModel[]): WorkflowModel[] {
  const rng = Rng.of(ctx.def.key, ctx.scale, 'workflows')
  const objs = codeObjects(schema).slice(0, 60)
  const seen = new Set<string>()
  const out: WorkflowModel[] = []
  while (out.length < ctx.size.workflows) {
    const o = objs[Math.min(objs.length - 1, Math.floor(Math.pow(rng.next(), 1.5) * objs.length))]
    let name = rng.pick(WORKFLOW_NAMES)
    for (let k = 2; seen.has(`${o.apiName}.${name}`); k++) name = `${rng.pick(WORKFLOW_NAMES)} ${k}`
    seen.add(`${o.apiName}.${name}`)
    out.push({
      id: out.length + 1, name, object: o.apiName, active: rng.chance(0.65),
      triggerType: rng.weighted([['on_create', 3], ['on_create_or_triggering_update', 5], ['on_all_changes', 2]] as const),
      actions: rng.int(1, 6), modified: Math.max(ctx.orgCreated + DAY_MS, ctx.now - rng.float(1.5, 8) * YEAR),
      life: lifeOf(ctx, `wf:${o.apiName}.${name}`, 0.01, 0.04),
    })
  }
  return out
}

export function flowRecords(ctx: Ctx, flows: readonly FlowModel[], v: number): Record<string, unknown>[] {
  const hi = ctx.times[v] - 3_600_000
  return flows.filter((f) => alive(f.life, v)).map((f) => ({
    id: f.id, apiName: f.apiName, label: f.apiName.replace(/_/g, ' '), processType: f.processType, status: f.status,
    objectApiName: f.object, triggerType: f.triggerType, versionNumber: f.version + (f.bumped && v === ctx.last ? 1 : 0),
    apiVersion: f.apiVersion, elementCount: f.elements, lastModifiedDate: iso(Math.min(hi, f.modified)),
  }))
}

export function workflowRecords(ctx: Ctx, wfs: readonly WorkflowModel[], v: number): Record<string, unknown>[] {
  return wfs.filter((w) => alive(w.life, v)).map((w) => ({
    id: w.id, name: w.name, objectApiName: w.object, active: w.active, triggerType: w.triggerType, actionCount: w.actions,
    lastModifiedDate: iso(Math.min(ctx.times[v] - 3_600_000, w.modified)),
  }))
}

interface ItemModel {
  id: number
  type: string
  fullName: string
  namespace: string | null
  created: number
  modU: number
  by: number
  life: Life
}

const ITEM_TYPES: Record<CodeFile['type'], string> = { apex_class: 'ApexClass', apex_trigger: 'ApexTrigger', lwc: 'LightningComponentBundle', aura: 'AuraDefinitionBundle', visualforce: 'ApexPage' }
const REPORT_FOLDERS = ['Sales_Reports', 'Service_Reports', 'Marketing_Reports', 'Executive', 'Finance', 'Unfiled_Public_Reports']
const REPORT_NAMES = ['Pipeline_by_Stage', 'Open_Cases_by_Owner', 'Won_Deals_This_Quarter', 'Lead_Conversion', 'Stale_Opportunities', 'Renewals_Next_90_Days', 'Campaign_ROI', 'Activity_by_Rep']

export function buildItems(ctx: Ctx, schema: readonly ObjModel[], access: Access, code: readonly CodeFile[], flows: readonly FlowModel[], wfs: readonly WorkflowModel[]): ItemModel[] {
  const rng = Rng.of(ctx.def.key, ctx.scale, 'items')
  const out: ItemModel[] = []
  const add = (type: string, fullName: string, namespace: string | null, life: Life = ALWAYS) => {
    out.push({ id: out.length + 1, type, fullName, namespace, created: createdAt(ctx, rng, life), modU: rng.next(), by: rng.int(0, 5), life })
  }
  for (const o of schema) {
    if (o.kind !== 'standard') add('CustomObject', o.apiName, o.namespace, o.life)
    add('Layout', `${o.apiName}-${o.label} Layout`, o.namespace, o.life)
    for (const f of o.fields) if (f.isCustom && f.id % 8 === 0) add('CustomField', `${o.apiName}.${f.apiName}`, f.namespace, f.life)
  }
  for (const f of code) add(ITEM_TYPES[f.type], f.name, f.namespace, f.life)
  for (const f of flows) add('Flow', f.apiName, null, f.life)
  for (const w of wfs) add('WorkflowRule', `${w.object}.${w.name}`, null, w.life)
  for (const p of access.profiles) add('Profile', p.name, null, p.life)
  for (const p of access.permissionSets) add('PermissionSet', p.namespace ? `${p.namespace}__${p.name}` : p.name, p.namespace, p.life)
  for (const a of access.apps) add('ConnectedApp', keyPart(a.def.name), a.def.namespace, a.life)
  const nReports = Math.max(3, Math.round(ctx.size.users * 0.4))
  for (let i = 0; i < nReports; i++) {
    const name = `${REPORT_FOLDERS[i % REPORT_FOLDERS.length]}/${REPORT_NAMES[Math.floor(i / REPORT_FOLDERS.length) % REPORT_NAMES.length]}${i >= 48 ? `_${Math.floor(i / 48) + 1}` : ''}`
    add('Report', name, null, lifeOf(ctx, `report:${i}`, 0.05, 0.03))
    if (i % 8 === 0) add('Dashboard', name.replace('/', '/Dash_'), null, lifeOf(ctx, `dash:${i}`))
  }
  for (const o of schema.slice(0, Math.max(3, Math.round(schema.length * 0.15)))) {
    add('ValidationRule', `${o.apiName}.Require_${stem(o.apiName)}_Fields`, o.namespace, o.life)
    if (o.kind !== 'mdt') add('RecordType', `${o.apiName}.${stem(o.apiName)}_Standard`, o.namespace, o.life)
  }
  return out
}

export function itemRecords(ctx: Ctx, items: readonly ItemModel[], access: Access, v: number): Record<string, unknown>[] {
  const admins = access.users.filter((u) => u.profile.perms.has('customizeApplication')).slice(0, 5).map((u) => u.name)
  const by = [...admins, 'Automated Process', ...access.users.slice(0, 6 - admins.length).map((u) => u.name)]
  const hi = ctx.times[v] - 3_600_000
  return items.filter((i) => alive(i.life, v)).map((i) => ({
    id: i.id, metadataType: i.type, fullName: i.fullName, namespace: i.namespace, manageableState: i.namespace ? 'installed' : 'unmanaged',
    createdDate: iso(i.created), lastModifiedDate: iso(Math.max(i.created, Math.min(hi, i.created + i.modU * (ctx.times[ctx.last] - i.created)))),
    createdBy: by[i.by % by.length], lastModifiedBy: by[(i.by + i.id) % by.length],
  }))
}
