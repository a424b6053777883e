import { defineResource, f } from '../runtime/core/define.ts'

/** The categories of issues, each with a title and a one-line description (served as `service://issue-categories`). */
export const ISSUE_CATEGORY_LABELS = {
  security: { title: 'Security', description: 'Permissions, sharing and access that expose data or admin powers more widely than needed.' },
  performance: { title: 'Performance', description: 'Configuration or code that slows pages, automations or integrations down.' },
  data_quality: { title: 'Data quality', description: 'Fields and records that are empty, duplicated, inconsistent or never maintained.' },
  technical_debt: { title: 'Technical debt', description: 'Outdated API versions, dead code and customizations nobody uses any more.' },
  limits: { title: 'Limits', description: 'Org limits and allocations close to their cap (API calls, storage, permission sets).' },
  licensing: { title: 'Licensing', description: 'Licenses assigned to inactive users, expiring, or bought and never used.' },
  automation: { title: 'Automation', description: 'Legacy workflow rules and Process Builder, overlapping flows and triggers.' },
  code_quality: { title: 'Code quality', description: 'Static-analysis findings in Apex, Lightning Web Components and Aura.' },
  adoption: { title: 'Adoption', description: 'Features, objects and clouds users were licensed for but do not use.' },
  configuration: { title: 'Configuration', description: 'Settings that differ from the platform\'s recommendations.' },
} as const

export const ISSUE_CATEGORIES = Object.keys(ISSUE_CATEGORY_LABELS) as (keyof typeof ISSUE_CATEGORY_LABELS)[]

export const issues = defineResource({
  name: 'issues',
  title: 'Issue',
  description:
    'Issues found by the latest scan, each identified across scans by a stable issueKey. Priority runs from 1 (low) to 4 (critical), effort from 1 (trivial) to 5 (major).',
  tiebreak: 'issueKey',
  fields: {
    issueKey: f.text({ description: 'Stable across scans; Base64URL-encode it in paths.' }),
    title: f.text({ description: 'One-line statement of the issue.' }),
    category: f.enum(ISSUE_CATEGORIES, {
      description: 'One of the issue categories; service://issue-categories describes each.',
      labels: ISSUE_CATEGORY_LABELS,
      catalog: 'service://issue-categories',
    }),
    priority: f.int({ description: '1 (low) – 4 (critical).', note: '1 low to 4 critical' }),
    effort: f.int({ description: '1 (trivial) – 5 (major).', note: '1 trivial to 5 major' }),
    namespace: f.text({ nullable: true, description: 'Namespace of the managed package the issue comes from; null for issues in the org\'s own configuration.' }),
    impact: f.text({ description: 'What the issue affects or risks, in a sentence.' }),
    affectedCount: f.int({ description: 'How many things the issue affects, as its title counts them: users for a permission grant, fields, apps, records, … otherwise.' }),
    firstDetectedDate: f.ts({ description: 'When a scan of the org first found the issue.' }),
    scanId: f.int({ expr: 't.scan_id', description: 'The scan the issue was read from.' }),
  },
  filterable: ['issueKey', 'title', 'category', 'priority', 'effort', 'namespace', 'affectedCount', 'firstDetectedDate'],
  sortable: ['issueKey', 'title', 'category', 'priority', 'effort', 'affectedCount', 'firstDetectedDate'],
  groupable: ['category', 'priority', 'effort', 'namespace'],
  defaultSort: '-priority,effort',
  defaultFilter: 'isNull(namespace)',
  orgSummary: { field: 'issueCounts', countBy: 'priority', buckets: { 4: 'critical', 3: 'high', 2: 'medium', 1: 'low' } },
})
