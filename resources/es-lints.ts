import { defineResource, f } from '../runtime/define.ts'

export const esLints = defineResource({
  name: 'esLints',
  title: 'ESLint finding',
  description: 'ESLint findings against Lightning Web Component and Aura JavaScript.',
  id: { field: 'id', param: 'esLintId', encoding: 'int' },
  fields: {
    id: f.int(),
    fileName: f.text(),
    bundle: f.text(),
    componentType: f.enum(['lwc', 'aura']),
    ruleId: f.text(),
    severity: f.enum(['error', 'warning']),
    message: f.text(),
    line: f.int(),
    column: f.int(),
  },
  filterable: ['id', 'fileName', 'bundle', 'componentType', 'ruleId', 'severity'],
  sortable: ['id', 'fileName', 'bundle', 'ruleId', 'severity', 'line'],
  defaultSort: 'fileName,line',
})
