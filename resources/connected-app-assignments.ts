import { defineResource, f } from '../runtime/define.ts'

export const connectedAppAssignments = defineResource({
  name: 'connectedAppAssignments',
  title: 'Connected app assignment',
  description:
    'Junction rows linking a connected app to a profile or a permission set that grants access to it. Exactly one of profileId and permissionSetId is set.',
  scope: 'org',
  path: 'connectedAppAssignments',
  table: 'connected_app_assignments',
  kind: 'collection',
  operations: { list: true, get: false },
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
  mcp: { list: 'list_org_connected_app_assignments' },
})
