import * as v from 'valibot'
import { defineResource, f } from '../runtime/define.ts'

export const orgs = defineResource({
  name: 'orgs',
  title: 'Org',
  description:
    'CRM-platform organizations (orgs) the caller can access, with the state of their latest scan. The list carries a compact record; fetching one org returns the full summary.',
  scope: 'account',
  id: { field: 'salesforceId', param: 'orgId', encoding: 'text' },
  fields: {
    salesforceId: f.text({ description: '18-character org id; the 15-character form addresses the same org.' }),
    name: f.text(),
    edition: f.text(),
    instanceUrl: f.text(),
    isSandbox: f.bool(),
    lastScanDate: f.ts({ nullable: true }),
    lastScanStatus: f.enum(['completed', 'failed', 'running', 'queued'], { nullable: true }),
    scanCount: f.int(),
    score: f.int({ nullable: true, description: 'Health score of the latest completed scan, 0–100.' }),
    organizationType: f.text(),
    instanceName: f.text(),
    namespacePrefix: f.text({ nullable: true }),
    country: f.text({ nullable: true }),
    locale: f.text(),
    timeZone: f.text(),
    createdDate: f.ts(),
    latestScanId: f.int({ nullable: true }),
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
