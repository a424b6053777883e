import { defineResource, f } from '../runtime/define.ts'

export const codeCounts = defineResource({
  name: 'codeCounts',
  title: 'Code count',
  description: 'Per-file line counts of Apex classes and triggers, Lightning components and Visualforce pages.',
  id: { field: 'id', param: 'codeCountId', encoding: 'int' },
  fields: {
    id: f.int(),
    name: f.text(),
    path: f.text(),
    type: f.enum(['apex_class', 'apex_trigger', 'lwc', 'aura', 'visualforce']),
    namespace: f.text({ nullable: true }),
    apiVersion: f.num(),
    totalLines: f.int(),
    codeLines: f.int(),
    commentLines: f.int(),
    blankLines: f.int(),
  },
  filterable: ['id', 'name', 'path', 'type', 'namespace', 'apiVersion', 'totalLines', 'codeLines', 'commentLines'],
  sortable: ['id', 'name', 'type', 'apiVersion', 'totalLines', 'codeLines', 'commentLines', 'blankLines'],
  defaultSort: '-totalLines',
})
