import { defineResource, f } from '../runtime/core/define.ts'

export const objects = defineResource({
  name: 'objects',
  title: 'Object',
  description: 'Scanned platform objects (standard and custom) with record and field counts and when they were last used.',
  id: { field: 'id', param: 'objectId', encoding: 'int' },
  fields: {
    id: f.int({ description: 'Record id, stable across scans of the org.' }),
    apiName: f.text({ description: 'API name of the object (custom objects end in __c).' }),
    label: f.text({ description: 'Object label shown to users.' }),
    isCustom: f.bool({ description: 'Whether the object is custom rather than standard.' }),
    namespace: f.text({ nullable: true, description: 'Namespace of the managed package that owns the object; null for the org\'s own and standard objects.' }),
    recordCount: f.int({ description: 'Records of the object when it was scanned.' }),
    fieldCount: f.int({ description: 'Fields defined on the object, standard and custom.' }),
    customFieldCount: f.int({ description: 'Custom fields defined on the object.' }),
    lastUsedDate: f.ts({ nullable: true, description: 'Last time a record of the object was viewed or changed; null when unknown or never.' }),
    createdDate: f.ts({ description: 'When the object was created.' }),
    sharingModel: f.text({ description: 'Organization-wide default for the object (Private, Read, ReadWrite, ControlledByParent, …).' }),
  },
  filterable: ['id', 'apiName', 'label', 'isCustom', 'namespace', 'recordCount', 'fieldCount', 'customFieldCount', 'lastUsedDate', 'createdDate', 'sharingModel'],
  sortable: ['id', 'apiName', 'label', 'recordCount', 'fieldCount', 'customFieldCount', 'lastUsedDate', 'createdDate'],
  groupable: ['isCustom'],
  defaultSort: '-lastUsedDate',
})
