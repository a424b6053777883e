import { defineResource, f } from '../runtime/core/define.ts'

export const esLints = defineResource({
  name: 'esLints',
  title: 'ESLint finding',
  description: 'ESLint findings against Lightning Web Component and Aura JavaScript.',
  id: { field: 'id', param: 'esLintId', encoding: 'int' },
  fields: {
    id: f.int({ description: 'Record id, stable across scans of the org.' }),
    fileName: f.text({ description: 'File the finding is in.' }),
    bundle: f.text({ description: 'Lightning component bundle the file belongs to.' }),
    componentType: f.enum(['lwc', 'aura'], { description: 'Kind of component (Aura or LWC).' }),
    ruleId: f.text({ description: 'ESLint rule that reported the finding.' }),
    severity: f.enum(['error', 'warning'], { description: 'Severity of the finding.' }),
    message: f.text({ description: 'The rule\'s message for this occurrence.' }),
    line: f.int({ description: 'Line of the finding (1-based).' }),
    column: f.int({ description: 'Column of the finding (1-based).' }),
  },
  filterable: ['id', 'fileName', 'bundle', 'componentType', 'ruleId', 'severity'],
  sortable: ['id', 'fileName', 'bundle', 'ruleId', 'severity', 'line'],
  groupable: ['componentType', 'severity'],
  defaultSort: 'fileName,line',
})
