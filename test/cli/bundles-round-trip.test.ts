/**
 * Bundles that round-trip (docs/import.md): every scan of every seeded org is exported with `orgscan export` (JSON for
 * some orgs, NDJSON for the others) and imported with `orgscan import` into an empty database, oldest first; then every
 * org-scoped endpoint — every list page, unfiltered too, and records of each — answers the same on both services, the
 * org records are equal, and both services export byte-identical bundles in the other format. Driven by the registry.
 * On the embedded database both commands reach the running services through their admin sockets.
 */
import { t } from '../helpers/file-test.ts'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { registry } from '../../resources/index.ts'
import { compileRegistry, type CompiledResource } from '../../runtime/core/registry.ts'
import { columnName } from '../../runtime/core/fields.ts'
import { createAccount } from '../../runtime/platform/admin.ts'
import { startTestService, TEST_PEPPER, type TestService } from '../helpers/service.ts'
import { runCli } from '../helpers/cli.ts'

const resources = compileRegistry(registry)
const orgScoped = resources.filter((c) => c.decl.scope === 'org')
const [a, b] = await Promise.all([startTestService(t), startTestService(t, { seed: false })])
const dir = mkdtempSync(join(tmpdir(), 'orgscan-bundles-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

const envOf = (ts: TestService) => ({ ...process.env, DATABASE_URL: ts.location.databaseUrl, ORGSCAN_DATA_DIR: ts.location.dataDir, ORGSCAN_PEPPER: TEST_PEPPER })
const envA = envOf(a)
const envB = envOf(b)

const orgs = a.seed.orgs.filter((o) => o.scans > 0)
const formatOf = (i: number) => (i % 2 === 0 ? 'json' : 'ndjson')
const otherFormat = (f: string) => (f === 'json' ? 'ndjson' : 'json')
const accountB = new Map<string, string>()
for (const acc of a.seed.accounts) accountB.set(acc.id, (await createAccount(b.svc.db.sql, { name: acc.name, dailyLimit: 1e9, monthlyLimit: 1e9 })).id)

t.test('every scan of every org exports and imports into an empty database, oldest first', async (t) => {
  const scans = await a.svc.db.sql<{ id: string; org_id: string }[]>`SELECT id::text AS id, org_id FROM scans ORDER BY org_id, started_at, id`
  // Orgs side by side (each database's work is serialised on its connection anyway), each org's scans in order.
  await Promise.all(orgs.map(async (org, i) => {
    const format = formatOf(i)
    for (const s of scans.filter((x) => x.org_id === org.salesforceId)) {
      const file = join(dir, `${org.salesforceId}-${s.id}.${format}`)
      const ex = await runCli(['export', '--org', org.salesforceId, '--scan', s.id, '--format', format, '--out', file, '--json'], envA)
      t.equal(ex.code, 0, `export ${org.name} scan ${s.id}`, { stderr: ex.stderr })
      const im = await runCli(['import', '--account', accountB.get(org.accountId)!, file, '--json'], envB)
      t.equal(im.code, 0, `import ${org.name} scan ${s.id} (${format})`, { stderr: im.stderr })
      const exported = JSON.parse(ex.stdout)
      t.same(JSON.parse(im.stdout).counts, exported.counts, 'the import read every record the export wrote')
      const events = im.stderr.trim().split('\n').map((l) => JSON.parse(l))
      t.match(events.at(-1), { type: 'end', records: Object.values(exported.counts as Record<string, number>).reduce((x, y) => x + y, 0) }, 'progress ends with the record count')
    }
  }))
})

/**
 * The fields whose value is a scan's id (issues' scanId, the org's latestScanId: a column or expression `…scan_id`):
 * equal up to the ids each database gave the scans.
 */
const scanFields = (c: CompiledResource) => [...c.fields].filter(([n, spec]) => /scan_id\b/.test(spec.expr ?? columnName(n))).map(([n]) => n)

async function latestScan(ts: TestService, orgId: string): Promise<number> {
  const [r] = await ts.svc.db.sql<{ id: string }[]>`SELECT latest_scan_id::text AS id FROM orgs WHERE salesforce_id = ${orgId}`
  return Number(r.id)
}

/** A body with the scan-valued fields checked against `scanId` and replaced by a marker. */
function normalise(body: any, c: CompiledResource, scanId: number, problems: string[]): unknown {
  const fields = scanFields(c)
  if (!fields.length || !body?.data) return body
  for (const rec of Array.isArray(body.data) ? body.data : [body.data]) {
    for (const f of fields) {
      if (f in rec && rec[f] !== scanId) problems.push(`${c.name}.${f} is ${rec[f]}, not the scan read (${scanId})`)
      if (f in rec) rec[f] = '<scan>'
    }
  }
  return body
}

/** Every page of a list, following links.next. */
async function pages(ts: TestService, auth: string, path: string): Promise<Array<{ status: number; body: any }>> {
  const out = []
  for (let next: string | undefined = path; next; ) {
    const r = await ts.get(next, auth)
    out.push({ status: r.status, body: r.body })
    next = r.status === 200 ? r.body?.links?.next : undefined
  }
  return out
}

function idPath(c: CompiledResource, rec: Record<string, unknown>): string {
  const id = rec[c.decl.id!.field]
  return c.decl.id!.encoding === 'base64url' ? Buffer.from(String(id)).toString('base64url') : encodeURIComponent(String(id))
}

t.test('identical API answers for every org-scoped resource, list page and sampled record', async (t) => {
  for (const org of orgs) {
    const authA = await a.keyHeader(org.accountId)
    const authB = await b.keyHeader(accountB.get(org.accountId)!)
    const scanA = await latestScan(a, org.salesforceId)
    const scanB = await latestScan(b, org.salesforceId)
    const orgRes = resources.find((c) => c.decl.scope === 'account' && c.decl.id?.param === 'orgId')!
    const scanProblems: string[] = []
    const orgA = await a.get(`/v1/orgs/${org.salesforceId}`, authA)
    const orgB = await b.get(`/v1/orgs/${org.salesforceId}`, authB)
    t.equal(orgA.status, 200)
    t.strictSame(normalise(orgB.body, orgRes, scanB, scanProblems), normalise(orgA.body, orgRes, scanA, scanProblems), `${org.name}: the org record (summary, counts, scan history) is the same`)
    t.strictSame(scanProblems, [], `${org.name}: latest scan ids`)
    if (orgA.body.data.lastScanStatus === null) continue
    // The latest scan as exported: the records of a collection without a list (recommendations) are found there.
    const exported = readFileSync(join(dir, `${org.salesforceId}-${scanA}.${formatOf(orgs.indexOf(org))}`), 'utf8')
    const records = (name: string): Array<Record<string, unknown>> =>
      exported.startsWith('{"format"')
        ? exported.trim().split('\n').map((l) => JSON.parse(l)).filter((l) => l.resource === name).map((l) => l.record)
        : [JSON.parse(exported).data[name] ?? []].flat()

    const objects = (await pages(a, authA, `/v1/orgs/${org.salesforceId}/objects?limit=200`)).flatMap((p) => p.body.data as Array<{ id: number }>)
    for (const c of orgScoped) {
      const d = c.decl
      // A nested list (objects/{objectId}/fields) under three of its parents: its records are the parent list's too.
      const parents = d.parent ? [...new Set([objects[0], objects[objects.length >> 1], objects.at(-1)!])].map((o) => String(o.id)) : [undefined]
      const problems: string[] = []
      const answers = async (ts: TestService, auth: string, scanId: number) => {
        const got: unknown[] = []
        for (const parent of parents) {
          const base = `/v1/orgs/${org.salesforceId}/${parent ? d.path.replace(`{${d.parent!.param}}`, parent) : d.path}`
          if (d.kind === 'singleton') {
            const r = await ts.get(base, auth)
            got.push({ status: r.status, body: normalise(r.body, c, scanId, problems) })
            continue
          }
          if (!d.operations.list) {
            const all = records(c.name)
            for (const rec of new Set([all[0], all[all.length >> 1], all[all.length - 1]])) {
              const r = await ts.get(`${base}/${idPath(c, rec)}`, auth)
              got.push({ status: r.status, body: normalise(r.body, c, scanId, problems) })
            }
            continue
          }
          const queries = d.unpaged ? [''] : ['?limit=200']
          if (d.defaultFilter) queries.push(d.unpaged ? '?filter=' : '?limit=200&filter=')
          let all: Array<Record<string, unknown>> = []
          for (const q of queries) {
            const ps = await pages(ts, auth, base + q)
            got.push(...ps.map((p) => ({ status: p.status, body: normalise(p.body, c, scanId, problems) })))
            all = ps.flatMap((p) => p.body?.data ?? [])
          }
          if (d.operations.get && d.id && all.length) {
            for (const rec of new Set([all[0], all[all.length >> 1], all[all.length - 1]])) {
              const r = await ts.get(`${base}/${idPath(c, rec)}`, auth)
              got.push({ status: r.status, body: normalise(r.body, c, scanId, problems) })
            }
          }
        }
        return got
      }
      const [fromA, fromB] = await Promise.all([answers(a, authA, scanA), answers(b, authB, scanB)])
      t.ok(fromA.every((x: any) => x.status === 200), `${org.name} ${c.name}: every answer is 200`)
      t.strictSame(fromB, fromA, `${org.name} ${c.name}: ${fromA.length} answers identical`)
      t.strictSame(problems, [], `${org.name} ${c.name}: scan-valued fields name the scan read`)
    }
  }
})

t.test('both databases export the same bundle, in the other format too', async (t) => {
  for (const [i, org] of orgs.entries()) {
    const format = otherFormat(formatOf(i))
    const fa = join(dir, `a-${org.salesforceId}.${format}`)
    const fb = join(dir, `b-${org.salesforceId}.${format}`)
    t.equal((await runCli(['export', '--org', org.salesforceId.slice(0, 15), '--out', fa, '--format', format], envA)).code, 0)
    t.equal((await runCli(['export', '--org', org.salesforceId, '--out', fb, '--format', format], envB)).code, 0)
    t.ok(readFileSync(fa).equals(readFileSync(fb)), `${org.name}: ${format} exports are byte-identical`)
  }
})
