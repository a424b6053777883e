import { defineResource, f } from '../runtime/core/define.ts'

export const classTypes = defineResource({
  name: 'classTypes',
  title: 'Class type',
  description: 'Classification of each Apex class (controller, test, batch, …). Class types have no single-record form.',
  fields: {
    id: f.int({ description: 'Record id, stable across scans of the org.' }),
    className: f.text({ description: 'Name of the Apex class.' }),
    namespace: f.text({ nullable: true, description: 'Namespace of the managed package that owns the class; null for the org\'s own.' }),
    classType: f.enum(['controller', 'test', 'batch', 'schedulable', 'queueable', 'invocable', 'rest_resource', 'trigger_handler', 'utility', 'other'], { description: 'What the class is (e.g. test, batch, schedulable, controller, trigger handler).' }),
  },
  filterable: ['className', 'namespace', 'classType'],
  sortable: ['className', 'classType'],
  groupable: ['classType'],
  defaultSort: 'className',
})
