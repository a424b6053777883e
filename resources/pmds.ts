import { defineResource, f } from '../runtime/core/define.ts'

export const pmds = defineResource({
  name: 'pmds',
  title: 'PMD violation',
  description: 'PMD static-analysis violations against Apex code; priority 1 is the most severe.',
  id: { field: 'id', param: 'pmdId', encoding: 'int' },
  fields: {
    id: f.int({ description: 'Record id, stable across scans of the org.' }),
    fileName: f.text({ description: 'File the violation is in.' }),
    className: f.text({ description: 'Apex class the violation is in.' }),
    rule: f.text({ description: 'PMD rule violated.' }),
    ruleSet: f.text({ description: 'PMD rule set (category) of the rule.' }),
    priority: f.int({ description: 'PMD priority of the rule, 1 (most severe) to 5 (least).', note: '1 most severe to 5 least' }),
    line: f.int({ description: 'Line of the violation (1-based).' }),
    message: f.text({ description: 'The rule\'s message for this occurrence.' }),
  },
  filterable: ['id', 'fileName', 'className', 'rule', 'ruleSet', 'priority'],
  sortable: ['id', 'fileName', 'className', 'rule', 'ruleSet', 'priority', 'line'],
  groupable: ['rule', 'ruleSet', 'priority'],
  defaultSort: 'priority,fileName',
  mcp: { list: 'list_org_pmd_violations', get: 'get_org_pmd_violation' },
})
