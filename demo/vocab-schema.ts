/**
 * Vocabulary of the demo schema: real standard objects with their usual fields, managed-package objects and
 * fields per namespace, and word lists for custom object and field API names (`Region__c`, `Warranty_Claim__c`).
 */

/** Standard objects, most used first, with their notable standard fields (system fields are added to all). */
export const STANDARD_OBJECTS: ReadonlyArray<readonly [string, string]> = [
  ['Account', 'Name AccountNumber Type Industry AnnualRevenue NumberOfEmployees Phone Fax Website BillingStreet BillingCity BillingState BillingPostalCode BillingCountry ShippingStreet ShippingCity ShippingState ShippingPostalCode ShippingCountry Description Rating Ownership ParentId Sic TickerSymbol Site AccountSource Jigsaw CleanStatus DunsNumber Tradestyle NaicsCode YearStarted LastActivityDate'],
  ['Contact', 'FirstName LastName Salutation AccountId Title Department Email Phone MobilePhone HomePhone Fax MailingStreet MailingCity MailingState MailingPostalCode MailingCountry Birthdate LeadSource ReportsToId AssistantName HasOptedOutOfEmail DoNotCall Description EmailBouncedReason LastActivityDate'],
  ['Opportunity', 'Name AccountId Amount CloseDate StageName Probability Type LeadSource NextStep ForecastCategoryName CampaignId IsPrivate Description ExpectedRevenue TotalOpportunityQuantity Pricebook2Id ContractId IsWon IsClosed LastActivityDate'],
  ['Lead', 'FirstName LastName Company Title Email Phone MobilePhone Status LeadSource Industry Rating AnnualRevenue NumberOfEmployees Street City State PostalCode Country IsConverted ConvertedAccountId ConvertedContactId ConvertedOpportunityId ConvertedDate Description Website HasOptedOutOfEmail'],
  ['Case', 'CaseNumber Subject Description Status Priority Origin Reason Type AccountId ContactId SuppliedEmail SuppliedName SuppliedPhone IsEscalated ClosedDate ParentId EntitlementId IsClosed'],
  ['Task', 'Subject ActivityDate Status Priority WhoId WhatId Description TaskSubtype CallDurationInSeconds CallType IsClosed IsHighPriority'],
  ['Event', 'Subject StartDateTime EndDateTime ActivityDate Location WhoId WhatId Description IsAllDayEvent ShowAs EventSubtype'],
  ['User', 'Username Email FirstName LastName Alias ProfileId UserRoleId IsActive TimeZoneSidKey LocaleSidKey ManagerId Department Title FederationIdentifier CompanyName Division EmployeeNumber'],
  ['Campaign', 'Name Type Status StartDate EndDate BudgetedCost ActualCost ExpectedRevenue NumberSent IsActive ParentId Description'],
  ['CampaignMember', 'CampaignId LeadId ContactId Status HasResponded FirstRespondedDate'],
  ['Product2', 'Name ProductCode Description Family IsActive QuantityUnitOfMeasure StockKeepingUnit'],
  ['Pricebook2', 'Name IsActive IsStandard Description'],
  ['PricebookEntry', 'Pricebook2Id Product2Id UnitPrice IsActive UseStandardPrice'],
  ['OpportunityLineItem', 'OpportunityId PricebookEntryId Product2Id Quantity UnitPrice TotalPrice Discount ServiceDate Description'],
  ['OpportunityContactRole', 'OpportunityId ContactId Role IsPrimary'],
  ['Contract', 'AccountId StartDate EndDate ContractTerm Status ContractNumber SpecialTerms OwnerExpirationNotice Description'],
  ['Order', 'AccountId EffectiveDate EndDate Status OrderNumber TotalAmount ContractId Pricebook2Id Type Description'],
  ['OrderItem', 'OrderId Product2Id Quantity UnitPrice TotalPrice ServiceDate EndDate'],
  ['Asset', 'Name AccountId ContactId Product2Id SerialNumber Status InstallDate PurchaseDate UsageEndDate Quantity Price Description'],
  ['Quote', 'Name OpportunityId Status ExpirationDate GrandTotal Discount QuoteNumber Description'],
  ['QuoteLineItem', 'QuoteId Product2Id Quantity UnitPrice TotalPrice Discount'],
  ['EmailMessage', 'Subject FromAddress ToAddress CcAddress TextBody HtmlBody Status ParentId MessageDate Incoming'],
  ['ContentVersion', 'Title PathOnClient FileType ContentSize VersionNumber Description'],
  ['ContentDocument', 'Title FileType ContentSize Description'],
  ['CaseComment', 'ParentId CommentBody IsPublished'],
  ['AccountContactRelation', 'AccountId ContactId Roles IsDirect IsActive StartDate EndDate'],
  ['Entitlement', 'Name AccountId StartDate EndDate Status Type'],
  ['ServiceContract', 'Name AccountId StartDate EndDate Status Term'],
  ['WorkOrder', 'WorkOrderNumber AccountId ContactId CaseId Status Priority Subject Description StartDate EndDate'],
  ['ServiceAppointment', 'AppointmentNumber ParentRecordId Status SchedStartTime SchedEndTime ActualStartTime ActualEndTime Duration'],
  ['Knowledge__kav', 'Title UrlName Summary ArticleNumber PublishStatus Language IsVisibleInPkb'],
  ['Individual', 'FirstName LastName HasOptedOutTracking HasOptedOutProfiling HasOptedOutSolicit'],
  ['UserRole', 'Name ParentRoleId RollupDescription'],
  ['Group', 'Name Type DeveloperName'],
  ['Note', 'Title Body ParentId IsPrivate'],
  ['Attachment', 'Name ParentId ContentType BodyLength Description'],
  ['Solution', 'SolutionName SolutionNote Status IsPublished'],
  ['Idea', 'Title Body Status Categories VoteTotal'],
  ['LiveChatTranscript', 'Name Status CaseId ContactId ChatDuration StartTime EndTime Body'],
  ['Territory2', 'Name Territory2TypeId ParentTerritory2Id Description'],
  ['Macro', 'Name Description IsAlohaSupported'],
  ['Partner', 'AccountFromId AccountToId Role IsPrimary'],
  ['Document', 'Name FolderId Type BodyLength Description'],
  ['Report', 'Name DeveloperName FolderName Format Description'],
  ['Dashboard', 'Title DeveloperName FolderName Description'],
  ['Topic', 'Name Description TalkingAbout'],
  ['ContactPointEmail', 'EmailAddress ParentId IsPrimary'],
]

/** System fields present on every object. */
export const SYSTEM_FIELDS = ['Id', 'OwnerId', 'CreatedById', 'CreatedDate', 'LastModifiedById', 'LastModifiedDate', 'SystemModstamp', 'IsDeleted'] as const

/** Managed-package objects and notable fields on standard objects, per namespace. */
export const PACKAGE_SCHEMA: Readonly<Record<string, { objects: string[]; standardFields: Record<string, string[]> }>> = {
  npsp: {
    objects: ['Batch', 'General_Accounting_Unit', 'Allocation', 'Address', 'Engagement_Plan', 'Engagement_Plan_Template', 'Level', 'Partial_Soft_Credit', 'Account_Soft_Credit', 'DataImport', 'Trigger_Handler', 'Grant_Deadline'],
    standardFields: { Account: ['Funding_Focus', 'Grantmaker', 'Number_of_Household_Members', 'Membership_Status'], Contact: ['Primary_Affiliation', 'Deceased', 'Do_Not_Contact', 'Soft_Credit_Last_Year'], Opportunity: ['Honoree_Contact', 'Tribute_Type', 'Acknowledgment_Status', 'Batch', 'Grant_Period_End_Date'] },
  },
  npe01: { objects: ['OppPayment', 'Contacts_And_Orgs_Settings'], standardFields: { Contact: ['WorkEmail', 'HomeEmail', 'Preferred_Email', 'PreferredPhone', 'AlternateEmail'], Opportunity: ['Do_Not_Automatically_Create_Payment', 'Member_Level', 'Number_of_Payments'] } },
  npe03: { objects: ['Recurring_Donation', 'Custom_Field_Mapping'], standardFields: { Opportunity: ['Recurring_Donation'] } },
  npe4: { objects: ['Relationship'], standardFields: {} },
  npe5: { objects: ['Affiliation'], standardFields: {} },
  SBQQ: {
    objects: ['Quote', 'QuoteLine', 'QuoteLineGroup', 'Subscription', 'ProductOption', 'PriceRule', 'PriceCondition', 'PriceAction', 'DiscountSchedule', 'DiscountTier', 'ProductRule', 'ConfigurationAttribute', 'QuoteTemplate', 'Term', 'ContractedPrice', 'Dimension', 'SummaryVariable', 'LookupQuery', 'CustomAction', 'QuoteDocument'],
    standardFields: { Opportunity: ['Contracted', 'PrimaryQuote', 'Renewal', 'AmendedContract', 'Ordered'], Account: ['RenewalModel', 'AssetQuantitiesCombined', 'ContractCoTermination', 'RenewalPricingMethod'], Product2: ['SubscriptionPricing', 'SubscriptionTerm', 'ChargeType', 'BillingFrequency', 'PricingMethod'], Contract: ['RenewalForecast', 'RenewalQuoted', 'Quote', 'RenewalTerm'] },
  },
  sbaa: { objects: ['Approval', 'ApprovalRule', 'ApprovalChain', 'Approver', 'ApprovalCondition'], standardFields: {} },
  pi: {
    objects: ['ObjectChangeLog', 'Pardot_Scoring_Category', 'Category_Contact_Score', 'Category_Lead_Score'],
    standardFields: { Lead: ['score', 'grade', 'campaign', 'url', 'last_activity', 'created_date', 'conversion_date', 'first_touch_url'], Contact: ['score', 'grade', 'campaign', 'url', 'last_activity', 'Pardot_Hard_Bounced'] },
  },
  et4ae5: {
    objects: ['SendDefinition', 'IndividualEmailResult', 'Automated_Send', 'Business_Unit', 'Configuration', 'Journey'],
    standardFields: { Contact: ['HasOptedOutOfMobile', 'Mobile_Country_Code'], Lead: ['HasOptedOutOfMobile', 'Mobile_Country_Code'] },
  },
  dlrs: { objects: ['LookupRollupSummary', 'LookupChild', 'LookupParent', 'LookupRollupSummaryLog', 'LookupRollupSummaryScheduleItems'], standardFields: {} },
  dsfs: {
    objects: ['DocuSign_Status', 'DocuSign_Recipient_Status', 'DocuSign_Envelope', 'DocuSign_Envelope_Recipient', 'EnvelopeConfiguration'],
    standardFields: { Opportunity: ['Total_Docusign_Envelopes', 'Completed_Docusign_Envelopes'], Contact: ['DocuSign_Signer_Role'] },
  },
}

/** Well-known custom objects many orgs have; listed before generated combinations. */
export const COMMON_CUSTOM_OBJECTS = [
  'Region', 'Project', 'Invoice', 'Shipment', 'Warranty_Claim', 'Territory_Plan', 'Commission', 'Site_Visit', 'Product_Interest',
  'Competitor', 'Contract_Line', 'Support_Plan', 'Onboarding_Task', 'Renewal_Forecast', 'Partner_Deal', 'Expense_Report',
  'Customer_Health_Score', 'Account_Plan', 'Sales_Target', 'Integration_Log',
]
export const OBJECT_WORDS_A = [
  'Regional', 'Customer', 'Partner', 'Product', 'Service', 'Project', 'Contract', 'Field', 'Sales', 'Marketing', 'Support',
  'Finance', 'Billing', 'Inventory', 'Warehouse', 'Vendor', 'Compliance', 'Quality', 'Training', 'Event', 'Asset', 'Territory',
  'Commission', 'Budget', 'Forecast', 'Subscription', 'Onboarding', 'Renewal', 'Installation', 'Maintenance', 'Survey',
  'Loyalty', 'Referral', 'Shipping', 'Procurement', 'Legal', 'Risk', 'Audit', 'Integration', 'Legacy',
]
export const OBJECT_WORDS_B = [
  'Plan', 'Request', 'Record', 'Log', 'Item', 'Line', 'Assignment', 'Detail', 'Schedule', 'Review', 'Approval', 'Claim',
  'Agreement', 'Visit', 'Report', 'Snapshot', 'History', 'Allocation', 'Target', 'Member', 'Configuration', 'Setting',
  'Mapping', 'Stage', 'Task', 'Order', 'Invoice', 'Payment', 'Adjustment', 'Exception', 'Note', 'Score', 'Metric', 'Entry',
]
export const METADATA_TYPES = ['Integration_Setting', 'Feature_Flag', 'Territory_Mapping', 'Routing_Rule', 'Tax_Rate', 'Trigger_Setting']

/** Well-known custom fields; listed before generated combinations. */
export const COMMON_CUSTOM_FIELDS = [
  'Region', 'Segment', 'Tier', 'Legacy_Id', 'External_Id', 'ERP_Account_Number', 'Customer_Since', 'Health_Score',
  'Churn_Risk', 'Primary_Contact', 'Renewal_Date', 'Territory', 'Data_Source', 'Last_Sync_Date', 'Do_Not_Migrate',
]
export const FIELD_WORDS_A = [
  'Primary', 'Secondary', 'Legacy', 'Regional', 'Global', 'Internal', 'External', 'Annual', 'Monthly', 'Quarterly', 'Last',
  'Next', 'Original', 'Preferred', 'Billing', 'Shipping', 'Renewal', 'Contract', 'Partner', 'Customer', 'Support', 'Sales',
  'Marketing', 'Finance', 'Compliance', 'Risk', 'Territory', 'Channel', 'Product', 'Service', 'Onboarding', 'Migration', 'ERP',
  'SAP', 'NetSuite', 'Marketo', 'Segment', 'Health', 'Churn', 'Approval', 'Escalation', 'Warranty', 'Discount', 'Commission',
  'Forecast', 'Budget', 'Target', 'Survey', 'Legal', 'Credit',
]
export const FIELD_WORDS_B = [
  'Region', 'Score', 'Status', 'Date', 'Amount', 'Owner', 'Code', 'Reference', 'Id', 'Notes', 'Reason', 'Type', 'Category',
  'Count', 'Percentage', 'Flag', 'Level', 'Stage', 'Source', 'Email', 'Phone', 'Manager', 'Approver', 'Rate', 'Value',
  'Number', 'Name', 'Description', 'Comments', 'Override', 'Indicator', 'Tier', 'Term', 'Start_Date', 'End_Date', 'Priority',
  'Contact', 'Account', 'URL', 'Key', 'Version',
]

/** Salesforce field type of a field API name (standard or custom word), with its length. */
export function fieldTypeOf(word: string, self: string): { type: string; length: number | null; referenceTo: string[] } {
  const w = word.replace(/__c$/, '')
  const ref = (to: string[]) => ({ type: 'Lookup', length: 18, referenceTo: to })
  if (w === 'Id') return { type: 'Id', length: 18, referenceTo: [] }
  if (w === 'OwnerId' || w === 'CreatedById' || w === 'LastModifiedById' || w === 'ManagerId' || /(Owner|Manager|Approver)$/.test(w)) return ref(['User'])
  if (w === 'WhoId') return ref(['Contact', 'Lead'])
  if (w === 'WhatId') return ref(['Account', 'Opportunity', 'Case'])
  if (w === 'ParentId' || w === 'ParentRecordId') return ref([self])
  if (/^(Account|Contact|Opportunity|Case|Campaign|Contract|Quote|Order|Lead|Entitlement|Product2|Pricebook2|PricebookEntry|UserRole|Profile|Folder|Territory2Type|ParentRole|ParentTerritory2|Converted(Account|Contact|Opportunity)|ReportsTo|AccountFrom|AccountTo)Id$/.test(w)) {
    return ref([w.replace(/^Converted|Id$/g, '').replace(/^(ReportsTo)$/, 'Contact').replace(/^(AccountFrom|AccountTo)$/, 'Account').replace(/^ParentRole$/, 'UserRole').replace(/^ParentTerritory2$/, 'Territory2')])
  }
  if (/_(Contact|Account)$/.test(w) || w === 'Primary_Contact') return ref([w.endsWith('Account') ? 'Account' : 'Contact'])
  if (/DateTime$|Time$|^SystemModstamp$|CreatedDate$|LastModifiedDate$|MessageDate$/.test(w)) return { type: 'DateTime', length: null, referenceTo: [] }
  if (/Date$|^Birthdate$|_Since$/.test(w)) return { type: 'Date', length: null, referenceTo: [] }
  if (/^(Is|Has|Do_?Not|Use)|Flag$|Override$|Indicator$|^Incoming$|Deceased|Grantmaker|Contracted|Ordered|Renewal$|Hard_Bounced|HasResponded/.test(w)) return { type: 'Checkbox', length: null, referenceTo: [] }
  if (/Amount$|Revenue$|Price$|Cost$|GrandTotal|Value$|Budget|Credit_Last_Year/.test(w)) return { type: 'Currency', length: null, referenceTo: [] }
  if (/Probability|Percentage$|Rate$|^Discount$/.test(w)) return { type: 'Percent', length: null, referenceTo: [] }
  if (/Email$|Address$/.test(w)) return { type: 'Email', length: 80, referenceTo: [] }
  if (/Phone$|^Fax$/.test(w)) return { type: 'Phone', length: 40, referenceTo: [] }
  if (/Website$|URL$|^url$|_url$/.test(w)) return { type: 'Url', length: 255, referenceTo: [] }
  if (/Description$|Body$|Notes$|Comments$|SpecialTerms|Summary$|Note$/.test(w)) return { type: 'LongTextArea', length: 32768, referenceTo: [] }
  if (/Street$/.test(w)) return { type: 'TextArea', length: 255, referenceTo: [] }
  if (/Number$|^(CaseNumber|ContractNumber|OrderNumber|QuoteNumber|ArticleNumber|WorkOrderNumber|AppointmentNumber)$/.test(w) && !/^Number/.test(w) && w !== 'Number') {
    return /^(CaseNumber|ContractNumber|OrderNumber|QuoteNumber|ArticleNumber|WorkOrderNumber|AppointmentNumber)$/.test(w)
      ? { type: 'AutoNumber', length: 30, referenceTo: [] }
      : { type: 'Text', length: 40, referenceTo: [] }
  }
  if (/Count$|^NumberOf|Quantity$|Seconds$|^Number|Term$|Size$|Length$|^YearStarted$|Duration$|VoteTotal|^score$|Members$/.test(w)) return { type: 'Number', length: null, referenceTo: [] }
  if (/Roles$|Categories$/.test(w)) return { type: 'MultiselectPicklist', length: 4099, referenceTo: [] }
  if (/Status$|Type$|Industry$|Rating$|Priority$|StageName$|Source$|Origin$|Reason$|Salutation$|Family$|Category$|Level$|Stage$|Tier$|Segment$|Region$|Territory$|Ownership$|grade$|Role$|Language$|ShowAs$|Format$|Model$|Method$|Frequency$|Focus$|Risk$/.test(w)) {
    return { type: 'Picklist', length: 255, referenceTo: [] }
  }
  if (/(Id|Key|Code|Reference|Version|Hash)$/.test(w)) return { type: 'Text', length: 50, referenceTo: [] }
  return { type: 'Text', length: 255, referenceTo: [] }
}
