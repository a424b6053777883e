import { defineResource, f } from '../runtime/define.ts'

export const connectedApps = defineResource({
  name: 'connectedApps',
  title: 'Connected app',
  description:
    'OAuth connected apps configured in the org: who may use them, their scopes and when they were last used. Unused and over-permissive apps are a common security finding.',
  id: { field: 'id', param: 'connectedAppId', encoding: 'int' },
  fields: {
    id: f.int(),
    name: f.text(),
    namespace: f.text({ nullable: true }),
    lastUsedDate: f.ts({ nullable: true }),
    createdDate: f.ts(),
    contactEmail: f.text({ nullable: true }),
    oauthScopes: f.textArray(),
    callbackUrls: f.textArray(),
    permittedUsers: f.enum(['all_self_authorize', 'admin_approved']),
    ipRelaxation: f.text(),
    refreshTokenPolicy: f.text(),
    userCount: f.int(),
    isManaged: f.bool(),
  },
  filterable: ['id', 'name', 'namespace', 'lastUsedDate', 'createdDate', 'permittedUsers', 'userCount', 'isManaged'],
  sortable: ['id', 'name', 'namespace', 'lastUsedDate', 'createdDate', 'userCount'],
  defaultSort: '-lastUsedDate',
  defaultFilter: 'isNull(namespace)',
})
