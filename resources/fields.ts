import { defineResource, f } from '../runtime/define.ts'

/** Shared by `fields` and `objectFields` (the same records, listed per parent object). */
export const fieldRecord = {
  id: f.int(),
  sobjectId: f.int({ description: 'Id of the parent object.' }),
  objectApiName: f.text(),
  apiName: f.text(),
  label: f.text(),
  type: f.text(),
  length: f.int({ nullable: true }),
  isCustom: f.bool(),
  namespace: f.text({ nullable: true }),
  percentPopulated: f.num({ description: 'Share of records with a value, 0–100.' }),
  populatedCount: f.int(),
  recordCount: f.int(),
  isRequired: f.bool(),
  isUnique: f.bool(),
  isExternalId: f.bool(),
  referenceTo: f.textArray(),
  helpText: f.text({ nullable: true }),
  description: f.text({ nullable: true }),
  usedInLayouts: f.int(),
  usedInReports: f.int(),
  usedInAutomations: f.int(),
  createdDate: f.ts(),
  lastModifiedDate: f.ts(),
}

const fieldFilterable = [
  'id', 'sobjectId', 'objectApiName', 'apiName', 'label', 'type', 'isCustom', 'namespace', 'percentPopulated',
  'populatedCount', 'recordCount', 'isRequired', 'isUnique', 'isExternalId', 'usedInLayouts', 'usedInReports',
  'usedInAutomations', 'createdDate', 'lastModifiedDate',
] as const
const fieldSortable = [
  'id', 'objectApiName', 'apiName', 'label', 'type', 'percentPopulated', 'populatedCount', 'recordCount',
  'usedInLayouts', 'usedInReports', 'usedInAutomations', 'createdDate', 'lastModifiedDate',
] as const

export const fields = defineResource({
  name: 'fields',
  title: 'Field',
  description:
    'Scanned platform fields with how often they are populated and where they are used; the basis of unused-field clean-up.',
  id: { field: 'id', param: 'fieldId', encoding: 'int' },
  fields: fieldRecord,
  filterable: fieldFilterable,
  sortable: fieldSortable,
  defaultSort: '-percentPopulated',
})

export const objectFields = defineResource({
  name: 'objectFields',
  title: 'Field of an object',
  plural: 'Fields of an object',
  description: 'The scanned fields of one parent object; the parent is pinned by the path, no sobjectId filter needed.',
  path: 'objects/{objectId}/fields',
  table: 'fields',
  operations: { list: true, get: false },
  parent: { param: 'objectId', field: 'sobjectId', resource: 'objects' },
  fields: fieldRecord,
  filterable: fieldFilterable,
  sortable: fieldSortable,
  defaultSort: '-percentPopulated',
})
