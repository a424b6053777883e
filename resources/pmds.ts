import { defineResource, f } from '../runtime/define.ts'

export const pmds = defineResource({
  name: 'pmds',
  title: 'PMD violation',
  description: 'PMD static-analysis violations against Apex code; priority 1 is the most severe.',
  id: { field: 'id', param: 'pmdId', encoding: 'int' },
  fields: {
    id: f.int(),
    fileName: f.text(),
    className: f.text(),
    rule: f.text(),
    ruleSet: f.text(),
    priority: f.int({ description: '1 (most severe) – 5.' }),
    line: f.int(),
    message: f.text(),
  },
  filterable: ['id', 'fileName', 'className', 'rule', 'ruleSet', 'priority'],
  sortable: ['id', 'fileName', 'className', 'rule', 'ruleSet', 'priority', 'line'],
  defaultSort: 'priority,fileName',
  mcp: { list: 'list_org_pmd_violations', get: 'get_org_pmd_violation' },
})
