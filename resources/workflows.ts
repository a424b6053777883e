import { defineResource, f } from '../runtime/define.ts'

export const workflows = defineResource({
  name: 'workflows',
  title: 'Workflow rule',
  description: 'Legacy workflow rules with their object, trigger type and number of actions.',
  id: { field: 'id', param: 'workflowId', encoding: 'int' },
  fields: {
    id: f.int(),
    name: f.text(),
    objectApiName: f.text(),
    active: f.bool(),
    triggerType: f.enum(['on_create', 'on_create_or_triggering_update', 'on_all_changes']),
    actionCount: f.int(),
    lastModifiedDate: f.ts(),
  },
  filterable: ['id', 'name', 'objectApiName', 'active', 'triggerType', 'actionCount', 'lastModifiedDate'],
  sortable: ['id', 'name', 'objectApiName', 'triggerType', 'actionCount', 'lastModifiedDate'],
  defaultSort: 'objectApiName,name',
})
