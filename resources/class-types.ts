import { defineResource, f } from '../runtime/define.ts'

export const classTypes = defineResource({
  name: 'classTypes',
  title: 'Class type',
  description: 'Classification of each Apex class (controller, test, batch, …). Class types have no single-record form.',
  fields: {
    id: f.int(),
    className: f.text(),
    namespace: f.text({ nullable: true }),
    classType: f.enum(['controller', 'test', 'batch', 'schedulable', 'queueable', 'invocable', 'rest_resource', 'trigger_handler', 'utility', 'other']),
  },
  filterable: ['className', 'namespace', 'classType'],
  sortable: ['className', 'classType'],
  defaultSort: 'className',
})
