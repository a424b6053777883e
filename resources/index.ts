/** The ordered registry: every resource of the service, in documentation order. */
import type { Resource } from '../runtime/core/define.ts'
import { orgs } from './orgs.ts'
import { connectedApps } from './connected-apps.ts'
import { connectedAppAssignments } from './connected-app-assignments.ts'
import { fields, objectFields } from './fields.ts'
import { objects } from './objects.ts'
import { objectUsages } from './object-usages.ts'
import { cloudUsage } from './cloud-usage.ts'
import { installedPackages } from './installed-packages.ts'
import { issues } from './issues.ts'
import { recommendations } from './recommendations.ts'
import { orgLimits } from './org-limits.ts'
import { licenseUsages } from './license-usages.ts'
import { sfProfiles } from './sf-profiles.ts'
import { permissionSets } from './permission-sets.ts'
import { loginActivity, loginActivityOverview } from './login-activity.ts'
import { codeCounts } from './code-counts.ts'
import { classTypes } from './class-types.ts'
import { esLints } from './es-lints.ts'
import { pmds } from './pmds.ts'
import { items } from './items.ts'
import { flows } from './flows.ts'
import { triggers } from './triggers.ts'
import { workflows } from './workflows.ts'

export const registry: readonly Resource[] = [
  orgs, connectedApps, connectedAppAssignments, fields, objects, objectFields, objectUsages, cloudUsage,
  installedPackages, issues, recommendations, orgLimits, licenseUsages, sfProfiles, permissionSets, loginActivity,
  loginActivityOverview, codeCounts, classTypes, esLints, pmds, items, flows, triggers, workflows,
]

export { prompts } from './prompts.ts'
