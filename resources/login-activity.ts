import * as v from 'valibot'
import { defineResource, f } from '../runtime/core/define.ts'

export const loginActivity = defineResource({
  name: 'loginActivity',
  title: 'Login activity',
  plural: 'Login activity',
  description: 'Per-user login counts over the trailing 30, 90 and 365 days, to find unused licenses.',
  tiebreak: 'userId',
  fields: {
    userId: f.text({ description: 'The user\'s platform id.' }),
    username: f.text({ description: 'Username (login name).' }),
    name: f.text({ description: 'The user\'s full name.' }),
    profileName: f.text({ description: 'Name of the user\'s profile.' }),
    licenseType: f.text({ description: 'The user\'s license (e.g. Salesforce, Salesforce Platform).' }),
    isActive: f.bool({ description: 'Whether the user is active.' }),
    lastLoginDate: f.ts({ nullable: true, description: 'Last successful login; null when the user never logged in.' }),
    logins30: f.int({ description: 'Successful logins in the last 30 days.' }),
    logins90: f.int({ description: 'Successful logins in the last 90 days.' }),
    logins365: f.int({ description: 'Successful logins in the last 365 days.' }),
  },
  filterable: ['userId', 'username', 'name', 'profileName', 'licenseType', 'isActive', 'lastLoginDate', 'logins30', 'logins90', 'logins365'],
  sortable: ['userId', 'username', 'name', 'profileName', 'licenseType', 'lastLoginDate', 'logins30', 'logins90', 'logins365'],
  groupable: ['profileName', 'licenseType', 'isActive'],
  defaultSort: '-lastLoginDate',
})

const windowSchema = v.object({
  days: v.picklist([30, 90, 365]),
  licensedUsers: v.number(),
  loggedIn: v.number(),
  notLoggedIn: v.number(),
  adoptionPercent: v.number(),
})

const window = (days: 30 | 90 | 365) => `json_build_object('days', ${days},
      'licensedUsers', count(*),
      'loggedIn', count(*) FILTER (WHERE t.logins_${days} > 0),
      'notLoggedIn', count(*) FILTER (WHERE t.logins_${days} = 0),
      'adoptionPercent', CASE WHEN count(*) = 0 THEN 0
        ELSE round(count(*) FILTER (WHERE t.logins_${days} > 0) * 100.0 / count(*), 1)::double precision END)`

export const loginActivityOverview = defineResource({
  name: 'loginActivityOverview',
  title: 'Login activity overview',
  description:
    'Login adoption rollup of active licensed users over the trailing 30, 90 and 365 days. The repeatable `license` parameter scopes every count to the selected license types.',
  path: 'loginActivity/overview',
  table: 'login_activity',
  kind: 'singleton',
  fields: {
    licenseTypes: f.textArray({ nullable: true, description: 'The license types the counts are scoped to; null when unscoped.' }),
    windows: f.json(v.array(windowSchema), { description: 'Per window (30, 90 and 365 days): licensed users, users who logged in and users who did not, and the share who did, optionally for some licenses only.' }),
  },
  extraParams: [{ name: 'license', type: 'list', description: 'License type to include (repeatable), e.g. `license=Salesforce&license=Salesforce Platform`.' }],
  singletonSql: ({ scanParam, extra, param }) => {
    const licenses = extra.license ?? []
    const scoped = licenses.length > 0
    const lic = scoped ? param(licenses) : null
    return `SELECT json_build_object(
      'licenseTypes', ${scoped ? `${lic}::text[]` : 'NULL'},
      'windows', json_build_array(${window(30)}, ${window(90)}, ${window(365)}))::text AS data
    FROM login_activity t WHERE t.scan_id = ${scanParam} AND t.is_active${scoped ? ` AND t.license_type = ANY(${lic}::text[])` : ''}`
  },
})
