import { defineResource, f } from '../runtime/core/define.ts'

export const objectUsages = defineResource({
  name: 'objectUsages',
  title: 'Object usage',
  description: 'Per-object usage metrics: record counts, active users, automations, field counts and last-used dates.',
  fields: {
    id: f.int({ description: 'Record id, stable across scans of the org.' }),
    objectId: f.int({ description: 'Id of the object (as in the objects list).' }),
    apiName: f.text({ description: 'API name of the object.' }),
    recordCount: f.int({ description: 'Records of the object when it was scanned.' }),
    activeUsers30d: f.int({ description: 'Distinct users who touched records of the object in the last 30 days.' }),
    flowCount: f.int({ description: 'Flows that run on the object.' }),
    triggerCount: f.int({ description: 'Apex triggers on the object.' }),
    workflowCount: f.int({ description: 'Workflow rules on the object.' }),
    fieldCount: f.int({ description: 'Fields defined on the object.' }),
    customFieldCount: f.int({ description: 'Custom fields defined on the object.' }),
    lastCreatedDate: f.ts({ nullable: true, description: 'When the newest record was created; null when the object has no records.' }),
    lastModifiedDate: f.ts({ nullable: true, description: 'When a record was last modified; null when the object has no records.' }),
    lastViewedDate: f.ts({ nullable: true, description: 'When a record was last viewed; null when never or unknown.' }),
  },
  filterable: ['id', 'objectId', 'apiName', 'recordCount', 'activeUsers30d', 'flowCount', 'triggerCount', 'workflowCount', 'fieldCount', 'lastViewedDate'],
  sortable: ['id', 'apiName', 'recordCount', 'activeUsers30d', 'flowCount', 'triggerCount', 'workflowCount', 'fieldCount', 'lastCreatedDate', 'lastModifiedDate', 'lastViewedDate'],
  defaultSort: '-recordCount',
})
