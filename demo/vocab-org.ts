/**
 * Vocabulary of the demo org's configuration: people, connected apps, installed packages, profiles,
 * permission sets, licenses and platform limits.
 */

export const FIRST_NAMES = [
  'James', 'Mary', 'Robert', 'Patricia', 'John', 'Jennifer', 'Michael', 'Linda', 'David', 'Elizabeth', 'William', 'Barbara',
  'Richard', 'Susan', 'Joseph', 'Jessica', 'Thomas', 'Sarah', 'Carlos', 'Karen', 'Daniel', 'Lisa', 'Matthew', 'Nancy',
  'Anthony', 'Sandra', 'Mark', 'Ashley', 'Priya', 'Emily', 'Wei', 'Aisha', 'Lukas', 'Sofia', 'Hiroshi', 'Fatima', 'Mateo',
  'Chloe', 'Noah', 'Olivia', 'Liam', 'Emma', 'Arjun', 'Mia', 'Jonas', 'Elena', 'Omar', 'Grace', 'Ravi', 'Hannah',
]
export const LAST_NAMES = [
  'Smith', 'Johnson', 'Williams', 'Brown', 'Jones', 'Garcia', 'Miller', 'Davis', 'Rodriguez', 'Martinez', 'Hernandez',
  'Lopez', 'Wilson', 'Anderson', 'Thomas', 'Taylor', 'Moore', 'Jackson', 'Martin', 'Lee', 'Perez', 'Thompson', 'White',
  'Harris', 'Clark', 'Lewis', 'Robinson', 'Walker', 'Young', 'Allen', 'King', 'Wright', 'Scott', 'Nguyen', 'Hill', 'Patel',
  'Mueller', 'Schmidt', 'Rossi', 'Kowalski', 'Tanaka', 'Chen', 'Kim', 'Singh', 'Okafor', 'Dubois', 'Novak', 'Larsen',
]

export interface AppDef {
  name: string
  namespace: string | null
  scopes: string[]
  callback: string
}

/** Connected apps: platform and vendor apps first, then the org's own integrations. */
export const CONNECTED_APPS: readonly AppDef[] = [
  { name: 'Salesforce Mobile App', namespace: null, scopes: ['api', 'web', 'refresh_token', 'visualforce'], callback: 'sfdc://oauth/restapi/success' },
  { name: 'Dataloader Partner', namespace: null, scopes: ['api', 'refresh_token'], callback: 'https://login.salesforce.com/services/oauth2/success' },
  { name: 'Workbench', namespace: null, scopes: ['full', 'refresh_token'], callback: 'https://workbench.developerforce.com/login.php' },
  { name: 'Salesforce for Outlook', namespace: null, scopes: ['api', 'refresh_token', 'chatter_api'], callback: 'https://login.salesforce.com/services/oauth2/success' },
  { name: 'Slack for Salesforce', namespace: null, scopes: ['api', 'refresh_token', 'openid'], callback: 'https://slack.com/apps/salesforce/oauth/callback' },
  { name: 'Tableau CRM Connector', namespace: null, scopes: ['api', 'refresh_token', 'wave_api'], callback: 'https://online.tableau.com/oauth/salesforce/callback' },
  { name: 'Jira Cloud Integration', namespace: null, scopes: ['api', 'refresh_token'], callback: 'https://acme.atlassian.net/plugins/servlet/oauth/salesforce' },
  { name: 'MuleSoft Anypoint Connector', namespace: null, scopes: ['api', 'refresh_token', 'offline_access'], callback: 'https://anypoint.mulesoft.com/accounts/oauth2/callback' },
  { name: 'Zapier', namespace: null, scopes: ['full', 'refresh_token'], callback: 'https://zapier.com/dashboard/auth/oauth/return/SalesforceCLIAPI/' },
  { name: 'Gong Connector', namespace: null, scopes: ['api', 'refresh_token'], callback: 'https://app.gong.io/oauth/salesforce/callback' },
  { name: 'Outreach', namespace: null, scopes: ['api', 'refresh_token', 'id'], callback: 'https://api.outreach.io/oauth/salesforce/callback' },
  { name: 'Okta SSO', namespace: null, scopes: ['openid', 'id', 'profile', 'email'], callback: 'https://acme.okta.com/sso/saml2/salesforce' },
  { name: 'Salesforce CLI', namespace: null, scopes: ['web', 'api', 'refresh_token'], callback: 'http://localhost:1717/OauthRedirect' },
  { name: 'Legacy Partner Portal SSO', namespace: null, scopes: ['full', 'refresh_token', 'web'], callback: 'https://partners.legacy-portal.example.com/sso/callback' },
  { name: 'ERP Order Sync', namespace: null, scopes: ['api', 'refresh_token', 'offline_access'], callback: 'https://erp-sync.internal.example.com/oauth/callback' },
  { name: 'Data Warehouse ETL', namespace: null, scopes: ['api', 'refresh_token'], callback: 'https://etl.internal.example.com/salesforce/oauth' },
  { name: 'Customer Support Chatbot', namespace: null, scopes: ['api', 'chatbot_api', 'refresh_token'], callback: 'https://bot.internal.example.com/oauth/salesforce' },
  { name: 'Marketing Analytics Export', namespace: null, scopes: ['api', 'refresh_token'], callback: 'https://analytics.internal.example.com/oauth/callback' },
  { name: 'Old Quote Generator', namespace: null, scopes: ['full'], callback: 'https://quotes.legacy.example.com/callback' },
  { name: 'Hackathon Demo App', namespace: null, scopes: ['full', 'refresh_token'], callback: 'https://localhost:8443/callback' },
  { name: 'Field Service Mobile', namespace: null, scopes: ['api', 'refresh_token', 'web'], callback: 'sfdc://fsl/oauth/success' },
  { name: 'Survey Tool Connector', namespace: null, scopes: ['api', 'refresh_token'], callback: 'https://surveys.example.com/integrations/salesforce' },
  { name: 'Commission Calculator', namespace: null, scopes: ['api'], callback: 'https://comp.internal.example.com/oauth' },
  { name: 'Backup and Restore', namespace: null, scopes: ['full', 'refresh_token', 'offline_access'], callback: 'https://backup.example.com/oauth/salesforce' },
]

/** Connected apps shipped by installed packages, keyed by namespace. */
export const PACKAGE_APPS: Readonly<Record<string, AppDef>> = {
  SBQQ: { name: 'Salesforce CPQ Calculation Service', namespace: 'SBQQ', scopes: ['api', 'refresh_token'], callback: 'https://steelbrick-cpq.herokuapp.com/oauth/callback' },
  pi: { name: 'Pardot Connector', namespace: 'pi', scopes: ['api', 'refresh_token', 'pardot_api'], callback: 'https://pi.pardot.com/oauth/callback' },
  et4ae5: { name: 'Marketing Cloud Connect', namespace: 'et4ae5', scopes: ['api', 'refresh_token', 'offline_access'], callback: 'https://mc.exacttarget.com/cloud/tools/SSO.aspx' },
  dsfs: { name: 'DocuSign eSignature', namespace: 'dsfs', scopes: ['api', 'refresh_token'], callback: 'https://account.docusign.com/oauth/callback' },
  npsp: { name: 'NPSP Data Import Service', namespace: 'npsp', scopes: ['api', 'refresh_token'], callback: 'https://npsp.salesforce.org/oauth/callback' },
}

export interface PackageDef {
  name: string
  namespace: string | null
  publisher: string
  versionName: string
  versionNumber: string
  seats: boolean
}

export const PACKAGES: Readonly<Record<string, PackageDef>> = {
  npsp: { name: 'Nonprofit Success Pack', namespace: 'npsp', publisher: 'Salesforce.org', versionName: 'Winter 2026', versionNumber: '3.243.0.1', seats: false },
  npe01: { name: 'Contacts & Organizations', namespace: 'npe01', publisher: 'Salesforce.org', versionName: 'Contacts & Organizations 3.19', versionNumber: '3.19', seats: false },
  npe03: { name: 'Recurring Donations', namespace: 'npe03', publisher: 'Salesforce.org', versionName: 'Recurring Donations 3.21', versionNumber: '3.21', seats: false },
  npe4: { name: 'Relationships', namespace: 'npe4', publisher: 'Salesforce.org', versionName: 'Relationships 3.10', versionNumber: '3.10', seats: false },
  npe5: { name: 'Affiliations', namespace: 'npe5', publisher: 'Salesforce.org', versionName: 'Affiliations 3.9', versionNumber: '3.9', seats: false },
  SBQQ: { name: 'Salesforce CPQ', namespace: 'SBQQ', publisher: 'Salesforce', versionName: 'Winter 2026', versionNumber: '252.4.0', seats: true },
  sbaa: { name: 'Advanced Approvals', namespace: 'sbaa', publisher: 'Salesforce', versionName: 'Winter 2026', versionNumber: '242.1.0', seats: true },
  pi: { name: 'Pardot', namespace: 'pi', publisher: 'Salesforce', versionName: 'Summer 2026', versionNumber: '5.12.0', seats: false },
  et4ae5: { name: 'Marketing Cloud Connect', namespace: 'et4ae5', publisher: 'Salesforce', versionName: 'Release 238', versionNumber: '238.1', seats: false },
  dlrs: { name: 'Declarative Lookup Rollup Summaries Tool', namespace: 'dlrs', publisher: 'SFDO Community Sprints', versionName: 'Release 2.22', versionNumber: '2.22.0.1', seats: false },
  dsfs: { name: 'DocuSign eSignature for Salesforce', namespace: 'dsfs', publisher: 'DocuSign, Inc.', versionName: 'DocuSign 7.9', versionNumber: '7.9.2', seats: true },
}
export const UNMANAGED_PACKAGES: readonly PackageDef[] = [
  { name: 'Lightning Path Assistant', namespace: null, publisher: 'Salesforce Labs', versionName: 'v1.4', versionNumber: '1.4', seats: false },
  { name: 'Internal Admin Utilities', namespace: null, publisher: 'Acme IT', versionName: 'Spring cleanup', versionNumber: '2.1', seats: false },
]

export interface ProfileDef {
  name: string
  license: string
  userType: string
  custom: boolean
  /** Risky flags set, by name. */
  perms: string[]
  weight: number
}

const ADMIN = ['modifyAllData', 'viewAllData', 'manageUsers', 'dataExport', 'authorApex', 'customizeApplication', 'viewSetup', 'resetPasswords', 'manageInternalUsers', 'apiEnabled']

export const PROFILES: readonly ProfileDef[] = [
  { name: 'System Administrator', license: 'Salesforce', userType: 'Standard', custom: false, perms: ADMIN, weight: 2 },
  { name: 'Standard User', license: 'Salesforce', userType: 'Standard', custom: false, perms: ['apiEnabled'], weight: 20 },
  { name: 'Sales Representative', license: 'Salesforce', userType: 'Standard', custom: true, perms: ['apiEnabled'], weight: 30 },
  { name: 'Integration User', license: 'Salesforce Integration', userType: 'Standard', custom: true, perms: ['modifyAllData', 'viewAllData', 'apiEnabled', 'viewSetup'], weight: 1 },
  { name: 'Platform Operations', license: 'Salesforce Platform', userType: 'Standard', custom: true, perms: ['apiEnabled'], weight: 10 },
  { name: 'Identity User', license: 'Identity', userType: 'Standard', custom: false, perms: [], weight: 5 },
  { name: 'Support Agent', license: 'Salesforce', userType: 'Standard', custom: true, perms: ['apiEnabled'], weight: 18 },
  { name: 'Read Only', license: 'Salesforce', userType: 'Standard', custom: false, perms: ['viewSetup'], weight: 4 },
  { name: 'Marketing User', license: 'Salesforce', userType: 'Standard', custom: false, perms: ['apiEnabled', 'dataExport'], weight: 6 },
  { name: 'Sales Manager', license: 'Salesforce', userType: 'Standard', custom: true, perms: ['apiEnabled', 'dataExport', 'viewSetup'], weight: 6 },
  { name: 'Chatter Free User', license: 'Chatter Free', userType: 'CsnOnly', custom: false, perms: [], weight: 8 },
  { name: 'Legacy Admin', license: 'Salesforce', userType: 'Standard', custom: true, perms: ['modifyAllData', 'viewAllData', 'manageUsers', 'customizeApplication', 'viewSetup', 'resetPasswords', 'apiEnabled'], weight: 1 },
  { name: 'Finance Analyst', license: 'Salesforce Platform', userType: 'Standard', custom: true, perms: ['viewAllData', 'dataExport', 'apiEnabled'], weight: 4 },
  { name: 'Contract Manager', license: 'Salesforce', userType: 'Standard', custom: false, perms: ['apiEnabled'], weight: 3 },
  { name: 'Partner Community User', license: 'Partner Community', userType: 'PowerPartner', custom: false, perms: [], weight: 6 },
  { name: 'Customer Community User', license: 'Customer Community', userType: 'CspLitePortal', custom: false, perms: [], weight: 6 },
  { name: 'Minimum Access - Salesforce', license: 'Salesforce', userType: 'Standard', custom: false, perms: [], weight: 2 },
  { name: 'Solution Manager', license: 'Salesforce', userType: 'Standard', custom: false, perms: ['apiEnabled'], weight: 1 },
  { name: 'Analytics Cloud Integration User', license: 'Analytics Cloud Integration User', userType: 'Standard', custom: false, perms: ['viewAllData', 'apiEnabled'], weight: 1 },
  { name: 'Release Manager', license: 'Salesforce', userType: 'Standard', custom: true, perms: ['authorApex', 'customizeApplication', 'viewSetup', 'apiEnabled', 'modifyAllData'], weight: 1 },
  { name: 'Service Cloud Supervisor', license: 'Salesforce', userType: 'Standard', custom: true, perms: ['apiEnabled', 'manageUsers', 'resetPasswords', 'viewSetup'], weight: 2 },
]
/** Departments used to name extra custom profiles and permission sets in large orgs. */
export const DEPARTMENTS = [
  'EMEA Sales', 'APAC Sales', 'LATAM Sales', 'Inside Sales', 'Field Sales', 'Customer Success', 'Renewals', 'Channel',
  'Field Service', 'Tier 2 Support', 'Legal Ops', 'Procurement', 'HR Operations', 'Revenue Ops', 'Deal Desk', 'Billing Ops',
  'Data Stewards', 'Partner Ops', 'Enablement', 'Executive', 'Compliance', 'Professional Services', 'Pre-Sales', 'Product Ops',
]

export const PERMISSION_SETS: ReadonlyArray<{ name: string; namespace: string | null; license: string | null; perms: string[] }> = [
  { name: 'Sales_Ops_Admin', namespace: null, license: null, perms: ['customizeApplication', 'viewSetup', 'dataExport', 'apiEnabled'] },
  { name: 'Report_Builder', namespace: null, license: null, perms: ['viewSetup'] },
  { name: 'API_Integration_Access', namespace: null, license: 'Salesforce Integration', perms: ['apiEnabled', 'viewAllData'] },
  { name: 'Data_Export_Access', namespace: null, license: null, perms: ['dataExport'] },
  { name: 'View_All_Data_Auditor', namespace: null, license: null, perms: ['viewAllData', 'viewSetup'] },
  { name: 'Emergency_Modify_All', namespace: null, license: null, perms: ['modifyAllData', 'viewAllData', 'apiEnabled'] },
  { name: 'Knowledge_Author', namespace: null, license: null, perms: [] },
  { name: 'Flow_Builder', namespace: null, license: null, perms: ['customizeApplication', 'viewSetup'] },
  { name: 'Apex_Developer', namespace: null, license: null, perms: ['authorApex', 'customizeApplication', 'viewSetup', 'apiEnabled'] },
  { name: 'User_Management', namespace: null, license: null, perms: ['manageUsers', 'resetPasswords', 'manageInternalUsers', 'viewSetup'] },
  { name: 'Service_Console_User', namespace: null, license: null, perms: [] },
  { name: 'Mass_Email_Sender', namespace: null, license: null, perms: [] },
]
export const PACKAGE_PERMISSION_SETS: Readonly<Record<string, string[]>> = {
  SBQQ: ['SteelBrickCPQAdmin', 'SteelBrickCPQUser'],
  sbaa: ['AdvancedApprovalsAdmin', 'AdvancedApprovalsUser'],
  npsp: ['NPSP_Admin', 'NPSP_Data_Import'],
  pi: ['Pardot_Connector_User', 'Pardot_Integration_User'],
  et4ae5: ['Marketing_Cloud_Connect_Admin', 'Marketing_Cloud_Connect_User'],
  dlrs: ['LookupRollupSummariesFull', 'LookupRollupSummariesReadOnly'],
  dsfs: ['DocuSign_Administrator', 'DocuSign_User'],
}

/** User licenses: [apiName, name]. The login-activity license types are these names. */
export const USER_LICENSES: ReadonlyArray<readonly [string, string]> = [
  ['SFDC', 'Salesforce'], ['AUL', 'Salesforce Platform'], ['CSN_User', 'Chatter Free'], ['Identity', 'Identity'],
  ['PID_Customer_Community', 'Customer Community'], ['PID_Partner_Community', 'Partner Community'],
  ['SFDC_Integration', 'Salesforce Integration'], ['AnalyticsIntegrationUser', 'Analytics Cloud Integration User'],
]
export const PERMISSION_SET_LICENSES: ReadonlyArray<readonly [string, string, string | null]> = [
  ['SalesforceCPQ_CPQStandardPerm', 'Salesforce CPQ License', 'SBQQ'], ['SalesforceCPQ_CPQAAPerm', 'Salesforce Advanced Approvals', 'sbaa'],
  ['EinsteinAnalyticsPlusPsl', 'CRM Analytics Plus', null], ['SalesConsoleUser', 'Sales Console User', null],
  ['LightningSchedulerUser', 'Lightning Scheduler', null], ['FieldServiceMobilePsl', 'Field Service Mobile', null],
  ['PardotPsl', 'Pardot Integration', 'pi'], ['NonprofitCloudPsl', 'Nonprofit Cloud', 'npsp'],
]
export const FEATURE_LICENSES: ReadonlyArray<readonly [string, string]> = [
  ['MarketingUser', 'Marketing User'], ['OfflineUser', 'Offline User'], ['KnowledgeUser', 'Knowledge User'],
  ['InteractionUser', 'Flow User'], ['SFContentUser', 'Salesforce CRM Content User'], ['LiveAgentUser', 'Chat User'],
  ['SupportUser', 'Service Cloud User'],
]

/** Platform limits: [name, cap at full size, typical share used]. Caps of 0 are features the org lacks. */
export const LIMITS: ReadonlyArray<readonly [string, number, number]> = [
  ['DailyApiRequests', 1_000_000, 0.42], ['DailyBulkApiBatches', 15_000, 0.08], ['DailyBulkV2QueryJobs', 10_000, 0.05],
  ['DailyBulkV2QueryFileStorageMB', 976_562, 0.01], ['DailyAsyncApexExecutions', 250_000, 0.31], ['DailyAsyncApexTests', 500, 0.12],
  ['DataStorageMB', 40_960, 0.93], ['FileStorageMB', 612_352, 0.47], ['PermissionSets', 1_500, 0.14],
  ['HourlyDashboardRefreshes', 200, 0.02], ['HourlyDashboardResults', 5_000, 0.03], ['MassEmail', 5_000, 0.0],
  ['SingleEmail', 5_000, 0.21], ['DailyStreamingApiEvents', 1_000_000, 0.04], ['StreamingApiConcurrentClients', 2_000, 0.01],
  ['DailyWorkflowEmails', 1_000_000, 0.03], ['HourlyPublishedPlatformEvents', 250_000, 0.02], ['HourlyTimeBasedWorkflow', 1_000, 0.06],
  ['ConcurrentAsyncGetReportInstances', 200, 0.0], ['ActiveScratchOrgs', 0, 0], ['DailyScratchOrgs', 0, 0], ['Package2VersionCreates', 0, 0],
]
