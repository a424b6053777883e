/**
 * Scan bundles of the demo orgs: the org model is built once per (org, scale, now) and rendered for each
 * completed scan; issues get their firstDetectedDate from the earliest scan that already had them.
 */
import type { ScanBundle } from '../runtime/platform/import.ts'
import { buildAccess, appRecords, assignmentRecords, loginRecords, permissionSetRecords, profileRecords, type Access } from './access.ts'
import { buildFlows, buildItems, buildWorkflows, flowRecords, itemRecords, workflowRecords, type FlowModel, type WorkflowModel } from './automation.ts'
import { buildCode, classTypeRecords, codeCountRecords, esLintRecords, pmdRecords, triggerRecords, type CodeFile } from './code.ts'
import { makeCtx, type Ctx } from './context.ts'
import { recommendationOf } from './advice.ts'
import { findIssues, type Finding } from './issue-rules.ts'
import { DEFAULT_NOW, orgInfo, type DemoOrgDef } from './orgs.ts'
import { cloudUsageRecord, licenseRecords, limitRecords, packageRecords, scoreOf } from './platform.ts'
import { buildSchema, fieldRecords, objectRecords, type ObjModel } from './schema.ts'
import { DAY_MS, iso } from './util.ts'
import { genericRecords } from './generic.ts'
import type { CompiledResource } from '../runtime/core/registry.ts'
import { importTargets } from '../runtime/platform/bundle/import-bundle.ts'

type Rec = Record<string, any>

export interface OrgModel {
  ctx: Ctx
  schema: ObjModel[]
  access: Access
  code: CodeFile[]
  flows: FlowModel[]
  workflows: WorkflowModel[]
  items: ReturnType<typeof buildItems>
  /** Rendered scans by version, filled lazily. */
  scans: Map<number, { data: Record<string, Rec[]>; cloudUsage: Rec; findings: Finding[] }>
}

const models = new Map<string, OrgModel>()

export function orgModel(def: DemoOrgDef, scale = 1, now: Date = DEFAULT_NOW): OrgModel {
  const key = `${def.key}|${scale}|${now.getTime()}`
  let m = models.get(key)
  if (!m) {
    const ctx = makeCtx(def, scale, now)
    const schema = buildSchema(ctx)
    const access = buildAccess(ctx)
    const code = buildCode(ctx, schema)
    const flows = buildFlows(ctx, schema)
    const workflows = buildWorkflows(ctx, schema)
    const items = buildItems(ctx, schema, access, code, flows, workflows)
    m = { ctx, schema, access, code, flows, workflows, items, scans: new Map() }
    models.set(key, m)
  }
  return m
}

/** Forgets the cached models (the seed calls it when done, to free memory). */
export function clearModels(): void {
  models.clear()
}

function objectUsageRecords(ctx: Ctx, m: OrgModel, data: Record<string, Rec[]>, v: number): Rec[] {
  const count = (list: Rec[], pred: (r: Rec) => boolean) => {
    const out = new Map<string, number>()
    for (const r of list) if (r.objectApiName && pred(r)) out.set(r.objectApiName, (out.get(r.objectApiName) ?? 0) + 1)
    return out
  }
  const flows = count(data.flows, (f) => f.status === 'active')
  const triggers = count(data.triggers, (t) => t.status === 'active')
  const wfs = count(data.workflows, (w) => w.active)
  const active30 = data.loginActivity.filter((u) => u.logins30 > 0).length
  const t = ctx.times[v]
  return data.objects.map((o) => {
    const used = o.lastUsedDate !== null ? Date.parse(o.lastUsedDate) : null
    const recent = used !== null && t - used < 30 * DAY_MS
    const share = o.recordCount === 0 ? 0 : Math.min(1, Math.log10(o.recordCount + 1) / 7)
    return {
      id: o.id, objectId: o.id, apiName: o.apiName, recordCount: o.recordCount,
      activeUsers30d: recent ? Math.round(active30 * share * ((o.id % 7) + 3) / 10) : 0,
      flowCount: flows.get(o.apiName) ?? 0, triggerCount: triggers.get(o.apiName) ?? 0, workflowCount: wfs.get(o.apiName) ?? 0,
      fieldCount: o.fieldCount, customFieldCount: o.customFieldCount,
      lastCreatedDate: o.recordCount === 0 ? null : used !== null ? iso(used - ((o.id % 5) + 1) * 3_600_000) : o.createdDate,
      lastModifiedDate: o.recordCount === 0 ? null : used !== null ? iso(used) : o.createdDate,
      lastViewedDate: used === null ? null : iso(used),
    }
  })
}

/** The records of completed scan version `v` of an org (cached in the model). */
export function renderScan(m: OrgModel, v: number): { data: Record<string, Rec[]>; cloudUsage: Rec; findings: Finding[] } {
  const hit = m.scans.get(v)
  if (hit) return hit
  const { ctx } = m
  const data: Record<string, Rec[]> = {
    connectedApps: appRecords(ctx, m.access, v),
    connectedAppAssignments: assignmentRecords(m.access, v),
    fields: fieldRecords(ctx, m.schema, v),
    objects: objectRecords(ctx, m.schema, v),
    installedPackages: packageRecords(ctx, v),
    orgLimits: limitRecords(ctx, v),
    licenseUsages: licenseRecords(ctx, m.access, v),
    sfProfiles: profileRecords(m.access, v),
    permissionSets: permissionSetRecords(m.access, v),
    loginActivity: loginRecords(ctx, m.access, v),
    codeCounts: codeCountRecords(m.code, v),
    classTypes: classTypeRecords(m.code, v),
    esLints: esLintRecords(m.code, v),
    pmds: pmdRecords(m.code, v),
    items: itemRecords(ctx, m.items, m.access, v),
    flows: flowRecords(ctx, m.flows, v),
    triggers: triggerRecords(m.code, v),
    workflows: workflowRecords(ctx, m.workflows, v),
  }
  data.objectUsages = objectUsageRecords(ctx, m, data, v)
  const cloudUsage = cloudUsageRecord(ctx, m.schema, m.access, v)
  const findings = findIssues({ data, cloudUsage, at: ctx.times[v] })
  const out = { data, cloudUsage, findings }
  m.scans.set(v, out)
  return out
}

/** Minutes a scan of this size takes. */
const duration = (m: OrgModel) => (4 + Math.round(m.ctx.size.fields / 900)) * 60_000

/**
 * The import bundle of scan `scanIndex` (an index into the org's scan history, oldest first). A failed scan
 * carries no data; a completed one carries every resource, issues and one recommendation per issue. With `resources`,
 * a resource the demo has no generator for gets generic records (demo/generic.ts).
 */
export function demoBundle(def: DemoOrgDef, scanIndex: number, opts: { scale?: number; now?: Date; resources?: readonly CompiledResource[] } = {}): ScanBundle {
  const m = orgModel(def, opts.scale ?? 1, opts.now ?? DEFAULT_NOW)
  const { ctx } = m
  const s = def.scans[scanIndex]
  if (!s) throw new RangeError(`${def.info.name} has no scan #${scanIndex}`)
  const v = ctx.versions.indexOf(scanIndex)
  const started = v >= 0 ? ctx.times[v] : ctx.now - s.daysAgo * DAY_MS + 3 * 3_600_000
  if (s.status !== 'completed') {
    return { org: orgInfo(def), scan: { status: s.status, startedAt: iso(started), completedAt: iso(started + 7 * 60_000), score: null }, data: {} }
  }
  const scan = renderScan(m, v)
  const first = new Map<string, number>()
  for (let u = 0; u <= v; u++) for (const x of renderScan(m, u).findings) if (!first.has(x.issueKey)) first.set(x.issueKey, u)
  const issues = scan.findings.map((x) => ({
    issueKey: x.issueKey, title: x.title, category: x.category, priority: x.priority, effort: x.effort, namespace: x.namespace,
    impact: x.impact, affectedCount: x.affectedCount, firstDetectedDate: iso(ctx.times[first.get(x.issueKey)!] + duration(m)),
  }))
  const data: ScanBundle['data'] = { ...scan.data, cloudUsage: scan.cloudUsage, issues, recommendations: scan.findings.map(recommendationOf) }
  for (const c of importTargets(opts.resources ?? [])) if (!(c.name in data)) data[c.name] = c.decl.kind === 'singleton' ? genericRecords(c, v)[0] : genericRecords(c, v)
  return {
    org: orgInfo(def),
    scan: { status: 'completed', startedAt: iso(started), completedAt: iso(started + duration(m)), score: scoreOf(ctx, v) },
    data,
  }
}
