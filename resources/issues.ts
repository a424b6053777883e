import { defineResource, f } from '../runtime/define.ts'

export const ISSUE_CATEGORIES = [
  'security', 'performance', 'data_quality', 'technical_debt', 'limits', 'licensing', 'automation', 'code_quality',
  'adoption', 'configuration',
] as const

export const issues = defineResource({
  name: 'issues',
  title: 'Issue',
  description:
    'Issues found by the latest scan, each identified across scans by a stable issueKey. Priority runs from 1 (low) to 4 (critical), effort from 1 (trivial) to 5 (major).',
  tiebreak: 'issueKey',
  fields: {
    issueKey: f.text({ description: 'Stable across scans; Base64URL-encode it in paths.' }),
    title: f.text(),
    category: f.enum(ISSUE_CATEGORIES, { description: 'See the issue-categories resource.' }),
    priority: f.int({ description: '1 (low) – 4 (critical).' }),
    effort: f.int({ description: '1 (trivial) – 5 (major).' }),
    namespace: f.text({ nullable: true }),
    impact: f.text(),
    affectedCount: f.int(),
    firstDetectedDate: f.ts(),
    scanId: f.int({ expr: 't.scan_id', description: 'The scan the issue was read from.' }),
  },
  filterable: ['issueKey', 'title', 'category', 'priority', 'effort', 'namespace', 'affectedCount', 'firstDetectedDate'],
  sortable: ['issueKey', 'title', 'category', 'priority', 'effort', 'affectedCount', 'firstDetectedDate'],
  defaultSort: '-priority,effort',
  defaultFilter: 'isNull(namespace)',
  sparseFields: true,
  orgSummary: { field: 'issueCounts', countBy: 'priority', buckets: { 4: 'critical', 3: 'high', 2: 'medium', 1: 'low' } },
})
