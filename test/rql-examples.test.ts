/** Every example of docs/rql.md's table runs on the list it names, against the demo data, and finds something. */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { startTestService } from './helpers/service.ts'

const doc = readFileSync(new URL('../docs/rql.md', import.meta.url), 'utf8')
const rows = [...doc.matchAll(/^\| `(\/v1\/[^`]+)` \| `([^`]+)` \| ([^|]+) \|$/gm)].map((m) => ({ list: m[1], filter: m[2].replace(/\\\|/g, '|'), finds: m[3].trim() }))
const ts = await startTestService(t)
const org = ts.seed.orgs.find((o) => o.large)!
const auth = await ts.keyHeader(org.accountId)

t.ok(rows.length >= 8, `the table has its examples (${rows.length})`)
for (const r of rows) {
  t.test(`${r.list} ${r.filter}`, async (t) => {
    const res = await ts.get(`${r.list.replace('{orgId}', org.salesforceId)}?filter=${encodeURIComponent(r.filter)}&limit=5`, auth)
    t.equal(res.status, 200, res.body?.error?.detail ?? '')
    t.ok(res.body.data.length > 0, `finds ${r.finds}`)
  })
}
