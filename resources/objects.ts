import { defineResource, f } from '../runtime/define.ts'

export const objects = defineResource({
  name: 'objects',
  title: 'Object',
  description: 'Scanned platform objects (standard and custom) with record and field counts and when they were last used.',
  id: { field: 'id', param: 'objectId', encoding: 'int' },
  fields: {
    id: f.int(),
    apiName: f.text(),
    label: f.text(),
    isCustom: f.bool(),
    namespace: f.text({ nullable: true }),
    recordCount: f.int(),
    fieldCount: f.int(),
    customFieldCount: f.int(),
    lastUsedDate: f.ts({ nullable: true }),
    createdDate: f.ts(),
    sharingModel: f.text(),
  },
  filterable: ['id', 'apiName', 'label', 'isCustom', 'namespace', 'recordCount', 'fieldCount', 'customFieldCount', 'lastUsedDate', 'createdDate', 'sharingModel'],
  sortable: ['id', 'apiName', 'label', 'recordCount', 'fieldCount', 'customFieldCount', 'lastUsedDate', 'createdDate'],
  defaultSort: '-lastUsedDate',
})
