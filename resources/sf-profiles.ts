import { defineResource, f } from '../runtime/define.ts'
import { riskyPermissionFields, riskyPermissionNames } from './risky-permissions.ts'

export const sfProfiles = defineResource({
  name: 'sfProfiles',
  title: 'Profile',
  description: 'User profiles with their assigned users and risky-permission flags such as Modify All Data.',
  id: { field: 'sfProfileId', param: 'sfProfileId', encoding: 'text' },
  fields: {
    sfProfileId: f.text(),
    name: f.text(),
    userLicense: f.text(),
    userType: f.text(),
    isCustom: f.bool(),
    assignedUsers: f.int(),
    activeUsers: f.int(),
    ...riskyPermissionFields,
  },
  filterable: ['sfProfileId', 'name', 'userLicense', 'userType', 'isCustom', 'assignedUsers', 'activeUsers', ...riskyPermissionNames],
  sortable: ['sfProfileId', 'name', 'userLicense', 'assignedUsers', 'activeUsers', 'riskyPermissionCount'],
  defaultSort: 'name',
})
