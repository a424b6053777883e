import { defineResource, f } from '../runtime/core/define.ts'

/** Shared by `fields` and `objectFields` (the same records, listed per parent object). */
export const fieldRecord = {
  id: f.int({ description: 'Record id, stable across scans of the org.' }),
  sobjectId: f.int({ description: 'Id of the parent object.' }),
  objectApiName: f.text({ description: 'API name of the object the field belongs to (e.g. Account).' }),
  apiName: f.text({ description: 'API name of the field (custom fields end in __c).' }),
  label: f.text({ description: 'Field label shown to users.' }),
  type: f.text({ description: 'Field type (Text, Lookup, Picklist, Number, Formula, …).' }),
  length: f.int({ nullable: true, description: 'Maximum length for text-like fields; null for types without one.' }),
  isCustom: f.bool({ description: 'Whether the field is custom (created in the org or by a package) rather than standard.' }),
  namespace: f.text({ nullable: true, description: 'Namespace of the managed package that owns the field; null for the org\'s own and standard fields.' }),
  percentPopulated: f.num({ description: 'Share of records with a value, 0–100.' }),
  populatedCount: f.int({ description: 'Records of the object with a value in this field.' }),
  recordCount: f.int({ description: 'Records of the object when it was scanned (the base of percentPopulated).' }),
  isRequired: f.bool({ description: 'Whether a value is required on save.' }),
  isUnique: f.bool({ description: 'Whether values must be unique.' }),
  isExternalId: f.bool({ description: 'Whether the field is marked as an external id.' }),
  referenceTo: f.textArray({ description: 'Objects a lookup or master-detail field points to; empty for other types.' }),
  helpText: f.text({ nullable: true, description: 'Inline help text shown next to the field; null when there is none.' }),
  description: f.text({ nullable: true, description: 'The field\'s description in Setup; null when there is none.' }),
  usedInLayouts: f.int({ description: 'Page layouts that show the field.' }),
  usedInReports: f.int({ description: 'Reports that use the field.' }),
  usedInAutomations: f.int({ description: 'Flows, triggers, workflow rules and processes that reference the field.' }),
  createdDate: f.ts({ description: 'When the field was created.' }),
  lastModifiedDate: f.ts({ description: 'When the field\'s definition last changed.' }),
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
  groupable: ['objectApiName', 'type', 'isCustom', 'namespace', 'isRequired'],
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
