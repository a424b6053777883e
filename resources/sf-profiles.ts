import { defineResource, f } from '../runtime/core/define.ts'
import { riskyPermissionFields, riskyPermissionNames } from './risky-permissions.ts'

export const sfProfiles = defineResource({
  name: 'sfProfiles',
  title: 'Profile',
  description: 'User profiles with their assigned users and risky-permission flags such as Modify All Data.',
  id: { field: 'sfProfileId', param: 'sfProfileId', encoding: 'text' },
  fields: {
    sfProfileId: f.text({ description: 'The profile\'s platform id (15 or 18 characters).' }),
    name: f.text({ description: 'Profile name as shown in Setup.' }),
    userLicense: f.text({ description: 'User license the profile belongs to (e.g. Salesforce, Salesforce Platform).' }),
    userType: f.text({ description: 'User type of the license (Standard, PowerPartner, Guest, …).' }),
    isCustom: f.bool({ description: 'Whether the profile is custom rather than standard.' }),
    assignedUsers: f.int({ description: 'Users assigned the profile.' }),
    activeUsers: f.int({ description: 'Active users assigned the profile.' }),
    ...riskyPermissionFields,
  },
  filterable: ['sfProfileId', 'name', 'userLicense', 'userType', 'isCustom', 'assignedUsers', 'activeUsers', ...riskyPermissionNames],
  sortable: ['sfProfileId', 'name', 'userLicense', 'assignedUsers', 'activeUsers', 'riskyPermissionCount'],
  groupable: ['isCustom'],
  defaultSort: 'name',
})
