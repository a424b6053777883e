import { defineResource, f } from '../runtime/define.ts'

export const items = defineResource({
  name: 'items',
  title: 'Metadata item',
  description: 'Scanned metadata items of every type, with who created and last changed them.',
  id: { field: 'id', param: 'itemId', encoding: 'int' },
  fields: {
    id: f.int(),
    metadataType: f.text(),
    fullName: f.text(),
    namespace: f.text({ nullable: true }),
    manageableState: f.text(),
    createdDate: f.ts(),
    lastModifiedDate: f.ts(),
    createdBy: f.text(),
    lastModifiedBy: f.text(),
  },
  filterable: ['id', 'metadataType', 'fullName', 'namespace', 'manageableState', 'createdDate', 'lastModifiedDate', 'createdBy', 'lastModifiedBy'],
  sortable: ['id', 'metadataType', 'fullName', 'createdDate', 'lastModifiedDate'],
  defaultSort: 'metadataType,fullName',
})
