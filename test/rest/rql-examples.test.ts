/**
 * Every example of docs/rql.md's table runs on the list it names, against the demo data, and finds something; the
 * calls go through the typed client (`@orgscan/client`, from its sources), as a user of the guide would make them.
 */
import { t } from '../helpers/file-test.ts'
import { readFileSync } from 'node:fs'
import { startTestService } from '../helpers/service.ts'
import { OrgscanClient, OrgscanError, type Resources } from '../../client/index.ts'
import { ENDPOINTS } from '../../client/generated.ts'
import { createKey } from '../../runtime/platform/admin.ts'

const doc = readFileSync(new URL('../../docs/rql.md', import.meta.url), 'utf8')
const rows = [...doc.matchAll(/^\| `(\/v1\/[^`]+)` \| `([^`]+)` \| ([^|]+) \|$/gm)].map((m) => ({ list: m[1], filter: m[2].replace(/\\\|/g, '|'), finds: m[3].trim() }))
const ts = await startTestService(t)
const org = ts.seed.orgs.find((o) => o.large)!
const key = await createKey(ts.svc.db.sql, ts.svc.pepper, org.accountId)
const orgscan = new OrgscanClient({ baseUrl: ts.url, apiKey: { keyId: key.keyId, secret: key.secret } })

/** The resource whose list lives at a path of the table (`/v1/orgs/{orgId}/fields` → fields). */
const resourceAt = (path: string) => (Object.keys(ENDPOINTS) as Array<keyof Resources>).find((n) => `/v1/${ENDPOINTS[n].list}` === path)

t.ok(rows.length >= 8, `the table has its examples (${rows.length})`)
for (const r of rows) {
  t.test(`${r.list} ${r.filter}`, async (t) => {
    const name = resourceAt(r.list)
    t.ok(name, `${r.list} is a list of the service`)
    try {
      const page = await orgscan.list(name as 'fields', { orgId: org.salesforceId, filter: r.filter, ...(ENDPOINTS[name!].paged ? { limit: 5 } : {}) })
      t.ok(page.data.length > 0, `finds ${r.finds}`)
    } catch (e) {
      t.fail(e instanceof OrgscanError ? `${e.status} ${e.code}: ${e.message}` : String(e))
    }
  })
}
