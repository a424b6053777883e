import { defineResource, f } from '../runtime/define.ts'

export const triggers = defineResource({
  name: 'triggers',
  title: 'Trigger',
  description: 'Apex triggers with their object, events, size and test coverage.',
  id: { field: 'id', param: 'triggerId', encoding: 'int' },
  fields: {
    id: f.int(),
    name: f.text(),
    objectApiName: f.text(),
    namespace: f.text({ nullable: true }),
    status: f.enum(['active', 'inactive']),
    events: f.textArray({ description: 'before_insert, after_update, …' }),
    lines: f.int(),
    apiVersion: f.num(),
    coveragePercent: f.num({ nullable: true }),
  },
  filterable: ['id', 'name', 'objectApiName', 'namespace', 'status', 'lines', 'apiVersion', 'coveragePercent'],
  sortable: ['id', 'name', 'objectApiName', 'status', 'lines', 'apiVersion', 'coveragePercent'],
  defaultSort: 'objectApiName,name',
})
