import * as v from 'valibot'
import { defineResource, f } from '../runtime/core/define.ts'
import { ISSUE_CATEGORIES, ISSUE_CATEGORY_LABELS } from './issues.ts'

export const recommendations = defineResource({
  name: 'recommendations',
  title: 'Recommendation',
  description:
    'Rich context for one issue of the latest scan: why it matters, how to fix it, what it affects. Addressed by the issueKey (Base64URL-encoded in REST paths).',
  path: 'issues',
  operations: { list: false, get: true },
  id: { field: 'issueKey', param: 'issueKey', encoding: 'base64url' },
  fields: {
    issueKey: f.text({ description: 'Key of the issue, stable across scans (Base64URL-encode it in the path).' }),
    title: f.text({ description: 'One-line statement of the issue.' }),
    category: f.enum(ISSUE_CATEGORIES, { description: 'Issue category (see service://issue-categories).', labels: ISSUE_CATEGORY_LABELS, catalog: 'service://issue-categories' }),
    priority: f.int({ description: 'Priority, 1 (low) to 4 (critical).', note: '1 low to 4 critical' }),
    effort: f.int({ description: 'Effort to fix, 1 (trivial) to 5 (major).', note: '1 trivial to 5 major' }),
    summary: f.text({ description: 'What to do, in a paragraph.' }),
    rationale: f.text({ description: 'Why it matters: the risk or cost of leaving it.' }),
    remediationSteps: f.textArray({ description: 'The steps to fix it, in order.' }),
    affectedItems: f.json(v.array(v.object({ type: v.string(), name: v.string(), id: v.nullable(v.string()) })), { description: 'The items affected: type, name and id of each.' }),
    references: f.json(v.array(v.object({ title: v.string(), url: v.string() })), { description: 'Further reading: title and URL of each reference.' }),
    estimatedMinutes: f.int({ description: 'Estimated time to carry out the remediation, in minutes.' }),
  },
  mcp: { get: 'get_org_issue_recommendation', getTitle: 'Get issue recommendation' },
})
