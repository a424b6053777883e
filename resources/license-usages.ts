import { defineResource, f } from '../runtime/define.ts'

export const licenseUsages = defineResource({
  name: 'licenseUsages',
  title: 'License usage',
  description: 'User, permission-set and feature licenses of the org: total, used and remaining seats, status and expiry.',
  id: { field: 'apiName', param: 'apiName', encoding: 'text' },
  fields: {
    apiName: f.text(),
    name: f.text(),
    type: f.enum(['user', 'permission_set', 'feature']),
    status: f.text(),
    total: f.int(),
    used: f.int(),
    remaining: f.int({ expr: 't.total - t.used' }),
    expirationDate: f.date({ nullable: true }),
  },
  filterable: ['apiName', 'name', 'type', 'status', 'total', 'used', 'remaining', 'expirationDate'],
  sortable: ['apiName', 'name', 'type', 'status', 'total', 'used', 'remaining', 'expirationDate'],
  defaultSort: 'apiName',
})
