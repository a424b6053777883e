import { defineResource, f } from '../runtime/core/define.ts'
import { riskyPermissionFields, riskyPermissionNames } from './risky-permissions.ts'

export const permissionSets = defineResource({
  name: 'permissionSets',
  title: 'Permission set',
  description: 'Permission sets with their assigned users and risky-permission flags.',
  id: { field: 'permissionSetId', param: 'permissionSetId', encoding: 'text' },
  fields: {
    permissionSetId: f.text({ description: 'The permission set\'s platform id.' }),
    name: f.text({ description: 'API name of the permission set.' }),
    label: f.text({ description: 'Label shown in Setup.' }),
    isCustom: f.bool({ description: 'Whether the permission set was created in the org or by a package rather than by the platform.' }),
    namespace: f.text({ nullable: true, description: 'Namespace of the managed package that owns it; null for the org\'s own.' }),
    license: f.text({ nullable: true, description: 'License the permission set requires; null when none.' }),
    assignedUsers: f.int({ description: 'Users assigned the permission set.' }),
    ...riskyPermissionFields,
  },
  filterable: ['permissionSetId', 'name', 'label', 'isCustom', 'namespace', 'license', 'assignedUsers', ...riskyPermissionNames],
  sortable: ['permissionSetId', 'name', 'label', 'assignedUsers', 'riskyPermissionCount'],
  groupable: ['isCustom'],
  defaultSort: 'name',
})
