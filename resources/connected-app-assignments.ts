import { defineResource, f } from '../runtime/core/define.ts'

export const connectedAppAssignments = defineResource({
  name: 'connectedAppAssignments',
  title: 'Connected app assignment',
  description:
    'Junction rows linking a connected app to a profile or a permission set that grants access to it. Exactly one of profileId and permissionSetId is set.',
  fields: {
    id: f.int({ description: 'Record id, stable across scans of the org.' }),
    connectedAppId: f.int({ description: 'Id of the connected app this assignment grants.' }),
    profileId: f.text({ nullable: true, description: 'Id of the profile granted the app; null when granted through a permission set.' }),
    permissionSetId: f.text({ nullable: true, description: 'Id of the permission set granting the app; null when granted through a profile.' }),
    assigneeName: f.text({ description: 'Name of the profile or permission set holding the assignment.' }),
  },
  filterable: ['id', 'connectedAppId', 'profileId', 'permissionSetId', 'assigneeName'],
  sortable: ['id', 'connectedAppId', 'assigneeName'],
  defaultSort: 'connectedAppId',
})
