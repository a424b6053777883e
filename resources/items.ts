import { defineResource, f } from '../runtime/core/define.ts'

export const items = defineResource({
  name: 'items',
  title: 'Metadata item',
  description: 'Scanned metadata items of every type, with who created and last changed them.',
  id: { field: 'id', param: 'itemId', encoding: 'int' },
  fields: {
    id: f.int({ description: 'Record id, stable across scans of the org.' }),
    metadataType: f.text({ description: 'Metadata type of the item (ApexClass, CustomObject, Layout, …).' }),
    fullName: f.text({ description: 'Full name of the item within its type.' }),
    namespace: f.text({ nullable: true, description: 'Namespace of the managed package that owns the item; null for the org\'s own.' }),
    manageableState: f.text({ description: 'Package state of the item (unmanaged, installed, released, deleted, …).' }),
    createdDate: f.ts({ description: 'When the item was created.' }),
    lastModifiedDate: f.ts({ description: 'When the item last changed.' }),
    createdBy: f.text({ description: 'Name of the user who created it.' }),
    lastModifiedBy: f.text({ description: 'Name of the user who last changed it.' }),
  },
  filterable: ['id', 'metadataType', 'fullName', 'namespace', 'manageableState', 'createdDate', 'lastModifiedDate', 'createdBy', 'lastModifiedBy'],
  sortable: ['id', 'metadataType', 'fullName', 'createdDate', 'lastModifiedDate'],
  groupable: ['metadataType', 'namespace', 'manageableState'],
  defaultSort: 'metadataType,fullName',
})
