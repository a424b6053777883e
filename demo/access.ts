/**
 * Who can do what in a demo org: profiles, permission sets, users with their login activity, connected apps
 * and the profiles / permission sets assigned to them.
 */
import { ALWAYS, alive, createdAt, lifeOf, type Ctx, type Life } from './context.ts'
import { Rng } from './prng.ts'
import { DAY_MS, iso, labelOf, sfId } from './util.ts'
import {
  CONNECTED_APPS, DEPARTMENTS, FIRST_NAMES, LAST_NAMES, PACKAGE_APPS, PACKAGE_PERMISSION_SETS, PERMISSION_SETS, PROFILES,
  type AppDef, type ProfileDef,
} from './vocab-org.ts'

export const RISKY = ['modifyAllData', 'viewAllData', 'manageUsers', 'dataExport', 'authorApex', 'customizeApplication', 'viewSetup', 'resetPasswords', 'manageInternalUsers', 'apiEnabled'] as const

export interface Grantee {
  id: string
  name: string
  label: string
  namespace: string | null
  license: string | null
  custom: boolean
  userType: string
  perms: Set<string>
  weight: number
  assigned: number
  life: Life
}

export interface UserModel {
  userId: string
  username: string
  name: string
  profile: Grantee
  isActive: boolean
  /** heavy | regular | occasional | dormant | never */
  activity: string
  u: number
  life: Life
}

export interface AppModel {
  id: number
  def: AppDef
  created: number
  /** Days since last use before the scan; 'stale' apps were last used at a fixed date ~400 days before now. */
  agoDays: number | null
  staleAt: number | null
  contactEmail: string | null
  permittedUsers: 'all_self_authorize' | 'admin_approved'
  ipRelaxation: string
  refreshTokenPolicy: string
  userCount: number
  grants: Array<{ id: number; to: Grantee; kind: 'profile' | 'permissionSet' }>
  life: Life
}

export interface Access {
  profiles: Grantee[]
  permissionSets: Grantee[]
  users: UserModel[]
  apps: AppModel[]
}

const STALE_APPS: Record<string, number> = { 'Old Quote Generator': 402, 'Legacy Partner Portal SSO': 417, 'Backup and Restore': 395 }
const NEVER_USED = new Set(['Hackathon Demo App', 'Commission Calculator'])
/** Apps picked first so that even a tiny org has a stale and a never-used one. */
const APP_ORDER = ['Salesforce Mobile App', 'Old Quote Generator', 'Dataloader Partner', 'Hackathon Demo App', 'ERP Order Sync', 'Workbench']

function profiles(ctx: Ctx, rng: Rng): Grantee[] {
  const defs: ProfileDef[] = PROFILES.slice(0, ctx.size.profiles)
  for (let i = 0; defs.length < ctx.size.profiles; i++) {
    const dept = DEPARTMENTS[i % DEPARTMENTS.length] + (i >= DEPARTMENTS.length ? ` ${Math.floor(i / DEPARTMENTS.length) + 1}` : '')
    const platform = rng.chance(0.3)
    const perms = ['apiEnabled', ...(rng.chance(0.15) ? ['viewAllData'] : []), ...(rng.chance(0.2) ? ['dataExport'] : []), ...(rng.chance(0.04) ? ['modifyAllData'] : [])]
    defs.push({ name: `Custom: ${dept}`, license: platform ? 'Salesforce Platform' : 'Salesforce', userType: 'Standard', custom: true, perms, weight: rng.float(1, 6) })
  }
  return defs.map((d, i) => ({
    id: sfId('00e', ctx.pod, 1000 + i), name: d.name, label: d.name, namespace: null, license: d.license, custom: d.custom,
    userType: d.userType, perms: new Set(d.perms), weight: d.weight, assigned: 0, life: d.custom && i > 4 ? lifeOf(ctx, `profile:${d.name}`, 0.03, 0.03) : ALWAYS,
  }))
}

function permissionSets(ctx: Ctx, rng: Rng): Grantee[] {
  const defs: Array<{ name: string; namespace: string | null; license: string | null; perms: string[] }> = []
  const pkg = ctx.def.namespaces.flatMap((ns) => (PACKAGE_PERMISSION_SETS[ns] ?? []).map((name) => ({ name, namespace: ns, license: null, perms: name.endsWith('Admin') || name.endsWith('Full') ? ['customizeApplication', 'viewSetup'] : [] })))
  const own = [...PERMISSION_SETS]
  // Interleave own and package permission sets so that small orgs still get a few namespaced ones.
  while (defs.length < ctx.size.permissionSets && (own.length || pkg.length)) {
    if (own.length) defs.push(own.shift()!)
    if (pkg.length && defs.length < ctx.size.permissionSets) defs.push(pkg.shift()!)
  }
  for (let i = 0; defs.length < ctx.size.permissionSets; i++) {
    const dept = DEPARTMENTS[i % DEPARTMENTS.length].replace(/[^A-Za-z0-9]+/g, '_')
    const what = ['Access', 'Reports', 'Data_Load', 'Approvals', 'Console', 'Edit'][Math.floor(i / DEPARTMENTS.length) % 6]
    const round = Math.floor(i / (DEPARTMENTS.length * 6))
    defs.push({ name: `${dept}_${what}${round ? `_${round + 1}` : ''}`, namespace: null, license: rng.chance(0.1) ? 'Salesforce Platform' : null, perms: rng.chance(0.2) ? ['dataExport'] : rng.chance(0.1) ? ['viewAllData'] : [] })
  }
  return defs.map((d, i) => ({
    id: sfId('0PS', ctx.pod, 2000 + i), name: d.name, label: labelOf(d.name), namespace: d.namespace, license: d.license,
    custom: d.namespace === null, userType: 'Standard', perms: new Set(d.perms), weight: 1,
    assigned: rng.chance(0.12) ? 0 : rng.logInt(1, Math.max(2, Math.round(ctx.size.users * 0.3))),
    life: i > 8 ? lifeOf(ctx, `ps:${d.name}`, 0.03, 0.03) : ALWAYS,
  }))
}

function users(ctx: Ctx, rng: Rng, profs: Grantee[]): UserModel[] {
  const stable = profs.filter((p) => p.life === ALWAYS)
  const weights = stable.map((p) => [p, p.weight] as const)
  const firstPerLicense = stable.filter((p, i) => stable.findIndex((q) => q.license === p.license) === i)
  const taken = new Set<string>()
  const out: UserModel[] = []
  for (let i = 0; i < ctx.size.users; i++) {
    const first = rng.pick(FIRST_NAMES)
    const last = rng.pick(LAST_NAMES)
    let username = `${first}.${last}`.toLowerCase()
    for (let k = 2; taken.has(username); k++) username = `${first}.${last}${k}`.toLowerCase()
    taken.add(username)
    // Even a tiny org has a user of each license type its profiles use (administrators, integration, platform, identity).
    const profile = i < firstPerLicense.length ? firstPerLicense[i] : rng.weighted(weights)
    const isActive = profile.name === 'Integration User' || rng.chance(0.86)
    const activity = !isActive ? rng.weighted([['dormant', 3], ['never', 1]] as const)
      : rng.weighted([['heavy', 35], ['regular', 30], ['occasional', 15], ['dormant', 12], ['never', 8]] as const)
    out.push({
      userId: sfId('005', ctx.pod, 5000 + i), username: `${username}@${ctx.def.domain}`, name: `${first} ${last}`, profile,
      isActive, activity: profile.name === 'Integration User' ? 'heavy' : activity, u: rng.next(), life: lifeOf(ctx, `user:${i}`, 0.04, 0),
    })
  }
  return out
}

function apps(ctx: Ctx, rng: Rng, profs: Grantee[], sets: Grantee[]): AppModel[] {
  const pkg = ctx.def.namespaces.flatMap((ns) => (PACKAGE_APPS[ns] ? [PACKAGE_APPS[ns]] : []))
  const ordered = [...APP_ORDER.map((n) => CONNECTED_APPS.find((a) => a.name === n)!), ...CONNECTED_APPS.filter((a) => !APP_ORDER.includes(a.name))]
  const defs = [...ordered.slice(0, Math.max(3, ctx.size.connectedApps - pkg.length)), ...pkg]
  for (let i = 0; defs.length < ctx.size.connectedApps; i++) {
    const round = Math.floor(i / DEPARTMENTS.length)
    defs.push({ name: `${DEPARTMENTS[i % DEPARTMENTS.length]} Integration${round ? ` ${round + 1}` : ''}`, namespace: null, scopes: ['api', 'refresh_token'], callback: `https://int${i + 1}.internal.example.com/oauth/callback` })
  }
  const grantable = [...profs.filter((p) => p.life === ALWAYS && p.userType === 'Standard'), ...sets.filter((s) => s.life === ALWAYS)]
  return defs.map((def, i) => {
    const life = i < 6 ? ALWAYS : lifeOf(ctx, `app:${def.name}`, 0.04, 0.03)
    const stale = STALE_APPS[def.name]
    const never = NEVER_USED.has(def.name)
    const n = rng.int(1, 4)
    const grants = rng.sample(grantable, n).map((to, k) => ({ id: (i + 1) * 10 + k, to, kind: to.id.startsWith('00e') ? 'profile' as const : 'permissionSet' as const }))
    return {
      id: i + 1, def, life, created: Math.min(createdAt(ctx, rng, life, ctx.orgCreated + 30 * DAY_MS), stale ? ctx.now - (stale + 200) * DAY_MS : Infinity),
      agoDays: never || stale ? null : rng.chance(0.7) ? rng.int(0, 2) : rng.int(3, 60),
      staleAt: stale ? ctx.now - stale * DAY_MS : null,
      contactEmail: rng.chance(0.8) ? (def.namespace ? `support@${def.name.split(' ')[0].toLowerCase()}.example.com` : `it-integrations@${ctx.def.domain.replace(/\.(uat|devhub)$/, '')}`) : null,
      permittedUsers: rng.chance(0.6) ? 'admin_approved' as const : 'all_self_authorize' as const,
      ipRelaxation: rng.weighted([['Enforce IP restrictions', 5], ['Relax IP restrictions', 3], ['Relax IP restrictions with second factor', 1]] as const),
      refreshTokenPolicy: rng.weighted([['Refresh token is valid until revoked', 5], ['Expire refresh token if not used for 90 days', 2], ['Immediately expire refresh token', 1], ['Expire refresh token after 365 days', 1]] as const),
      userCount: never ? 0 : stale ? rng.int(0, 3) : rng.logInt(1, Math.max(2, Math.round(ctx.size.users * 0.6))),
      grants,
    }
  })
}

export function buildAccess(ctx: Ctx): Access {
  const rng = Rng.of(ctx.def.key, ctx.scale, 'access')
  const profs = profiles(ctx, rng)
  const sets = permissionSets(ctx, rng)
  const us = users(ctx, rng, profs)
  return { profiles: profs, permissionSets: sets, users: us, apps: apps(ctx, rng, profs, sets) }
}

function flags(g: Grantee): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const p of RISKY) out[p] = g.perms.has(p)
  out.riskyPermissionCount = RISKY.filter((p) => g.perms.has(p)).length
  return out
}

export function profileRecords(a: Access, v: number): Record<string, unknown>[] {
  const counts = new Map<Grantee, { assigned: number; active: number }>()
  for (const u of a.users) {
    if (!alive(u.life, v)) continue
    const c = counts.get(u.profile) ?? { assigned: 0, active: 0 }
    c.assigned++
    if (u.isActive) c.active++
    counts.set(u.profile, c)
  }
  return a.profiles.filter((p) => alive(p.life, v)).map((p) => ({
    sfProfileId: p.id, name: p.name, userLicense: p.license ?? 'Salesforce', userType: p.userType, isCustom: p.custom,
    assignedUsers: counts.get(p)?.assigned ?? 0, activeUsers: counts.get(p)?.active ?? 0, ...flags(p),
  }))
}

export function permissionSetRecords(a: Access, v: number): Record<string, unknown>[] {
  return a.permissionSets.filter((p) => alive(p.life, v)).map((p) => ({
    permissionSetId: p.id, name: p.name, label: p.label, isCustom: p.custom, namespace: p.namespace, license: p.license,
    assignedUsers: p.assigned, ...flags(p),
  }))
}

const WINDOWS: Record<string, [number, number, number, number]> = {
  // [logins30 min, max, lastLogin days-ago min, max]
  heavy: [15, 60, 0, 2], regular: [2, 14, 0, 12], occasional: [0, 0, 31, 89], dormant: [0, 0, 91, 360], never: [0, 0, -1, -1],
}

export function loginRecords(ctx: Ctx, a: Access, v: number): Record<string, unknown>[] {
  const t = ctx.times[v]
  return a.users.filter((u) => alive(u.life, v)).map((u) => {
    const r = new Rng(`${ctx.def.key}:login:${u.userId}:${v}`)
    const [lo, hi, dlo, dhi] = WINDOWS[u.activity]
    const l30 = lo === hi ? 0 : r.int(lo, hi)
    const l90 = u.activity === 'heavy' || u.activity === 'regular' ? l30 + r.int(l30, l30 * 2 + 2) : u.activity === 'occasional' ? r.int(1, 5) : 0
    const l365 = u.activity === 'never' ? 0 : l90 + r.int(u.activity === 'dormant' ? 1 : 0, Math.max(1, l90 * 3 + 8))
    return {
      userId: u.userId, username: u.username, name: u.name, profileName: u.profile.name, licenseType: u.profile.license ?? 'Salesforce',
      isActive: u.isActive, lastLoginDate: dlo < 0 ? null : iso(t - r.int(dlo, dhi) * DAY_MS - r.int(0, 20) * 3_600_000 - 600_000),
      logins30: l30, logins90: l90, logins365: l365,
    }
  })
}

export function appRecords(ctx: Ctx, a: Access, v: number): Record<string, unknown>[] {
  const t = ctx.times[v]
  return a.apps.filter((x) => alive(x.life, v)).map((x) => ({
    id: x.id, name: x.def.name, namespace: x.def.namespace,
    lastUsedDate: x.staleAt !== null ? iso(Math.min(x.staleAt, t)) : x.agoDays === null ? null : iso(Math.max(x.created, t - x.agoDays * DAY_MS - (x.id % 7) * 3_600_000)),
    createdDate: iso(x.created), contactEmail: x.contactEmail, oauthScopes: x.def.scopes, callbackUrls: [x.def.callback],
    permittedUsers: x.permittedUsers, ipRelaxation: x.ipRelaxation, refreshTokenPolicy: x.refreshTokenPolicy,
    userCount: x.userCount, isManaged: x.def.namespace !== null,
  }))
}

export function assignmentRecords(a: Access, v: number): Record<string, unknown>[] {
  return a.apps.filter((x) => alive(x.life, v)).flatMap((x) => x.grants.map((g) => ({
    id: g.id, connectedAppId: x.id, profileId: g.kind === 'profile' ? g.to.id : null,
    permissionSetId: g.kind === 'permissionSet' ? g.to.id : null, assigneeName: g.to.name,
  })))
}
