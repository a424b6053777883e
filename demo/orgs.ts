/**
 * The demo tenancy: two accounts, their orgs (fixed 18-character ids), each org's scan history and size.
 * Sizes are at scale 1; `sizesAt` applies the seed scale with minimums so every resource keeps a few rows.
 */
import { checksum } from '../runtime/core/org-id.ts'
import type { OrgInfo } from '../runtime/platform/import.ts'
import { DAY_MS, iso, scaled } from './util.ts'

export interface OrgSize {
  objects: number
  fields: number
  users: number
  profiles: number
  permissionSets: number
  connectedApps: number
  apexClasses: number
  triggers: number
  lwc: number
  aura: number
  visualforce: number
  flows: number
  workflows: number
}

export interface DemoScanDef {
  status: 'completed' | 'failed'
  /** Start of the scan, in days before `now`. */
  daysAgo: number
  score: number | null
}

export interface DemoOrgDef {
  key: string
  salesforceId: string
  account: 'acme' | 'globex'
  info: Omit<OrgInfo, 'salesforceId' | 'createdDate'> & { createdYear: number }
  /** Scan history, oldest first; empty: the org is connected but was never scanned. */
  scans: readonly DemoScanDef[]
  large: boolean
  /** Installed managed-package namespaces. */
  namespaces: readonly string[]
  /** Login domain of its users, e.g. acme.com. */
  domain: string
  size: OrgSize
}

const id18 = (id15: string) => id15 + checksum(id15)

const BASE_INFO = { organizationType: 'Enterprise Edition', namespacePrefix: null, country: 'US', locale: 'en_US', timeZone: 'America/New_York' }

export const DEMO_ORG_DEFS: readonly DemoOrgDef[] = [
  {
    key: 'acme-prod', salesforceId: id18('00D5g000004ZxQa'), account: 'acme', large: true, domain: 'acme.com',
    info: { ...BASE_INFO, name: 'Acme Production', edition: 'Unlimited', organizationType: 'Unlimited Edition', instanceUrl: 'https://acme.my.salesforce.com', isSandbox: false, instanceName: 'USA642', createdYear: 2014 },
    scans: [{ status: 'completed', daysAgo: 31, score: 57 }, { status: 'completed', daysAgo: 1, score: 61 }],
    namespaces: ['SBQQ', 'sbaa', 'pi', 'et4ae5', 'dlrs', 'dsfs'],
    size: { objects: 1150, fields: 21500, users: 2400, profiles: 64, permissionSets: 180, connectedApps: 30, apexClasses: 1400, triggers: 110, lwc: 220, aura: 90, visualforce: 120, flows: 380, workflows: 260 },
  },
  {
    key: 'acme-uat', salesforceId: id18('00D7Y000000mK2p'), account: 'acme', large: false, domain: 'acme.com.uat',
    info: { ...BASE_INFO, name: 'Acme UAT Sandbox', edition: 'Unlimited', organizationType: 'Unlimited Edition', instanceUrl: 'https://acme--uat.sandbox.my.salesforce.com', isSandbox: true, instanceName: 'USA652S', createdYear: 2025 },
    scans: [{ status: 'completed', daysAgo: 45, score: 64 }, { status: 'completed', daysAgo: 3, score: 66 }],
    namespaces: ['SBQQ', 'sbaa', 'dlrs'],
    size: { objects: 260, fields: 3400, users: 120, profiles: 30, permissionSets: 70, connectedApps: 14, apexClasses: 600, triggers: 60, lwc: 90, aura: 40, visualforce: 50, flows: 160, workflows: 120 },
  },
  {
    key: 'acme-emea', salesforceId: id18('00D3t000002hLr9'), account: 'acme', large: false, domain: 'acme.eu',
    info: { ...BASE_INFO, name: 'Acme EMEA', edition: 'Enterprise', instanceUrl: 'https://acme-emea.my.salesforce.com', isSandbox: false, instanceName: 'DEU28', country: 'DE', locale: 'de_DE', timeZone: 'Europe/Berlin', createdYear: 2018 },
    scans: [{ status: 'completed', daysAgo: 60, score: 71 }, { status: 'completed', daysAgo: 30, score: 69 }, { status: 'failed', daysAgo: 1, score: null }],
    namespaces: ['pi', 'dsfs'],
    size: { objects: 180, fields: 1900, users: 650, profiles: 22, permissionSets: 45, connectedApps: 12, apexClasses: 240, triggers: 35, lwc: 40, aura: 25, visualforce: 30, flows: 90, workflows: 80 },
  },
  {
    key: 'acme-foundation', salesforceId: id18('00D1U000000cNpF'), account: 'acme', large: false, domain: 'acmefoundation.org',
    info: { ...BASE_INFO, name: 'Acme Foundation', edition: 'Enterprise', instanceUrl: 'https://acmefoundation.my.salesforce.com', isSandbox: false, instanceName: 'USA574', createdYear: 2019 },
    scans: [{ status: 'completed', daysAgo: 28, score: 74 }, { status: 'completed', daysAgo: 2, score: 78 }],
    namespaces: ['npsp', 'npe01', 'npe03', 'npe4', 'npe5'],
    size: { objects: 140, fields: 1400, users: 85, profiles: 14, permissionSets: 30, connectedApps: 8, apexClasses: 80, triggers: 22, lwc: 15, aura: 8, visualforce: 12, flows: 45, workflows: 30 },
  },
  {
    key: 'acme-devhub', salesforceId: id18('00D8b000001VqWs'), account: 'acme', large: false, domain: 'acme.com.devhub',
    info: { ...BASE_INFO, name: 'Acme Dev Hub', edition: 'Developer', organizationType: 'Developer Edition', instanceUrl: 'https://acme-devhub.my.salesforce.com', isSandbox: false, instanceName: 'USA642', namespacePrefix: 'acmeutil', createdYear: 2026 },
    scans: [],
    namespaces: [],
    size: { objects: 0, fields: 0, users: 0, profiles: 0, permissionSets: 0, connectedApps: 0, apexClasses: 0, triggers: 0, lwc: 0, aura: 0, visualforce: 0, flows: 0, workflows: 0 },
  },
  {
    key: 'globex-prod', salesforceId: id18('00D4x000003GbXe'), account: 'globex', large: false, domain: 'globex.com',
    info: { ...BASE_INFO, name: 'Globex Production', edition: 'Enterprise', instanceUrl: 'https://globex.my.salesforce.com', isSandbox: false, instanceName: 'CAN38', country: 'CA', locale: 'en_CA', timeZone: 'America/Toronto', createdYear: 2016 },
    scans: [{ status: 'completed', daysAgo: 35, score: 52 }, { status: 'completed', daysAgo: 5, score: 55 }],
    namespaces: ['pi', 'et4ae5'],
    size: { objects: 110, fields: 900, users: 140, profiles: 16, permissionSets: 25, connectedApps: 11, apexClasses: 120, triggers: 18, lwc: 20, aura: 10, visualforce: 15, flows: 50, workflows: 40 },
  },
]

/** The fixed demo org ids, by key (tests address orgs through these). */
export const DEMO_ORGS = {
  acmeProduction: DEMO_ORG_DEFS[0].salesforceId,
  acmeUatSandbox: DEMO_ORG_DEFS[1].salesforceId,
  acmeEmea: DEMO_ORG_DEFS[2].salesforceId,
  acmeFoundation: DEMO_ORG_DEFS[3].salesforceId,
  acmeDevHub: DEMO_ORG_DEFS[4].salesforceId,
  globexProduction: DEMO_ORG_DEFS[5].salesforceId,
} as const

export const DEMO_ACCOUNTS = {
  acme: { name: 'Acme Corp', dailyLimit: 10_000, monthlyLimit: 200_000 },
  globex: { name: 'Globex', dailyLimit: 10_000, monthlyLimit: 200_000 },
} as const

/** The demo user of Acme Corp and the orgs it may read (a subset of the account's orgs). */
export const DEMO_USER = {
  email: 'dana.analyst@acme.example',
  name: 'Dana Analyst',
  orgs: [DEMO_ORGS.acmeProduction, DEMO_ORGS.acmeUatSandbox] as string[],
}

export const DEFAULT_NOW = new Date('2026-11-01T00:00:00Z')

/** Sizes at the given scale, never below a handful per resource. */
export function sizesAt(size: OrgSize, scale: number): OrgSize {
  return {
    objects: scaled(size.objects, scale, 12),
    fields: scaled(size.fields, scale, 150),
    users: scaled(size.users, scale, 12),
    profiles: scaled(size.profiles, scale, 8),
    permissionSets: scaled(size.permissionSets, scale, 8),
    connectedApps: scaled(size.connectedApps, scale, 6),
    apexClasses: scaled(size.apexClasses, scale, 8),
    triggers: scaled(size.triggers, scale, 4),
    lwc: scaled(size.lwc, scale, 3),
    aura: scaled(size.aura, scale, 3),
    visualforce: scaled(size.visualforce, scale, 3),
    flows: scaled(size.flows, scale, 6),
    workflows: scaled(size.workflows, scale, 5),
  }
}

/** The OrgInfo of an import bundle. */
export function orgInfo(def: DemoOrgDef): OrgInfo {
  const { createdYear, ...rest } = def.info
  return { salesforceId: def.salesforceId, ...rest, createdDate: `${createdYear}-03-14T16:20:00Z` }
}

/** Start time (ms) of scan `i` of an org: 03:00 UTC `daysAgo` days before `now`. */
export function scanStart(def: DemoOrgDef, i: number, now: Date): number {
  const day = Math.floor(now.getTime() / DAY_MS) * DAY_MS
  return day - def.scans[i].daysAgo * DAY_MS + 3 * 3_600_000 + (def.salesforceId.charCodeAt(5) % 50) * 60_000
}

export { iso }
