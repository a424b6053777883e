/**
 * Org-wide facts of a demo scan: installed packages, platform limits, license usage and cloud adoption.
 * Derived from the org's schema and users so the numbers agree with the other resources.
 */
import { alive, growth, type Ctx } from './context.ts'
import type { Access } from './access.ts'
import { recordsAt, type ObjModel } from './schema.ts'
import { Rng, unit } from './prng.ts'
import { DAY_MS, iso, isoDate, round } from './util.ts'
import { FEATURE_LICENSES, LIMITS, PACKAGES, PERMISSION_SET_LICENSES, UNMANAGED_PACKAGES, USER_LICENSES } from './vocab-org.ts'

export function packageRecords(ctx: Ctx, v: number): Record<string, unknown>[] {
  const defs = [...ctx.def.namespaces.map((ns) => PACKAGES[ns]), ...UNMANAGED_PACKAGES.slice(0, ctx.def.large ? 2 : 1)]
  return defs.map((p, i) => {
    const r = Rng.of(ctx.def.key, 'package', p.name)
    const installed = ctx.orgCreated + r.float(0.1, 0.8) * (ctx.times[0] - ctx.orgCreated)
    // About half the packages were upgraded between the two scans.
    const upgraded = v < ctx.last && r.chance(0.5)
    const version = upgraded ? p.versionNumber.replace(/^(\d+)\.(\d+)/, (_, a, b) => `${a}.${Math.max(0, Number(b) - 1)}`) : p.versionNumber
    const expired = ctx.def.key === 'acme-emea' && p.namespace === 'dsfs'
    const total = p.seats ? Math.max(5, Math.round(ctx.size.users * r.float(0.2, 0.6))) : null
    return {
      id: i + 1, name: p.name, namespace: p.namespace, publisher: p.publisher, versionName: upgraded ? `${p.versionName} (previous)` : p.versionName,
      versionNumber: version, type: p.namespace ? 'managed' : 'unmanaged', installedDate: iso(installed),
      licenseStatus: expired ? 'Expired' : p.seats ? 'Active' : 'Free', seatsTotal: total,
      seatsUsed: total === null ? null : Math.min(total, Math.round(total * r.float(0.3, 0.95))),
      expirationDate: expired ? isoDate(ctx.now - 12 * DAY_MS) : p.seats ? isoDate(ctx.now + r.int(60, 400) * DAY_MS) : null,
    }
  })
}

const SIZE_LIMITS = new Set(['DailyApiRequests', 'DataStorageMB', 'FileStorageMB', 'DailyAsyncApexExecutions'])

export function limitRecords(ctx: Ctx, v: number): Record<string, unknown>[] {
  const factor = ctx.def.large ? 1 : Math.max(0.05, ctx.def.size.users / 2400)
  return LIMITS.map(([name, cap0, share]) => {
    const cap = SIZE_LIMITS.has(name) ? Math.round(cap0 * factor) : cap0
    const r = new Rng(`${ctx.def.key}:limit:${name}:${v}`)
    const s = name === 'DataStorageMB' && ctx.def.large ? share * growth(ctx, v) - 0.02 * (ctx.last - v)
      : name === 'DataStorageMB' ? r.float(0.35, 0.75) : share * r.float(0.6, 1.2)
    const used = Math.min(cap, Math.round(cap * Math.max(0, s)))
    return { name, cap, remaining: cap - used }
  })
}

export function licenseRecords(ctx: Ctx, access: Access, v: number): Record<string, unknown>[] {
  const active = new Map<string, number>()
  for (const u of access.users) {
    if (!alive(u.life, v) || !u.isActive) continue
    const lic = u.profile.license ?? 'Salesforce'
    active.set(lic, (active.get(lic) ?? 0) + 1)
  }
  const out: Record<string, unknown>[] = []
  for (const [api, name] of USER_LICENSES) {
    const r = Rng.of(ctx.def.key, 'license', api)
    const used = active.get(name) ?? 0
    const total = name === 'Identity' ? Math.max(used, 100) : Math.max(used, Math.ceil(used * r.float(1.02, 1.5)) + r.int(0, 5))
    out.push({ apiName: api, name, type: 'user', status: 'Active', total, used, expirationDate: null })
  }
  for (const [api, name, ns] of PERMISSION_SET_LICENSES) {
    if (ns !== null && !ctx.def.namespaces.includes(ns)) continue
    const r = Rng.of(ctx.def.key, 'psl', api)
    const total = r.logInt(5, Math.max(6, Math.round(ctx.size.users * 0.5)))
    const disabled = api === 'LightningSchedulerUser'
    const soon = api === 'EinsteinAnalyticsPlusPsl'
    out.push({
      apiName: api, name, type: 'permission_set', status: disabled ? 'Disabled' : 'Active', total,
      used: disabled ? 0 : Math.round(total * r.float(0.1, 1) * growth(ctx, v)),
      expirationDate: soon ? isoDate(ctx.now + 25 * DAY_MS) : ns ? isoDate(ctx.now + r.int(90, 500) * DAY_MS) : null,
    })
  }
  for (const [api, name] of FEATURE_LICENSES) {
    const r = Rng.of(ctx.def.key, 'feature', api)
    const total = r.logInt(3, Math.max(4, Math.round(ctx.size.users * 0.8)))
    out.push({ apiName: api, name, type: 'feature', status: 'Active', total, used: Math.round(total * r.float(0.05, 0.95)), expirationDate: null })
  }
  return out
}

type Cloud = 'sales' | 'service' | 'marketing' | 'commerce' | 'experience' | 'platform' | 'analytics' | 'field_service'

export function cloudUsageRecord(ctx: Ctx, schema: readonly ObjModel[], access: Access, v: number): Record<string, unknown> {
  const rc = (api: string) => {
    const o = schema.find((x) => x.apiName === api && alive(x.life, v))
    return o ? recordsAt(ctx, o, v) : null
  }
  const key = (names: string[]) => names.flatMap((apiName) => {
    const n = rc(apiName)
    return n === null ? [] : [{ apiName, recordCount: n }]
  })
  const users = access.users.filter((u) => alive(u.life, v))
  const count = (pred: (p: string, l: string) => boolean) => {
    const sel = users.filter((u) => pred(u.profile.name, u.profile.license ?? ''))
    return [sel.length, sel.filter((u) => u.isActive && u.activity !== 'never' && u.activity !== 'dormant').length] as const
  }
  const ns = ctx.def.namespaces
  const customTop = schema.filter((o) => o.kind === 'custom' && alive(o.life, v)).sort((a, b) => b.records - a.records || a.id - b.id).slice(0, 3).map((o) => o.apiName)
  const defs: Array<[Cloud, readonly [number, number], string[]]> = [
    ['sales', count((p, l) => l === 'Salesforce' && !/Support|Service/.test(p)), ['Account', 'Opportunity', 'Lead', 'Contact']],
    ['service', count((p) => /Support|Service/.test(p)), ['Case', 'Knowledge__kav', 'LiveChatTranscript', 'Entitlement']],
    ['platform', count((_, l) => l === 'Salesforce Platform'), customTop],
    ['experience', count((_, l) => /Community/.test(l)), ['Contact', 'Case']],
  ]
  if (ns.includes('pi') || ns.includes('et4ae5')) defs.push(['marketing', count((p) => /Marketing/.test(p)), ['Campaign', 'CampaignMember', ...(ns.includes('pi') ? ['pi__ObjectChangeLog__c'] : []), ...(ns.includes('et4ae5') ? ['et4ae5__IndividualEmailResult__c'] : [])]])
  if (ctx.def.large) defs.push(['analytics', [Math.max(1, Math.round(users.length * 0.05)), Math.round(users.length * 0.03)], []], ['commerce', [Math.max(2, Math.round(users.length * 0.01)), 0], []])
  if (ns.includes('SBQQ')) defs.push(['field_service', [Math.max(1, Math.round(users.length * 0.02)), 0], ['WorkOrder', 'ServiceAppointment']])
  const clouds = defs.map(([cloud, [licensed, activeUsers], objs]) => ({
    cloud, adoptionPercent: licensed === 0 ? 0 : round((activeUsers * 100) / licensed, 1), licensedUsers: licensed, activeUsers, keyObjects: key(objs),
  }))
  const licensed = clouds.reduce((a, c) => a + c.licensedUsers, 0)
  const act = clouds.reduce((a, c) => a + c.activeUsers, 0)
  const primary = [...clouds].sort((a, b) => b.activeUsers - a.activeUsers)[0]
  return {
    clouds,
    summary: {
      overallAdoptionPercent: licensed === 0 ? 0 : round((act * 100) / licensed, 1),
      primaryCloud: primary && primary.activeUsers > 0 ? primary.cloud : null,
      unusedClouds: clouds.filter((c) => c.licensedUsers > 0 && c.activeUsers === 0).map((c) => c.cloud),
    },
  }
}

/** Health score of a scan (the org definition's score, nudged by nothing random). */
export function scoreOf(ctx: Ctx, v: number): number {
  return ctx.def.scans[ctx.versions[v]].score ?? Math.round(50 + unit(ctx.def.key) * 30)
}
