import * as v from 'valibot'
import { defineResource, f } from '../runtime/core/define.ts'

export const orgs = defineResource({
  name: 'orgs',
  title: 'Org',
  description:
    'CRM-platform organizations (orgs) the caller can access, with the state of their latest scan. The list carries a compact record; fetching one org returns the full summary.',
  scope: 'account',
  id: { field: 'salesforceId', param: 'orgId', encoding: 'text' },
  fields: {
    salesforceId: f.text({ description: '18-character org id; the 15-character form addresses the same org.' }),
    name: f.text({ description: 'Org name as set in Company Information.' }),
    edition: f.text({ description: 'Platform edition (Enterprise, Unlimited, Developer, …).' }),
    instanceUrl: f.text({ description: 'The org\'s My Domain URL.' }),
    isSandbox: f.bool({ description: 'Whether the org is a sandbox rather than production.' }),
    lastScanDate: f.ts({ nullable: true, description: 'When the latest scan (of any status) finished or started; null before the first scan.' }),
    lastScanStatus: f.enum(['completed', 'failed', 'running', 'queued'], { nullable: true, description: 'Status of the latest scan: completed, failed, running or queued; null before the first scan.' }),
    scanCount: f.int({ description: 'Number of scans recorded for the org.' }),
    score: f.int({ nullable: true, description: 'Health score of the latest completed scan, 0–100.', note: 'health, 0 to 100' }),
    organizationType: f.text({ description: 'Organization type as the platform reports it (e.g. Enterprise Edition).' }),
    instanceName: f.text({ description: 'Server instance hosting the org (e.g. USA642).' }),
    namespacePrefix: f.text({ nullable: true, description: 'The org\'s own managed-package namespace; null when it has none.' }),
    country: f.text({ nullable: true, description: 'Country of the company address (ISO code); null when not set.' }),
    locale: f.text({ description: 'The org\'s default locale (e.g. en_US).' }),
    timeZone: f.text({ description: 'The org\'s default time zone (IANA name).' }),
    createdDate: f.ts({ description: 'When the org was created.' }),
    latestScanId: f.int({ nullable: true, description: 'Id of the latest completed scan, the one every org-scoped resource reads; null before the first.' }),
    issueCounts: f.json(v.object({ critical: v.number(), high: v.number(), medium: v.number(), low: v.number() }), {
      nullable: true,
      expr: "t.summary->'issueCounts'",
      description: 'Issues of the latest scan by priority.',
    }),
    resourceCounts: f.json(v.record(v.string(), v.number()), {
      nullable: true,
      description: 'Record counts of the latest scan per resource (fields, objects, connectedApps, …).',
    }),
  },
  listFields: ['salesforceId', 'name', 'edition', 'instanceUrl', 'isSandbox', 'lastScanDate', 'lastScanStatus', 'scanCount', 'score'],
  filterable: ['salesforceId', 'name', 'edition', 'isSandbox', 'lastScanDate', 'lastScanStatus', 'scanCount', 'score'],
  sortable: ['name', 'edition', 'lastScanDate', 'scanCount', 'score', 'salesforceId'],
  defaultSort: 'name',
})
