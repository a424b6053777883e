import { defineResource, f } from '../runtime/core/define.ts'

export const orgLimits = defineResource({
  name: 'orgLimits',
  title: 'Org limit',
  description: 'Platform limits of the org (API requests, storage, permission sets, …), one row per limit, all rows in a single page.',
  unpaged: true,
  id: { field: 'name', param: 'name', encoding: 'text' },
  fields: {
    name: f.text({ description: 'Limit name, e.g. DailyApiRequests.' }),
    cap: f.int({ description: 'The most the org may use of this limit (the platform maximum for its edition and add-ons).' }),
    remaining: f.int({ description: 'Amount still available before the cap is reached.' }),
    used: f.int({ expr: 't.cap - t.remaining', description: 'Amount consumed: cap minus remaining (derived).' }),
    percentUsed: f.num({
      expr: 'CASE WHEN t.cap = 0 THEN 0 ELSE round(((t.cap - t.remaining) * 100.0 / t.cap)::numeric, 2)::double precision END',
      description: 'used / cap × 100, 0 when cap is 0.',
    }),
  },
  filterable: ['name', 'cap', 'remaining', 'used', 'percentUsed'],
  sortable: ['name', 'cap', 'remaining', 'used', 'percentUsed'],
  defaultSort: 'name',
  mcp: { list: 'list_org_limits', get: 'get_org_limit' },
})
