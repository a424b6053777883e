/**
 * Importing bundles (docs/import.md): hostile values of every field kind round-trip through import → API and
 * import → export (on PostgreSQL one run writes every table with COPY, so its text-format escaping is tested, and one
 * with INSERTs); what cannot be stored, broken NDJSON files and records the database refuses are listed and nothing is
 * written; progress is a bar on a terminal and lines otherwise; export's errors and its standard output.
 */
import { endFile, t } from '../helpers/file-test.ts'
import fc from 'fast-check'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough, Writable } from 'node:stream'
import { registry } from '../../resources/index.ts'
import { compileRegistry, type CompiledResource } from '../../runtime/core/registry.ts'
import { createAccount } from '../../runtime/platform/admin.ts'
import { fieldSchema, type FieldSpec } from '../../runtime/core/fields.ts'
import { importFile, importTargets, type ScanBundle } from '../../runtime/platform/import.ts'
import { exportScan } from '../../runtime/platform/bundle/export-scan.ts'
import { ndjsonLines, storedFields } from '../../runtime/platform/bundle/wire.ts'
import { checksum } from '../../runtime/core/org-id.ts'
import * as v from 'valibot'
import { startTestService, TEST_PEPPER } from '../helpers/service.ts'
import { runCli } from '../helpers/cli.ts'

const resources = compileRegistry(registry)
const targets = importTargets(resources)
const example = JSON.parse(readFileSync(new URL('../../examples/scan-bundle.json', import.meta.url), 'utf8')) as ScanBundle
// The properties below build their bundles from the example's records: a resource it lacks has nothing to build from.
const lacking = targets.filter((c) => example.data[c.name] === undefined).map((c) => c.name)
if (lacking.length > 0) {
  t.fail(`examples/scan-bundle.json has no records of ${lacking.join(', ')}: run npm run regen (it adds them)`)
  endFile()
}
const ts = await startTestService(t, { seed: false })
const sql = ts.svc.db.sql
const account = await createAccount(sql, { name: 'Importer', dailyLimit: 1e9, monthlyLimit: 1e9 })
const auth = await ts.keyHeader(account.id)
const env = { ...process.env, DATABASE_URL: ts.location.databaseUrl, ORGSCAN_DATA_DIR: ts.location.dataDir, ORGSCAN_PEPPER: TEST_PEPPER }
const copy = ts.svc.db.kind === 'postgres'
const dir = mkdtempSync(join(tmpdir(), 'orgscan-bundles-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const orgId = example.org.salesforceId
/** Records in the example bundle (a singleton's record counts as one), as the progress lines count them. */
const exampleRecords = Object.values(example.data).reduce<number>((n, x) => n + (Array.isArray(x) ? x.length : 1), 0)

/** An NDJSON bundle file of a bundle object; without its end line, or with other counts in it. */
function writeNdjson(file: string, b: ScanBundle, opts: { end?: boolean; counts?: Record<string, number> } = {}): void {
  const lines = [...ndjsonLines(b)]
  if (opts.end === false) lines.pop()
  else if (opts.counts) lines[lines.length - 1] = JSON.stringify({ end: true, counts: opts.counts })
  writeFileSync(file, lines.join('\n') + '\n')
}

const scanCount = async () => (await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM scans`)[0].n

// ---- hostile values -------------------------------------------------------------------------------------------

/** Text that COPY's text format, array literals and JSON must escape, and Unicode beyond the BMP. */
const hostileText = fc.oneof(
  fc.constantFrom('', ' ', 'NULL', '\\N', '\\.', '\\', '"', "'", '{}', '{"a","b"}', 'a,b', '\t', '\n', '\r\n', '\u2028', '😀', 'é\u0301'),
  fc
    .array(fc.oneof(fc.constantFrom('\\', '\t', '\n', '\r', '"', ',', '{', '}', '\\N', '\\t', ' ', '\u0001', '\u007f', '😀'), fc.string({ unit: 'grapheme', maxLength: 3 })), { maxLength: 8 })
    .map((parts) => parts.join('')),
)
const instant = fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true })

function arbitraryOf(spec: FieldSpec): fc.Arbitrary<unknown> {
  let base: fc.Arbitrary<unknown>
  switch (spec.kind) {
    case 'int': base = fc.oneof(fc.integer({ min: -1000, max: 1000 }), fc.constantFrom(Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 0)); break
    case 'num': base = fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(0.1, 1e21, 1e-7, 5e-324, -0, 123456789.125)); break
    case 'bool': base = fc.boolean(); break
    case 'text': base = hostileText; break
    case 'enum': base = fc.constantFrom(...spec.values!); break
    // Fractions of a second and offsets other than Z: the API serves seconds in UTC, an export the exact instant.
    case 'ts': base = fc.tuple(instant, fc.boolean()).map(([d, z]) => (z ? d.toISOString() : d.toISOString().replace('Z', '+00:00'))); break
    case 'date': base = instant.map((d) => d.toISOString().slice(0, 10)); break
    case 'textArray': base = fc.array(hostileText, { maxLength: 4 }); break
    case 'json': base = fc.constant(undefined); break // the example's value with hostile text in it (below)
  }
  return spec.nullable ? fc.option(base, { nil: null, freq: 5 }) : base
}

/** A JSON value with its text leaves replaced by hostile text, kept only where the field's schema still accepts it. */
function hostileJson(g: fc.GeneratorValue, spec: FieldSpec, value: unknown): unknown {
  const swap = (x: unknown): unknown =>
    typeof x === 'string' ? g(() => hostileText) : Array.isArray(x) ? x.map(swap) : x && typeof x === 'object' ? Object.fromEntries(Object.entries(x).map(([k, y]) => [k, swap(y)])) : x
  const candidate = swap(value)
  return v.safeParse(fieldSchema(spec), candidate).success ? candidate : value
}

/** `n` records per resource, from the example's, with hostile values and unique keys. */
let hostileRuns = 0
function hostileBundle(g: fc.GeneratorValue, n: number): ScanBundle {
  const data: Record<string, unknown> = {}
  for (const c of targets) {
    const base = example.data[c.name]
    const list = (Array.isArray(base) ? base : [base]) as Array<Record<string, unknown>>
    const out = []
    for (let i = 0; i < (c.decl.kind === 'singleton' ? 1 : n); i++) {
      const rec: Record<string, unknown> = {}
      for (const f of storedFields(c)) {
        const spec = c.fields.get(f)!
        const from = list[i % list.length][f]
        rec[f] = spec.kind === 'json' ? hostileJson(g, spec, from) : g(() => arbitraryOf(spec))
      }
      const key = c.tiebreak
      if (key) rec[key] = c.fields.get(key)!.kind === 'int' ? i + 1 : `${String(rec[key] ?? '')}#${i}`
      out.push(rec)
    }
    data[c.name] = c.decl.kind === 'singleton' ? out[0] : out
  }
  // A scan of its own (another start time): a bundle of a scan the org has already is not imported twice.
  hostileRuns++
  return { org: { ...example.org, name: `${g(() => hostileText)}.` }, scan: { ...example.scan, startedAt: new Date(Date.parse(example.scan.startedAt) + hostileRuns * 60_000).toISOString() }, data }
}

/** What the API serves of a stored value: timestamps to the second, in UTC. */
function served(spec: FieldSpec, x: unknown): unknown {
  if (spec.kind === 'ts' && typeof x === 'string') return new Date(Math.floor(Date.parse(x) / 1000) * 1000).toISOString().replace('.000Z', 'Z')
  return x
}

function idPath(c: CompiledResource, rec: Record<string, unknown>): string {
  const id = String(rec[c.decl.id!.field])
  return c.decl.id!.encoding === 'base64url' ? Buffer.from(id).toString('base64url') : encodeURIComponent(id)
}

/** A key in an assertion's name: hostile text would break the TAP stream (a newline, a `#`). */
const name = (k: string) => JSON.stringify(k).slice(0, 24).replace(/[#\\\u2028\u2029]/g, '_')

function byKey(c: CompiledResource, records: Array<Record<string, unknown>>): Map<string, Record<string, unknown>> {
  return new Map(records.map((r) => [String(c.tiebreak ? r[c.tiebreak] : ''), r]))
}

t.test('hostile values of every field kind round-trip: import → API, and import → export', async (t) => {
  let run = 0
  await fc.assert(
    fc.asyncProperty(fc.gen(), async (g) => {
      const bundle = hostileBundle(g, 12)
      // Odd runs: NDJSON, every table with COPY on PostgreSQL; even runs: JSON with INSERTs (as the embedded database).
      const odd = run++ % 2 === 0
      const file = join(dir, `hostile-${run}.${odd ? 'ndjson' : 'json'}`)
      if (odd) writeNdjson(file, bundle)
      else writeFileSync(file, JSON.stringify(bundle))
      await importFile(sql, resources, account.id, file, { copy: copy && odd, copyFrom: 0 })

      const org = await ts.get(`/v1/orgs/${orgId}`, auth)
      t.equal(org.body.data.name, bundle.org.name, 'org name')
      for (const c of targets) {
        const d = c.decl
        const input = d.kind === 'singleton' ? [bundle.data[c.name] as Record<string, unknown>] : (bundle.data[c.name] as Array<Record<string, unknown>>)
        const base = `/v1/orgs/${orgId}/${d.path}`
        // A list (unfiltered), a singleton, or — a collection without a list — each record by its id.
        const paths = d.operations.list ? [`${base}${d.unpaged ? '?filter=' : '?limit=200&filter='}`] : d.kind === 'singleton' ? [base] : input.map((rec) => `${base}/${idPath(c, rec)}`)
        const answers = []
        for (const path of paths) {
          const r = await ts.get(path, auth)
          t.equal(r.status, 200, path)
          answers.push(...[r.body?.data].flat())
        }
        const got = byKey(c, answers)
        for (const [k, rec] of byKey(c, input)) {
          const expected = Object.fromEntries(storedFields(c).map((f) => [f, served(c.fields.get(f)!, rec[f])]))
          const actual = Object.fromEntries(storedFields(c).map((f) => [f, got.get(k)?.[f]]))
          t.same(actual, expected, `${c.name} ${name(k)}: as imported`)
        }
      }

      let text = ''
      await exportScan(sql, resources, { orgId, format: 'ndjson' }, (chunk) => void (text += chunk))
      const lines = text.trim().split('\n').map((l) => JSON.parse(l))
      for (const c of targets) {
        const input = [bundle.data[c.name]].flat() as Array<Record<string, unknown>>
        const exported = byKey(c, lines.filter((l) => l.resource === c.name).map((l) => l.record))
        t.equal(exported.size, input.length, `${c.name}: every record exported`)
        for (const [k, rec] of byKey(c, input)) {
          const norm = (r: Record<string, unknown> | undefined) =>
            Object.fromEntries(storedFields(c).map((f) => [f, c.fields.get(f)!.kind === 'ts' && typeof r?.[f] === 'string' ? Date.parse(r[f] as string) : r?.[f]]))
          t.same(norm(exported.get(k)), norm(rec), `${c.name} ${name(k)}: exported exactly`)
        }
      }
    }),
    { numRuns: 2 },
  )
})

// ---- refusals -------------------------------------------------------------------------------------------------

t.test('what cannot be stored is listed, and nothing is written', async (t) => {
  const before = await scanCount()
  const bad = structuredClone(example) as { data: Record<string, Array<Record<string, unknown>>> }
  bad.data.fields[0].label = 'nul \u0000 inside'
  bad.data.connectedApps[1].oauthScopes = ['api', 'lone \ud800 surrogate']
  bad.data.objects[0].recordCount = 2 ** 60
  bad.data.objects[1].recordCount = 123456789
  const file = join(dir, 'unstorable.ndjson')
  writeNdjson(file, bad as unknown as ScanBundle)
  writeFileSync(file, readFileSync(file, 'utf8').replace('"recordCount":123456789', '"recordCount":1e999'))
  const r = await runCli(['import', '--account', account.id, file], env)
  t.equal(r.code, 1)
  t.match(r.stderr, /\norgscan: The scan bundle has 4 problems; nothing was imported\.\n/)
  t.match(r.stderr, /\n {2}line \d+ \(fields\) \/record\/label: label must not contain the NUL character\n/)
  t.match(r.stderr, /\n {2}line \d+ \(connectedApps\) \/record\/oauthScopes\/1: oauthScopes\[1\] must be well-formed Unicode \(it holds half of a surrogate pair\)\n/)
  t.match(r.stderr, /\n {2}line \d+ \(objects\) \/record\/recordCount: recordCount must be a whole number between -9007199254740991 and 9007199254740991 \(got 1152921504606847000\)\n/)
  t.match(r.stderr, /\n {2}line \d+ \(objects\) \/record\/recordCount: recordCount must be a finite number \(got a number too large to store\)\n/)
  t.equal(await scanCount(), before, 'no scan was written')
})

t.test('broken NDJSON files are refused with every problem listed', async (t) => {
  const before = await scanCount()
  const cases: Array<[string, (f: string) => void, RegExp[]]> = [
    ['truncated', (f) => writeNdjson(f, example, { end: false }), [/\n {2}the end line \{"end":true,"counts":\{…\}\} is missing after line \d+: the file is truncated\n/]],
    [
      'counts differ',
      (f) => writeNdjson(f, example, { counts: { fields: 3, nothing: 1 } }),
      [/line \d+ \/counts\/fields: counts says 3 fields records, the file holds 2\n/, /line \d+ \/counts\/nothing: nothing is not a resource\n/, /line \d+ \/counts: counts says nothing of connectedApps, the file holds 2 records\n/],
    ],
    [
      'bad lines',
      (f) => {
        writeNdjson(f, example)
        const lines = readFileSync(f, 'utf8').split('\n')
        lines.splice(2, 0, '{not json', JSON.stringify({ resource: 'noSuchThing', record: {} }), JSON.stringify({ resource: 'cloudUsage', record: example.data.cloudUsage }), JSON.stringify({ what: 1 }))
        lines.push(JSON.stringify({ resource: 'fields', record: {} }))
        writeFileSync(f, lines.join('\n'))
      },
      [
        /\n {2}line 3: the line is not JSON: Expected property name or '\}' \(column 2\)\n/,
        /\n {2}line 4 \/resource: noSuchThing is not a resource \(the resources are listed in docs\/reference\/rest\.md\)\n/,
        /\n {2}line 6: each line after the header is a record \{"resource":…,"record":…\}, and the last is the end line \{"end":true,"counts":\{…\}\}\n/,
        /\n {2}line \d+ \(cloudUsage\) \/record: cloudUsage holds one record per bundle; the first is at line 5 \(cloudUsage\) \/record\n/,
        /\n {2}line \d+: nothing may follow the end line \(line \d+\)\n/,
      ],
    ],
    ['another version', (f) => writeFileSync(f, readFileSync(join(dir, 'truncated.ndjson'), 'utf8').replace('"version":1', '"version":2')), [/\n {2}line 1 \/version: version 2 is not supported: this orgscan reads version 1\n/]],
    [
      'a header over 1 MB',
      (f) => writeFileSync(f, readFileSync(join(dir, 'truncated.ndjson'), 'utf8').replace('"version":1', `"version":1,"pad":"${'x'.repeat(1_200_000)}"`)),
      [/\n {2}line 1 \/pad: pad is not part of the header: it has format, version, org and scan\n/],
    ],
    ['a broken header over 1 MB', (f) => writeFileSync(f, `{"format":"orgscan-scan-bundle+ndjson","version":1,"org":"${'x'.repeat(1_200_000)}\n`), [/\n {2}line 1: this is not the header of an NDJSON bundle/]],
  ]
  for (const [name, make, expected] of cases) {
    const file = join(dir, `${name.replace(/ /g, '-')}.ndjson`)
    make(file)
    const r = await runCli(['import', '--account', account.id, file], env)
    t.equal(r.code, 1, name)
    for (const re of expected) t.match(r.stderr, re, `${name}: ${re}`)
  }
  t.equal(await scanCount(), before, 'no scan was written')
})

t.test('a record the database refuses is named, and nothing is written', async (t) => {
  // What the checks let through and the database refuses: a constraint of this test's own (the checks catch
  // everything the schema refuses, a second record with the same id included).
  await sql`ALTER TABLE connected_apps ADD CONSTRAINT refuse_in_test CHECK (user_count <> 424242)`
  t.teardown(() => sql`ALTER TABLE connected_apps DROP CONSTRAINT refuse_in_test`.then(() => undefined))
  const before = await scanCount()
  const bad = structuredClone(example) as { data: Record<string, Array<Record<string, unknown>>> }
  bad.data.connectedApps[1].userCount = 424242
  const file = join(dir, 'refused.json')
  writeFileSync(file, JSON.stringify(bad))
  const err = await importFile(sql, resources, account.id, file, { copy, copyFrom: 0 }).catch((e: Error) => e)
  t.match(String(err), copy ? /The database refused record 2 of connectedApps: new row .* violates check constraint "refuse_in_test"/ : /The database refused connectedApps: new row .* violates check constraint "refuse_in_test"/)
  t.equal(await scanCount(), before, 'no scan was written')
})

t.test('what the format checks let through is refused: a wrong checksum, an impossible date, bytes not UTF-8, huge text, no such account', async (t) => {
  const before = await scanCount()
  const refuse = async (name: string, bundle: unknown, expected: RegExp, opts: { raw?: Buffer; account?: string } = {}) => {
    const file = join(dir, `${name.replace(/ /g, '-')}.json`)
    writeFileSync(file, opts.raw ?? JSON.stringify(bundle))
    const err = await importFile(sql, resources, opts.account ?? account.id, file, { copy, copyFrom: 0 }).catch((e: Error) => e)
    t.match(String(err), expected, name)
  }
  const id = (x: string) => ({ ...example, org: { ...example.org, salesforceId: x } })
  await refuse('wrong checksum', id(orgId.slice(0, 15) + 'ZZZ'), /\n {2}\/org\/salesforceId: salesforceId has a checksum \(its last 3 characters\) that does not match its first 15 \(got "00D8a00000ExAmPZZZ"\)$/)
  await refuse('feb 30', { ...example, scan: { ...example.scan, startedAt: '2026-02-30T00:00:00Z' } }, /\n {2}\/scan\/startedAt: startedAt must be a real calendar date \(years 1–9999\) \(got "2026-02-30T00:00:00Z"\)$/)
  await refuse('year 0', { ...example, scan: { ...example.scan, startedAt: '0000-01-01T00:00:00Z' } }, /\n {2}\/scan\/startedAt: startedAt must be a real calendar date \(years 1–9999\) \(got "0000-01-01T00:00:00Z"\)$/)
  const record = structuredClone(example) as { data: Record<string, Array<Record<string, unknown>>> }
  record.data.fields[0].label = 'x'.repeat(1_000_001)
  await refuse('huge text', record, /\n {2}\/data\/fields\/0\/label: label must have at most 1,000,000 characters \(got 1,000,001\)$/)
  const text = JSON.stringify(example)
  const i = text.indexOf(example.org.name)
  await refuse('not utf-8', undefined, /not valid UTF-8/, { raw: Buffer.concat([Buffer.from(text.slice(0, i)), Buffer.from([0xff, 0xfe]), Buffer.from(text.slice(i))]) })
  await refuse('no account', example, /No account with id 999999\./, { account: '999999' })
  const dev = await importFile(sql, resources, account.id, '/dev/zero', { copy, copyFrom: 0 }).catch((e: Error) => e)
  t.match(String(dev), /not a regular file/, 'a device is refused before it is read')
  t.equal(await scanCount(), before, 'no scan was written')

  // The checksum in lower case is the same org: stored in the canonical form, reachable by its path.
  const lower = join(dir, 'lower-checksum.json')
  writeFileSync(lower, JSON.stringify(id(orgId.slice(0, 15) + orgId.slice(15).toLowerCase())))
  const done = await importFile(sql, resources, account.id, lower, { copy, copyFrom: 0 })
  t.ok(done.scanId)
  const orgs = (await ts.get('/v1/orgs?limit=200', auth)).body.data as Array<{ salesforceId: string }>
  t.same(orgs.filter((o) => o.salesforceId.toUpperCase() === orgId.toUpperCase()).map((o) => o.salesforceId), [orgId], 'one org, in its canonical form')
  const bom = join(dir, 'bom.json')
  writeFileSync(bom, '\uFEFF' + JSON.stringify(example))
  t.match(await importFile(sql, resources, account.id, bom, { copy, copyFrom: 0, again: true }), { scanId: /^\d+$/, counts: { fields: 2 } }, 'a byte-order mark before JSON is accepted, as before NDJSON')
  const bomNdjson = join(dir, 'bom.ndjson')
  writeNdjson(bomNdjson, example)
  writeFileSync(bomNdjson, '\uFEFF' + readFileSync(bomNdjson, 'utf8'))
  t.match(await importFile(sql, resources, account.id, bomNdjson, { copy, copyFrom: 0, again: true }), { scanId: /^\d+$/, counts: { fields: 2 } }, 'and before NDJSON')
})

t.test('a scan the org already has is not imported twice (a retry is safe); --again imports it anyway', async (t) => {
  const own = (minutes: number, status = example.scan.status) => ({ ...example, scan: { ...example.scan, status, startedAt: new Date(Date.parse('2030-01-01T00:00:00Z') + minutes * 60_000).toISOString() } })
  const file = join(dir, 'retry.json')
  writeFileSync(file, JSON.stringify(own(1)))
  const first = await importFile(sql, resources, account.id, file, { copy, copyFrom: 0 })
  t.equal(first.alreadyImported, undefined)
  const before = await scanCount()
  const again = await importFile(sql, resources, account.id, file, { copy, copyFrom: 0 })
  t.same(again, { scanId: first.scanId, orgId, counts: {}, alreadyImported: true }, 'the second import names the scan the org has')
  t.equal(await scanCount(), before, 'and writes nothing')
  const cli = await runCli(['import', '--account', account.id, file, '--json'], env)
  t.equal(cli.code, 0, 'the CLI exits 0')
  t.same(JSON.parse(cli.stdout), { scanId: first.scanId, orgId, counts: {}, alreadyImported: true })
  const text = await runCli(['import', '--account', account.id, file], env)
  t.equal(text.stdout.trim(), `org ${orgId} already has this scan (scan ${first.scanId}: the same start time and status); nothing written. --again imports it as another scan.`)
  const broken = structuredClone(own(1)) as { data: Record<string, Array<Record<string, unknown>>> }
  broken.data.fields[0].label = 42
  writeFileSync(join(dir, 'retry-broken.json'), JSON.stringify(broken))
  await t.rejects(importFile(sql, resources, account.id, join(dir, 'retry-broken.json'), { copy, copyFrom: 0 }), { message: /^The scan bundle has 1 problem; nothing was imported\.\n {2}\/data\/fields\/0\/label: label must be text \(got 42\)$/ }, 'a broken bundle of that scan is still refused with its problems')
  t.equal(await scanCount(), before)

  writeFileSync(join(dir, 'retry-failed.json'), JSON.stringify({ ...own(1, 'failed'), data: {} }))
  const failed = await importFile(sql, resources, account.id, join(dir, 'retry-failed.json'), { copy, copyFrom: 0 })
  t.not(failed.scanId, first.scanId, 'the same start time with another status is another scan')
  const forced = await runCli(['import', '--account', account.id, file, '--again', '--json'], env)
  t.equal(forced.code, 0, forced.stderr)
  const second = JSON.parse(forced.stdout)
  t.not(second.scanId, first.scanId, '--again imports it as another scan')
  t.equal(second.counts.fields, 2)
  t.equal((await ts.get(`/v1/orgs/${orgId}`, auth)).body.data.latestScanId, Number(second.scanId), 'which is now the one served')

  // Two imports of one new scan at once, of a known org and of an org seen for the first time: the org's row orders
  // them, the second finds the first's scan.
  const newOrg = { ...own(2), org: { ...example.org, salesforceId: '00D8a00000RaCeX' + checksum('00D8a00000RaCeX') } }
  for (const [name, bundle] of [['a known org', own(2)], ['a new org', newOrg]] as const) {
    writeFileSync(join(dir, 'race.json'), JSON.stringify(bundle))
    const both = await Promise.all([0, 1].map(() => importFile(sql, resources, account.id, join(dir, 'race.json'), { copy, copyFrom: 0 })))
    t.same(both.map((r) => r.alreadyImported === true).sort(), [false, true], `${name}: one imports, the other finds it`)
    t.equal(both[0].scanId, both[1].scanId)
  }
  // Two accounts importing one new org at once: the second finds it is the first's, and writes nothing.
  const rival = await createAccount(sql, { name: 'Rival', dailyLimit: 10, monthlyLimit: 10 })
  const contested = { ...own(3), org: { ...example.org, salesforceId: '00D8a00000CoNtE' + checksum('00D8a00000CoNtE') } }
  writeFileSync(join(dir, 'contested.json'), JSON.stringify(contested))
  const scansBefore = await scanCount()
  const outcomes = await Promise.allSettled([account.id, rival.id].map((a) => importFile(sql, resources, a, join(dir, 'contested.json'), { copy, copyFrom: 0 })))
  t.same(outcomes.map((o) => o.status).sort(), ['fulfilled', 'rejected'], 'one account gets the org')
  t.match(String((outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult).reason), /belongs to another account/, 'the other is refused')
  t.equal(await scanCount(), scansBefore + 1, 'and one scan was written')
})

// ---- progress, export -----------------------------------------------------------------------------------------

t.test('progress: a line per resource, a bar on a terminal, JSON events with --json', async (t) => {
  const file = join(dir, 'example.json')
  writeFileSync(file, JSON.stringify(example))
  const plain = await runCli(['import', '--account', account.id, file], env)
  t.equal(plain.code, 0, 'exit 0', { stderr: plain.stderr })
  t.match(plain.stderr, new RegExp(`^importing org ${orgId} \\(json, ${exampleRecords} records, [\\d.]+ MB\\)\n {2}connectedApps: 2 records\n`))
  t.match(plain.stderr, new RegExp(`\n {2}cloudUsage: 1 record\n[^]*\ndone: ${exampleRecords} records in [\\d.]+ s\n$`))
  let drawn = ''
  const bar = await runCli(['export', '--org', orgId, '--out', join(dir, 'bar.ndjson')], env, { terminal: { write: (s) => void (drawn += s), columns: 100 } })
  t.equal(bar.code, 0, 'exit 0', { stderr: bar.stderr })
  t.match(drawn, new RegExp(`^exporting org ${orgId} scan \\d+ \\(ndjson, ${exampleRecords} records\\)\n`))
  t.match(drawn, /\r\x1b\[K\[#+-*\] +\d+% +\w+ \d+ +\d+ records/, 'a bar redrawn in place')
  t.match(drawn, new RegExp(`\r\x1b\\[Kdone: ${exampleRecords} records in [\\d.]+ s\n$`))
  const json = await runCli(['import', '--account', account.id, join(dir, 'bar.ndjson'), '--json'], env)
  t.equal(json.code, 0, 'exit 0', { stderr: json.stderr })
  const events = json.stderr.trim().split('\n').map((l) => JSON.parse(l))
  t.match(events[0], { type: 'start', op: 'import', format: 'ndjson', orgId })
  t.match(events.at(-1), { type: 'end', records: exampleRecords })
})

t.test('export: a standard output that fails while the command waits for it to drain (a closed pipe)', async (t) => {
  const broken = new Writable({
    highWaterMark: 1,
    write: (_chunk, _encoding, done) => setImmediate(() => done(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }))),
  })
  const r = await runCli(['export', '--org', orgId, '--format', 'ndjson'], env, { stdout: broken })
  t.equal(r.code, 1, 'exit 1')
  t.match(r.stderr, /\norgscan: Cannot write standard output: write EPIPE\n$/, 'the reason, as the last line')
})

t.test('export: to standard output, and its errors', async (t) => {
  const out = new PassThrough()
  let text = ''
  out.on('data', (d) => (text += d))
  const r = await runCli(['export', '--org', orgId.slice(0, 15), '--json'], env, { stdout: out })
  t.equal(r.code, 0, 'exit 0', { stderr: r.stderr })
  const bundle = JSON.parse(text)
  t.equal(bundle.org.salesforceId, orgId, 'a JSON bundle on stdout')
  t.same(Object.keys(bundle.data), targets.map((c) => c.name), 'every resource')
  t.match(JSON.parse(r.stderr.trim().split('\n').at(-1)!), { orgId, format: 'json' }, 'the result on stderr')

  const failed = { ...example, org: { ...example.org, salesforceId: '00D8a00000ExAmQEAV', name: 'Failed Corp' }, scan: { ...example.scan, status: 'failed', score: null }, data: {} }
  const file = join(dir, 'failed.json')
  writeFileSync(file, JSON.stringify(failed))
  t.equal((await runCli(['import', '--account', account.id, file], env)).code, 0)
  const none = await runCli(['export', '--org', '00D8a00000ExAmQEAV'], env)
  t.equal(none.code, 1)
  t.match(none.stderr, /^orgscan: Org 00D8a00000ExAmQEAV has no completed scan to export; name a scan with --scan ID\.\n$/)
  const [s] = await sql<{ id: string }[]>`SELECT id::text AS id FROM scans WHERE org_id = '00D8a00000ExAmQEAV'`
  const scan = await runCli(['export', '--org', '00D8a00000ExAmQEAV', '--scan', s.id, '--out', join(dir, 'failed-again.json')], env)
  t.equal(scan.code, 0, 'exit 0', { stderr: scan.stderr })
  t.match(JSON.parse(readFileSync(join(dir, 'failed-again.json'), 'utf8')), { scan: { status: 'failed' } }, 'a failed scan exports with its status')
  const other = await runCli(['export', '--org', orgId, '--scan', s.id], env)
  t.match(other.stderr, new RegExp(`^orgscan: Org ${orgId} has no scan ${s.id}\\.`), 'a scan of another org')
  const unknown = await runCli(['export', '--org', '00D000000000001'], env)
  t.match(unknown.stderr, /^orgscan: No org 00D000000000001EAA\./)
  const usage = await runCli(['export', '--org', orgId, '--format', 'xml'], env)
  t.equal(usage.code, 2)
  t.match(usage.stderr, /--format takes json or ndjson/)
})
