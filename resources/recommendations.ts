import * as v from 'valibot'
import { defineResource, f } from '../runtime/define.ts'
import { ISSUE_CATEGORIES } from './issues.ts'

export const recommendations = defineResource({
  name: 'recommendations',
  title: 'Recommendation',
  description:
    'Rich context for one issue of the latest scan: why it matters, how to fix it, what it affects. Addressed by the issueKey (Base64URL-encoded in REST paths).',
  path: 'issues',
  operations: { list: false, get: true },
  id: { field: 'issueKey', param: 'issueKey', encoding: 'base64url' },
  fields: {
    issueKey: f.text(),
    title: f.text(),
    category: f.enum(ISSUE_CATEGORIES),
    priority: f.int(),
    effort: f.int(),
    summary: f.text(),
    rationale: f.text(),
    remediationSteps: f.textArray(),
    affectedItems: f.json(v.array(v.object({ type: v.string(), name: v.string(), id: v.nullable(v.string()) }))),
    references: f.json(v.array(v.object({ title: v.string(), url: v.string() }))),
    estimatedMinutes: f.int(),
  },
  mcp: { get: 'get_org_issue_recommendation', getTitle: 'Get issue recommendation' },
})
