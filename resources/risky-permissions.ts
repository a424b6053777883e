import { f } from '../runtime/core/define.ts'

/** Risky-permission flags shared by profiles and permission sets (docs/contract.md §2). */
export const riskyPermissionFields = {
  modifyAllData: f.bool({ description: 'Grants Modify All Data: edit and delete every record, regardless of sharing.' }),
  viewAllData: f.bool({ description: 'Grants View All Data: read every record, regardless of sharing.' }),
  manageUsers: f.bool({ description: 'Grants Manage Users: create, edit and deactivate users and assign profiles.' }),
  dataExport: f.bool({ description: 'Grants Weekly Data Export: export all data.' }),
  authorApex: f.bool({ description: 'Grants Author Apex: write and deploy Apex code.' }),
  customizeApplication: f.bool({ description: 'Grants Customize Application: change the org configuration.' }),
  viewSetup: f.bool({ description: 'Grants View Setup and Configuration.' }),
  resetPasswords: f.bool({ description: 'Grants Reset User Passwords and Unlock Users.' }),
  manageInternalUsers: f.bool({ description: 'Grants Manage Internal Users.' }),
  apiEnabled: f.bool({ description: 'Grants API Enabled: access the org through the APIs.' }),
  riskyPermissionCount: f.int({ description: 'How many of the risky flags are set.' }),
}

export const riskyPermissionNames = [
  'modifyAllData', 'viewAllData', 'manageUsers', 'dataExport', 'authorApex', 'customizeApplication', 'viewSetup',
  'resetPasswords', 'manageInternalUsers', 'apiEnabled', 'riskyPermissionCount',
] as const
