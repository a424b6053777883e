import { defineResource, f } from '../runtime/core/define.ts'

export const triggers = defineResource({
  name: 'triggers',
  title: 'Trigger',
  description: 'Apex triggers with their object, events, size and test coverage.',
  id: { field: 'id', param: 'triggerId', encoding: 'int' },
  fields: {
    id: f.int({ description: 'Record id, stable across scans of the org.' }),
    name: f.text({ description: 'Name of the Apex trigger.' }),
    objectApiName: f.text({ description: 'Object the trigger runs on.' }),
    namespace: f.text({ nullable: true, description: 'Namespace of the managed package that owns the trigger; null for the org\'s own.' }),
    status: f.enum(['active', 'inactive'], { description: 'active (runs on save) or inactive (deployed but switched off).' }),
    events: f.textArray({ description: 'The DML events the trigger runs on, e.g. before_insert, after_update.' }),
    lines: f.int({ description: 'Lines of code in the trigger.' }),
    apiVersion: f.num({ description: 'API version the trigger is saved with.' }),
    coveragePercent: f.num({ nullable: true, description: 'Test coverage of the trigger, 0–100; null when not measured.' }),
  },
  filterable: ['id', 'name', 'objectApiName', 'namespace', 'status', 'lines', 'apiVersion', 'coveragePercent'],
  sortable: ['id', 'name', 'objectApiName', 'status', 'lines', 'apiVersion', 'coveragePercent'],
  groupable: ['status'],
  defaultSort: 'objectApiName,name',
})
