import { defineResource, f } from '../runtime/core/define.ts'

export const licenseUsages = defineResource({
  name: 'licenseUsages',
  title: 'License usage',
  description: 'User, permission-set and feature licenses of the org: total, used and remaining seats, status and expiry.',
  id: { field: 'apiName', param: 'apiName', encoding: 'text' },
  fields: {
    apiName: f.text({ description: 'API name of the license definition.' }),
    name: f.text({ description: 'License name shown in Setup.' }),
    type: f.enum(['user', 'permission_set', 'feature'], { description: 'Kind of license (user, permission set or feature license).' }),
    status: f.text({ description: 'License status (Active, Disabled, …).' }),
    total: f.int({ description: 'Licenses purchased.' }),
    used: f.int({ description: 'Licenses assigned.' }),
    remaining: f.int({ expr: 't.total - t.used', description: 'Licenses left: total minus used (derived).' }),
    expirationDate: f.date({ nullable: true, description: 'When the licenses expire; null when they do not.' }),
  },
  filterable: ['apiName', 'name', 'type', 'status', 'total', 'used', 'remaining', 'expirationDate'],
  sortable: ['apiName', 'name', 'type', 'status', 'total', 'used', 'remaining', 'expirationDate'],
  groupable: ['type'],
  defaultSort: 'apiName',
})
