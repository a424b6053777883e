import { defineResource, f } from '../runtime/define.ts'

export const connectedAppAssignments = defineResource({
  name: 'connectedAppAssignments',
  title: 'Connected app assignment',
  description:
    'Junction rows linking a connected app to a profile or a permission set that grants access to it. Exactly one of profileId and permissionSetId is set.',
  fields: {
    id: f.int(),
    connectedAppId: f.int(),
    profileId: f.text({ nullable: true }),
    permissionSetId: f.text({ nullable: true }),
    assigneeName: f.text(),
  },
  filterable: ['id', 'connectedAppId', 'profileId', 'permissionSetId', 'assigneeName'],
  sortable: ['id', 'connectedAppId', 'assigneeName'],
  defaultSort: 'connectedAppId',
})
