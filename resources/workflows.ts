import { defineResource, f } from '../runtime/core/define.ts'

export const workflows = defineResource({
  name: 'workflows',
  title: 'Workflow rule',
  description: 'Legacy workflow rules with their object, trigger type and number of actions.',
  id: { field: 'id', param: 'workflowId', encoding: 'int' },
  fields: {
    id: f.int({ description: 'Record id, stable across scans of the org.' }),
    name: f.text({ description: 'Name of the workflow rule.' }),
    objectApiName: f.text({ description: 'Object the rule runs on.' }),
    active: f.bool({ description: 'Whether the rule is active.' }),
    triggerType: f.enum(['on_create', 'on_create_or_triggering_update', 'on_all_changes'], { description: 'When the rule is evaluated (on create, on create or edit, …).' }),
    actionCount: f.int({ description: 'Actions the rule runs (field updates, e-mail alerts, tasks, outbound messages).' }),
    lastModifiedDate: f.ts({ description: 'When the rule last changed.' }),
  },
  filterable: ['id', 'name', 'objectApiName', 'active', 'triggerType', 'actionCount', 'lastModifiedDate'],
  sortable: ['id', 'name', 'objectApiName', 'triggerType', 'actionCount', 'lastModifiedDate'],
  groupable: ['active', 'triggerType'],
  defaultSort: 'objectApiName,name',
})
