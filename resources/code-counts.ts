import { defineResource, f } from '../runtime/core/define.ts'

export const codeCounts = defineResource({
  name: 'codeCounts',
  title: 'Code count',
  description: 'Per-file line counts of Apex classes and triggers, Lightning components and Visualforce pages.',
  id: { field: 'id', param: 'codeCountId', encoding: 'int' },
  fields: {
    id: f.int({ description: 'Record id, stable across scans of the org.' }),
    name: f.text({ description: 'Name of the Apex class, trigger, Visualforce page or component, or Lightning bundle.' }),
    path: f.text({ description: 'Path of the file in the metadata.' }),
    type: f.enum(['apex_class', 'apex_trigger', 'lwc', 'aura', 'visualforce'], { description: 'Kind of code file.' }),
    namespace: f.text({ nullable: true, description: 'Namespace of the managed package that owns the file; null for the org\'s own code.' }),
    apiVersion: f.num({ description: 'API version the file is saved with.' }),
    totalLines: f.int({ description: 'All lines of the file.' }),
    codeLines: f.int({ description: 'Lines that contain code (not blank, not only a comment).' }),
    commentLines: f.int({ description: 'Lines with comments only.' }),
    blankLines: f.int({ description: 'Lines with nothing but whitespace.' }),
  },
  filterable: ['id', 'name', 'path', 'type', 'namespace', 'apiVersion', 'totalLines', 'codeLines', 'commentLines'],
  sortable: ['id', 'name', 'type', 'apiVersion', 'totalLines', 'codeLines', 'commentLines', 'blankLines'],
  groupable: ['type', 'namespace'],
  defaultSort: '-totalLines',
})
