import { defineResource, f } from '../runtime/define.ts'
import { riskyPermissionFields, riskyPermissionNames } from './risky-permissions.ts'

export const permissionSets = defineResource({
  name: 'permissionSets',
  title: 'Permission set',
  description: 'Permission sets with their assigned users and risky-permission flags.',
  id: { field: 'permissionSetId', param: 'permissionSetId', encoding: 'text' },
  fields: {
    permissionSetId: f.text(),
    name: f.text(),
    label: f.text(),
    isCustom: f.bool(),
    namespace: f.text({ nullable: true }),
    license: f.text({ nullable: true }),
    assignedUsers: f.int(),
    ...riskyPermissionFields,
  },
  filterable: ['permissionSetId', 'name', 'label', 'isCustom', 'namespace', 'license', 'assignedUsers', ...riskyPermissionNames],
  sortable: ['permissionSetId', 'name', 'label', 'assignedUsers', 'riskyPermissionCount'],
  defaultSort: 'name',
})
