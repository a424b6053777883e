/**
 * Hot reads across processes (docs/adr/0031-response-cache-keyed-by-scan.md): two `orgscan serve` processes on one
 * PostgreSQL, with the production bounds (org state 1 s, keys and grants 5 s), caches warm. A scan imported by a third
 * process (as `orgscan import` does) is served by both within 1 s; a removed grant and a revoked key stop working on
 * both within 5 s (the bound when a notification is lost; with migration 006's notifications, at once). Needs a
 * PostgreSQL server: the embedded database belongs to one process.
 */
import { t } from '../helpers/file-test.ts'
import { readFileSync } from 'node:fs'
import { basic } from '../helpers/service.ts'
import { spawnServer, type ServerProcess } from '../helpers/server-process.ts'
import { createFreshPostgresDatabase } from '../helpers/test-db.ts'
import { servedPostgres } from '../helpers/served-postgres.ts'
import { compileRegistry } from '../../runtime/core/registry.ts'
import { registry } from '../../resources/index.ts'
import { createKey, createUser, grantOrgAccess, revokeKey } from '../../runtime/platform/admin.ts'
import { importScan, type ScanBundle } from '../../runtime/platform/import.ts'

const PG = process.env.TEST_DATABASE_URL

/** Polls `probe` until it holds; the milliseconds it took, or -1 after `maxMs`. */
async function until(probe: () => Promise<boolean>, maxMs: number): Promise<number> {
  const t0 = Date.now()
  while (Date.now() - t0 <= maxMs) {
    if (await probe()) return Date.now() - t0
    await new Promise((r) => setTimeout(r, 25))
  }
  return -1
}

t.test('changes reach every process within their bounds', { skip: PG ? false : 'needs TEST_DATABASE_URL (PostgreSQL): the embedded database belongs to one process' }, async (t) => {
  const pepper = 'hot-reads-pepper-0123456789abcdefghijk'
  const { sql, seed, env: served } = await servedPostgres(t, await createFreshPostgresDatabase(PG!), pepper)
  const resources = compileRegistry(registry)
  const org = seed.orgs.find((o) => o.large)!
  const key = await createKey(sql, pepper, org.accountId)
  const user = await createUser(sql, org.accountId, { email: 'hot@example.com', name: 'Hot' })
  await grantOrgAccess(sql, user.id, org.salesforceId)
  const userKey = await createKey(sql, pepper, org.accountId, { userId: user.id })
  const bundle = JSON.parse(readFileSync(new URL('../../examples/scan-bundle.json', import.meta.url), 'utf8')) as ScanBundle
  await importScan(sql, resources, org.accountId, bundle)

  // Production bounds (the defaults), not the tests' zero org-state time.
  const env = served({ ORGSCAN_AUTH_CACHE_MS: '5000', ORGSCAN_ORG_CACHE_MS: '1000' })
  const start = async () => {
    const p = await spawnServer(env)
    t.teardown(() => p.stop(0))
    return p
  }
  const procs = await Promise.all([start(), start()])
  const get = async (p: ServerProcess, path: string, authorization: string) => {
    const r = await fetch(p.url + path, { headers: { authorization } })
    return { status: r.status, body: r.status === 200 ? await r.json() : await r.text() }
  }
  const auth = basic(key.keyId, key.secret)
  const userAuth = basic(userKey.keyId, userKey.secret)
  const fields = `/v1/orgs/${bundle.org.salesforceId}/fields`
  const issues = `/v1/orgs/${org.salesforceId}/issues`
  for (const p of procs) {
    for (let i = 0; i < 3; i++) {
      t.equal((await get(p, fields, auth)).status, 200)
      t.equal((await get(p, issues, userAuth)).status, 200)
    }
  }
  const before = (await get(procs[0], fields, auth)).body.data.length

  // A new scan, imported by another process (this one, as `orgscan import` would be).
  const next = structuredClone(bundle)
  next.scan = { ...next.scan, startedAt: '2026-10-27T03:48:00Z', completedAt: '2026-10-27T03:52:00Z' }
  ;(next.data.fields as unknown[]).pop()
  await importScan(sql, resources, org.accountId, next)
  for (const [i, p] of procs.entries()) {
    const ms = await until(async () => (await get(p, fields, auth)).body.data.length === before - 1, 3000)
    t.ok(ms >= 0 && ms <= 1000, `process ${i + 1} serves the new scan within 1 s (${ms} ms)`)
  }

  // A removed grant.
  await sql`DELETE FROM user_org_access WHERE user_id = ${user.id}::bigint AND org_id = ${org.salesforceId}`
  for (const [i, p] of procs.entries()) {
    const ms = await until(async () => (await get(p, issues, userAuth)).status === 403, 8000)
    t.ok(ms >= 0 && ms <= 5000, `process ${i + 1}: the removed grant stops working within 5 s (${ms} ms)`)
  }
  t.equal((await get(procs[0], issues, auth)).status, 200, 'the account key still reads the org')

  // A revoked key.
  await revokeKey(sql, key.keyId)
  for (const [i, p] of procs.entries()) {
    const ms = await until(async () => (await get(p, fields, auth)).status === 401, 8000)
    t.ok(ms >= 0 && ms <= 5000, `process ${i + 1}: the revoked key stops working within 5 s (${ms} ms)`)
  }
})
