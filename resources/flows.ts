import { defineResource, f } from '../runtime/define.ts'

export const flows = defineResource({
  name: 'flows',
  title: 'Flow',
  description: 'Flows and Process Builder processes with their type, status and size; legacy automation clean-up starts here.',
  id: { field: 'id', param: 'flowId', encoding: 'int' },
  fields: {
    id: f.int(),
    apiName: f.text(),
    label: f.text(),
    processType: f.enum(['flow', 'autolaunched_flow', 'record_triggered', 'scheduled', 'screen', 'process_builder', 'workflow']),
    status: f.enum(['active', 'draft', 'obsolete', 'inactive']),
    objectApiName: f.text({ nullable: true }),
    triggerType: f.text({ nullable: true }),
    versionNumber: f.int(),
    apiVersion: f.num(),
    elementCount: f.int(),
    lastModifiedDate: f.ts(),
  },
  filterable: ['id', 'apiName', 'label', 'processType', 'status', 'objectApiName', 'triggerType', 'apiVersion', 'elementCount', 'lastModifiedDate'],
  sortable: ['id', 'apiName', 'label', 'processType', 'status', 'apiVersion', 'elementCount', 'lastModifiedDate'],
  defaultSort: 'apiName',
})
