import { f } from '../runtime/define.ts'

/** Risky-permission flags shared by profiles and permission sets (docs/contract.md §2). */
export const riskyPermissionFields = {
  modifyAllData: f.bool(),
  viewAllData: f.bool(),
  manageUsers: f.bool(),
  dataExport: f.bool(),
  authorApex: f.bool(),
  customizeApplication: f.bool(),
  viewSetup: f.bool(),
  resetPasswords: f.bool(),
  manageInternalUsers: f.bool(),
  apiEnabled: f.bool(),
  riskyPermissionCount: f.int({ description: 'How many of the risky flags are set.' }),
}

export const riskyPermissionNames = [
  'modifyAllData', 'viewAllData', 'manageUsers', 'dataExport', 'authorApex', 'customizeApplication', 'viewSetup',
  'resetPasswords', 'manageInternalUsers', 'apiEnabled', 'riskyPermissionCount',
] as const
