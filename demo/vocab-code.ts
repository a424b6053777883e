/** Vocabulary of demo code and automation: Apex naming patterns, component names, lint and PMD rules, flows. */

/** Apex class name patterns over an object stem, with the class type each implies. */
export const CLASS_PATTERNS: ReadonlyArray<readonly [string, string]> = [
  ['{O}TriggerHandler', 'trigger_handler'], ['{O}Service', 'utility'], ['{O}Selector', 'utility'], ['{O}Controller', 'controller'],
  ['{O}ControllerTest', 'test'], ['{O}ServiceTest', 'test'], ['{O}TriggerHandlerTest', 'test'], ['Batch{O}Cleanup', 'batch'],
  ['{O}SyncQueueable', 'queueable'], ['Scheduled{O}Sync', 'schedulable'], ['{O}Invocable', 'invocable'], ['{O}RestResource', 'rest_resource'],
  ['{O}Helper', 'utility'], ['{O}Wrapper', 'other'], ['{O}Domain', 'utility'], ['Batch{O}CleanupTest', 'test'],
]
export const COMMON_CLASSES: ReadonlyArray<readonly [string, string]> = [
  ['TestDataFactory', 'test'], ['Logger', 'utility'], ['TriggerFramework', 'other'], ['HttpCalloutMockImpl', 'test'],
  ['SecurityUtils', 'utility'], ['Constants', 'other'], ['LeadAssignmentBatch', 'batch'], ['NightlyCleanupScheduler', 'schedulable'],
  ['ErpIntegrationService', 'utility'], ['SiteLoginController', 'controller'], ['ChangePasswordController', 'controller'],
]
export const PACKAGE_CLASSES: ReadonlyArray<readonly [string, string]> = [
  ['QuoteCalculatorPlugin', 'other'], ['BatchRecalculation', 'batch'], ['InstallHandler', 'other'], ['RestApi', 'rest_resource'],
]

export const COMPONENT_NOUNS = ['Summary', 'List', 'Card', 'Form', 'Timeline', 'Badge', 'Editor', 'Viewer', 'Dashboard', 'Picker', 'Wizard', 'Banner', 'Map', 'Chart', 'Table']
export const VF_PAGES = ['QuotePDF', 'InvoiceTemplate', 'SiteLogin', 'ChangePassword', 'AccountPrint', 'CaseEscalation', 'LegacyDashboard', 'ContractRenderer', 'OpportunityExport', 'MassUpdate']

export const ESLINT_RULES: ReadonlyArray<readonly [string, 'lwc' | 'aura' | 'any', 'error' | 'warning', string]> = [
  ['@lwc/lwc/no-async-operation', 'lwc', 'error', 'Restricted async operation "setTimeout"'],
  ['@lwc/lwc/no-inner-html', 'lwc', 'error', 'Using innerHTML/outputHTML/insertAdjacentHTML is not allowed.'],
  ['@lwc/lwc/no-api-reassignments', 'lwc', 'error', 'Invalid reassignment of public property "recordId"'],
  ['@lwc/lwc/no-document-query', 'lwc', 'error', 'Invalid usage of "document.querySelector". Use "this.template.querySelector" instead.'],
  ['@lwc/lwc/valid-wire', 'lwc', 'error', '@wire expects an adapter as first parameter.'],
  ['@salesforce/aura/ecma-intrinsics', 'aura', 'error', '"Promise.allSettled" is not a supported ECMAScript intrinsic in Locker.'],
  ['@salesforce/aura/aura-api', 'aura', 'warning', 'Invalid Aura API use: "$A.util.format" is deprecated.'],
  ['no-console', 'any', 'warning', 'Unexpected console statement.'],
  ['no-unused-vars', 'any', 'warning', "'result' is assigned a value but never used."],
  ['eqeqeq', 'any', 'warning', "Expected '===' and instead saw '=='."],
  ['no-var', 'any', 'warning', 'Unexpected var, use let or const instead.'],
  ['no-undef', 'any', 'error', "'moment' is not defined."],
]

/** PMD rules: [rule, ruleSet, priority, message]. */
export const PMD_RULES: ReadonlyArray<readonly [string, string, number, string]> = [
  ['ApexCRUDViolation', 'Security', 2, 'Validate CRUD permission before SOQL/DML operation'],
  ['ApexSharingViolations', 'Security', 2, 'Apex classes should declare a sharing model if DML or SOQL is used'],
  ['ApexSOQLInjection', 'Security', 1, 'Avoid untrusted/unescaped variables in DML query'],
  ['ApexSuggestUsingNamedCred', 'Security', 3, 'Suggest named credentials for authentication'],
  ['ApexInsecureEndpoint', 'Security', 3, 'Apex callouts should use encrypted communication channels'],
  ['OperationWithLimitsInLoop', 'Performance', 2, 'Avoid operations in loops that may hit governor limits'],
  ['AvoidDebugStatements', 'Performance', 4, 'Avoid debug statements since they impact performance'],
  ['ApexUnitTestClassShouldHaveAsserts', 'Best Practices', 3, 'Apex unit tests should System.assert() or assertEquals() or assertNotEquals()'],
  ['ApexUnitTestShouldNotUseSeeAllDataTrue', 'Best Practices', 3, 'Apex unit tests should not use @isTest(seeAllData = true)'],
  ['AvoidGlobalModifier', 'Best Practices', 3, 'Avoid using global modifier'],
  ['AvoidLogicInTrigger', 'Best Practices', 3, 'Avoid logic in triggers'],
  ['CognitiveComplexity', 'Design', 3, "The method 'process' has a cognitive complexity of 31, current threshold is 15"],
  ['CyclomaticComplexity', 'Design', 3, "The class has a total cyclomatic complexity of 87 (highest 24)."],
  ['ExcessiveParameterList', 'Design', 3, 'Avoid long parameter lists.'],
  ['AvoidDeeplyNestedIfStmts', 'Design', 3, 'Deeply nested if..then statements are hard to read'],
  ['AvoidHardcodingId', 'Error Prone', 3, 'Hardcoding Ids is bound to break when changing environments.'],
  ['EmptyCatchBlock', 'Error Prone', 3, 'Avoid empty catch blocks'],
  ['ClassNamingConventions', 'Code Style', 1, "The class name doesn't match '[A-Z][a-zA-Z0-9_]*'"],
  ['IfStmtsMustUseBraces', 'Code Style', 3, 'Avoid using if statements without curly braces'],
  ['UnusedLocalVariable', 'Best Practices', 5, "Variable 'tmp' defined but not used"],
]

export const FLOW_SUFFIXES: Readonly<Record<string, string[]>> = {
  record_triggered: ['After_Save_Update_Owner', 'Before_Save_Defaults', 'Set_Status', 'Notify_Owner', 'Sync_To_ERP', 'Roll_Up_Totals', 'Validate_Region'],
  process_builder: ['Process', 'PB_Update_Related', 'PB_Email_Alert'],
  workflow: ['Legacy_Workflow_Process'],
  screen: ['Create_Wizard', 'Quick_Update', 'Guided_Intake', 'Close_Wizard'],
  autolaunched_flow: ['Subflow_Assign', 'Calculate_Score', 'Handle_Platform_Event', 'Send_Survey'],
  scheduled: ['Nightly_Cleanup', 'Weekly_Reminder', 'Stale_Record_Check'],
  flow: ['Guided_Flow'],
}
export const WORKFLOW_NAMES = ['Set Default Owner', 'Notify Owner on Close', 'Update Status Date', 'Email Manager on Escalation', 'Stamp Region', 'Copy Billing Address', 'Flag High Value', 'Reminder Task']
