import { defineResource, f } from '../runtime/core/define.ts'

export const connectedApps = defineResource({
  name: 'connectedApps',
  title: 'Connected app',
  description:
    'OAuth connected apps configured in the org: who may use them, their scopes and when they were last used. Unused and over-permissive apps are a common security finding.',
  id: { field: 'id', param: 'connectedAppId', encoding: 'int' },
  fields: {
    id: f.int({ description: 'Record id, stable across scans of the org.' }),
    name: f.text({ description: 'Connected app name.' }),
    namespace: f.text({ nullable: true, description: 'Namespace of the managed package that installed the app; null for the org\'s own apps.' }),
    lastUsedDate: f.ts({ nullable: true, description: 'Last OAuth use by any user; null when never used.' }),
    createdDate: f.ts({ description: 'When the app was created or installed.' }),
    contactEmail: f.text({ nullable: true, description: 'The app\'s contact e-mail; null when none is set.' }),
    oauthScopes: f.textArray({ description: 'OAuth scopes the app may request (api, web, refresh_token, full, …).' }),
    callbackUrls: f.textArray({ description: 'OAuth callback URLs configured for the app.' }),
    permittedUsers: f.enum(['all_self_authorize', 'admin_approved'], { description: 'Who may use the app: all_self_authorize (any user can authorize it) or admin_approved (only pre-authorized users).' }),
    ipRelaxation: f.text({ description: 'IP restriction policy for the app (e.g. enforce IP restrictions, relax them).' }),
    refreshTokenPolicy: f.text({ description: 'How long refresh tokens stay valid (e.g. until revoked, expire after a period).' }),
    userCount: f.int({ description: 'Users who have authorized or are assigned the app.' }),
    isManaged: f.bool({ description: 'Whether the app comes from a managed package.' }),
  },
  filterable: ['id', 'name', 'namespace', 'lastUsedDate', 'createdDate', 'permittedUsers', 'userCount', 'isManaged'],
  sortable: ['id', 'name', 'namespace', 'lastUsedDate', 'createdDate', 'userCount'],
  groupable: ['permittedUsers', 'isManaged'],
  defaultSort: '-lastUsedDate',
  defaultFilter: 'isNull(namespace)',
})
