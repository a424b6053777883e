import { defineResource, f } from '../runtime/core/define.ts'

export const flows = defineResource({
  name: 'flows',
  title: 'Flow',
  description: 'Flows and Process Builder processes with their type, status and size; legacy automation clean-up starts here.',
  id: { field: 'id', param: 'flowId', encoding: 'int' },
  fields: {
    id: f.int({ description: 'Record id, stable across scans of the org.' }),
    apiName: f.text({ description: 'API name of the flow.' }),
    label: f.text({ description: 'Flow label shown in Setup.' }),
    processType: f.enum(['flow', 'autolaunched_flow', 'record_triggered', 'scheduled', 'screen', 'process_builder', 'workflow'], { description: 'Kind of automation: flow, autolaunched_flow, record_triggered, scheduled, screen, process_builder or workflow.' }),
    status: f.enum(['active', 'draft', 'obsolete', 'inactive'], { description: 'Status of the version scanned: active, draft, obsolete or inactive.' }),
    objectApiName: f.text({ nullable: true, description: 'Object a record-triggered flow or process runs on; null for others.' }),
    triggerType: f.text({ nullable: true, description: 'What starts the flow (record create or update, schedule, platform event, …); null when started by a user or another flow.' }),
    versionNumber: f.int({ description: 'Version number of the flow.' }),
    apiVersion: f.num({ description: 'API version the flow is saved with.' }),
    elementCount: f.int({ description: 'Elements (decisions, assignments, actions, …) in the flow.' }),
    lastModifiedDate: f.ts({ description: 'When the flow last changed.' }),
  },
  filterable: ['id', 'apiName', 'label', 'processType', 'status', 'objectApiName', 'triggerType', 'apiVersion', 'elementCount', 'lastModifiedDate'],
  sortable: ['id', 'apiName', 'label', 'processType', 'status', 'apiVersion', 'elementCount', 'lastModifiedDate'],
  groupable: ['processType', 'status'],
  defaultSort: 'apiName',
})
