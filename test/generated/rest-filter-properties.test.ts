/**
 * No filter answers 5xx. Generated from the registry, through the real server: every filterable field of every
 * list × every RQL operator × values of every type — valid, wrong-typed, boundary and hostile — and random
 * combinations under and/or/not. Every answer is a 200 list envelope or a 400 in the error envelope with a code of the
 * error table and `parameter: "filter"`. (It caught in(isSandbox,true) answering 500.)
 */
import { t } from '../helpers/file-test.ts'
import fc from 'fast-check'
import { registry } from '../../resources/index.ts'
import { compileRegistry, type CompiledResource } from '../../runtime/core/registry.ts'
import { ERROR_CODES } from '../../runtime/core/errors.ts'
import type { FieldKind } from '../../runtime/core/fields.ts'
import { startTestService } from '../helpers/service.ts'
import { updateAccount } from '../../runtime/platform/admin.ts'

// Nothing here changes keys, orgs or grants: the production bounds of the key and org-state caches (the tests'
// default reads both on every request) leave the thousands of requests below to the filters.
const ts = await startTestService(t, { config: { authCacheMs: 5_000, cache: { maxBytes: 64 * 1024 * 1024, orgStateMs: 1_000 } } })
const org = ts.seed.orgs.find((o) => o.large)!
const auth = await ts.keyHeader(org.accountId)
// Thousands of requests: more than the default daily quota.
await updateAccount(ts.svc.db.sql, org.accountId, { dailyLimit: 1_000_000, monthlyLimit: 1_000_000 })
ts.svc.ctx.quota.invalidate?.(org.accountId)
const resources = compileRegistry(registry).filter((c) => c.decl.operations.list && c.decl.filterable?.length)
const objectId = (await ts.get(`/v1/orgs/${org.salesforceId}/objects?limit=1`, auth)).body.data[0].id as number

const OPS = ['eq', 'ne', 'lt', 'le', 'gt', 'ge', 'like', 'ilike', 'in', 'out', 'isNull', 'isNotNull'] as const

/** A value of each class for a field kind, as RQL literals. */
function valid(kind: FieldKind, values?: readonly string[]): string[] {
  switch (kind) {
    case 'int': return ['1', '0', '-1']
    case 'num': return ['1.5', '0', '-0.25']
    case 'bool': return ['true', 'false']
    case 'ts': return ['2024-01-31T10:00:00Z', '2024-01-31', "'2024-01-31T10:00:00+02:00'"]
    case 'date': return ['2024-01-31']
    case 'enum': return [values![0], `'${values![values!.length - 1]}'`]
    default: return ['a', "'x y'", '007']
  }
}
/** Each value exercises a different path: type inference, explicit types, conversion, range checks, escaping. */
const WRONG = ['abc', 'true', '1.5', "'2024-01-31T10:00:00Z'", 'null', 'number:5', 'date:2024-01-01']
const BOUNDARY = ['9007199254740992', '-9007199254740993', '1e309', "''", '0001-01-01', '9999-12-31T23:59:59.999Z', '2023-02-29', '10000-01-01']
const HOSTILE = ["'a\\'b'", '%00', '%', '*', "'%_\\\\'", '%F0%9F%98%80', `'${'x'.repeat(300)}'`, "'*a*b*c*d*e*f*g*'", '%E0%A4%A', '__proto__', "'); DROP TABLE fields; --"]

function path(c: CompiledResource): string {
  const p = c.decl.path.replace('{objectId}', String(objectId))
  return c.decl.scope === 'org' ? `/v1/orgs/${org.salesforceId}/${p}` : `/v1/${p}`
}

function expressions(field: string, kind: FieldKind, values: readonly string[] | undefined, full: boolean): string[] {
  const lits = full ? [...valid(kind, values), ...WRONG, ...BOUNDARY, ...HOSTILE] : valid(kind, values).slice(0, 1)
  const out: string[] = []
  for (const op of OPS) {
    if (op === 'isNull' || op === 'isNotNull') out.push(`${op}(${field})`)
    else if (op === 'in' || op === 'out') {
      out.push(`${op}(${field},${lits.slice(0, 2).join(',')})`, `${op}(${field},${lits[0]},null)`)
      for (const l of lits.slice(full ? 2 : 1)) out.push(`${op}(${field},${l})`)
    } else for (const l of lits) out.push(`${op}(${field},${l})`)
  }
  return out
}

const problems: string[] = []
let requests = 0

async function check(c: CompiledResource, filter: string): Promise<void> {
  requests++
  // Eight at once from one account: retried after Retry-After when one waits its turn past 1 s (a busy machine).
  const r = await ts.get(`${path(c)}?${c.decl.unpaged ? '' : 'limit=5&'}filter=${encodeURIComponent(filter)}`, auth, { retryBusy: true })
  const where = `${c.name}: ${filter.slice(0, 120)}`
  if (r.status === 200) {
    if (!Array.isArray(r.body?.data) || typeof r.body?.meta?.hasMore !== 'boolean') problems.push(`${where}: 200 without a list envelope`)
    return
  }
  if (r.status !== 400) return void problems.push(`${where}: ${r.status} ${r.text.slice(0, 200)}`)
  const e = r.body?.error
  const code = e?.code as keyof typeof ERROR_CODES
  if (!e || !(code in ERROR_CODES) || ERROR_CODES[code].status !== 400 || e.status !== 400) problems.push(`${where}: 400 outside the error table: ${r.text.slice(0, 200)}`)
  else if (e.parameter !== 'filter' && code !== 'invalid_parameter') problems.push(`${where}: 400 ${code} not pointing at the filter`)
}

/** Runs the checks with bounded concurrency. */
async function all(jobs: Array<() => Promise<void>>, concurrency = 8): Promise<void> {
  let next = 0
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < jobs.length) await jobs[next++]()
  }))
}

t.test('every filterable field × every operator × values of every type: never a 5xx', async (t) => {
  const fullKinds = new Set<FieldKind>()
  const jobs: Array<() => Promise<void>> = []
  for (const c of resources) {
    for (const field of c.decl.filterable!) {
      const spec = c.fields.get(field)!
      // The full catalogue of values once per field kind (what a value does depends on the kind); every other
      // field gets every operator with values of its kind.
      const full = !fullKinds.has(spec.kind)
      fullKinds.add(spec.kind)
      for (const f of expressions(field, spec.kind, spec.values, full)) jobs.push(() => check(c, f))
    }
  }
  await all(jobs)
  t.ok(requests > 4000, `${requests} filters sent`)
  t.same(problems, [], 'no 5xx, every 400 in the error table')
})

t.test('random and/or/not combinations: never a 5xx', async (t) => {
  problems.length = 0
  const resource = fc.constantFrom(...resources)
  const jobs: Array<() => Promise<void>> = []
  const samples = fc.sample(
    resource.chain((c) => {
      const leaf = fc.constantFrom(...c.decl.filterable!).chain((field) => {
        const spec = c.fields.get(field)!
        return fc.constantFrom(...expressions(field, spec.kind, spec.values, true))
      })
      const tree = fc.letrec((tie) => ({
        node: fc.oneof({ depthSize: 'small' }, leaf, fc.tuple(fc.constantFrom('and', 'or'), fc.array(tie('node'), { minLength: 1, maxLength: 3 })).map(([op, xs]) => `${op}(${xs.join(',')})`), tie('node').map((x) => `not(${x})`)),
      })).node as fc.Arbitrary<string>
      return fc.tuple(fc.constant(c), tree)
    }),
    { numRuns: 400, seed: 20261123 },
  )
  for (const [c, f] of samples) jobs.push(() => check(c, f))
  await all(jobs)
  t.same(problems, [], 'no 5xx')
})
