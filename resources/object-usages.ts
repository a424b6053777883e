import { defineResource, f } from '../runtime/define.ts'

export const objectUsages = defineResource({
  name: 'objectUsages',
  title: 'Object usage',
  description: 'Per-object usage metrics: record counts, active users, automations, field counts and last-used dates.',
  fields: {
    id: f.int(),
    objectId: f.int(),
    apiName: f.text(),
    recordCount: f.int(),
    activeUsers30d: f.int(),
    flowCount: f.int(),
    triggerCount: f.int(),
    workflowCount: f.int(),
    fieldCount: f.int(),
    customFieldCount: f.int(),
    lastCreatedDate: f.ts({ nullable: true }),
    lastModifiedDate: f.ts({ nullable: true }),
    lastViewedDate: f.ts({ nullable: true }),
  },
  filterable: ['id', 'objectId', 'apiName', 'recordCount', 'activeUsers30d', 'flowCount', 'triggerCount', 'workflowCount', 'fieldCount', 'lastViewedDate'],
  sortable: ['id', 'apiName', 'recordCount', 'activeUsers30d', 'flowCount', 'triggerCount', 'workflowCount', 'fieldCount', 'lastCreatedDate', 'lastModifiedDate', 'lastViewedDate'],
  defaultSort: '-recordCount',
})
