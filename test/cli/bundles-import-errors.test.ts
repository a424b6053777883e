/**
 * What `orgscan import` tells a person about a bundle it refuses (docs/import.md "Import",
 * docs/adr/0170-import-errors-for-people.md), asserted as the command prints it, for a JSON and an NDJSON bundle
 * each: every problem with its place (a JSON pointer; in NDJSON the line and the pointer within it) and a sentence made
 * from the field declarations; an org or records pasted from the API's answers import, their computed values ignored
 * with a note; a duplicate id names both places; a bundle with thousands of problems lists the first 100 and counts
 * the rest.
 */
import type { Test } from 'tap'
import { t } from '../helpers/file-test.ts'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { registry } from '../../resources/index.ts'
import { compileRegistry } from '../../runtime/core/registry.ts'
import { createAccount } from '../../runtime/platform/admin.ts'
import { importFile, type ScanBundle } from '../../runtime/platform/import.ts'
import { ndjsonLines } from '../../runtime/platform/bundle/wire.ts'
import { startTestService, TEST_PEPPER } from '../helpers/service.ts'
import { runCli } from '../helpers/cli.ts'

const resources = compileRegistry(registry)
const example = JSON.parse(readFileSync(new URL('../../examples/scan-bundle.json', import.meta.url), 'utf8')) as ScanBundle
const ts = await startTestService(t, { seed: false })
const sql = ts.svc.db.sql
const account = await createAccount(sql, { name: 'Importer', dailyLimit: 1e9, monthlyLimit: 1e9 })
const auth = await ts.keyHeader(account.id)
const env = { ...process.env, DATABASE_URL: ts.location.databaseUrl, ORGSCAN_DATA_DIR: ts.location.dataDir, ORGSCAN_PEPPER: TEST_PEPPER }
const dir = mkdtempSync(join(tmpdir(), 'orgscan-import-errors-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const orgId = example.org.salesforceId
const scanCount = async () => (await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM scans`)[0].n

type Format = 'json' | 'ndjson'
const FORMATS: Format[] = ['json', 'ndjson']
type Bundle = { org: Record<string, unknown>; scan: Record<string, unknown>; data: Record<string, unknown> }
/** A copy of the example bundle to spoil (records as plain objects). */
const copy = () => structuredClone(example) as unknown as Bundle & { data: Record<string, Array<Record<string, unknown>>> }

let files = 0
/** Writes `bundle` as a file of `format` (NDJSON: one line per record, in the order of `data`). */
function write(bundle: unknown, format: Format): string {
  const file = join(dir, `bundle-${++files}.${format}`)
  writeFileSync(file, format === 'json' ? JSON.stringify(bundle) : [...ndjsonLines(bundle as Bundle)].join('\n') + '\n')
  return file
}

/**
 * Where a JSON pointer into the bundle object is in a file of `format`: the same pointer in a JSON bundle; in an
 * NDJSON bundle the line (the header is line 1, then the records in the order of `data`) and the pointer within it.
 */
function where(format: Format, bundle: Bundle, pointer: string): { line?: number; resource?: string; pointer: string } {
  if (format === 'json') return { pointer }
  const m = /^\/data\/([^/]+)(.*)$/.exec(pointer)
  if (!m) return { line: 1, pointer }
  let line = 2
  for (const [name, records] of Object.entries(bundle.data)) {
    if (name === m[1]) {
      if (!Array.isArray(records)) return { line, resource: name, pointer: `/record${m[2]}` }
      const [, index, rest] = /^\/(\d+)(.*)$/.exec(m[2])!
      return { line: line + Number(index), resource: name, pointer: `/record${rest}` }
    }
    line += Array.isArray(records) ? records.length : 1
  }
  throw new Error(`no ${m[1]} in the bundle`)
}

/** The place as the command prints it: `/data/fields/1/type`, or `line 7 (fields) /record/type`. */
function at(format: Format, bundle: Bundle, pointer: string): string {
  const w = where(format, bundle, pointer)
  return w.line === undefined ? w.pointer : `line ${w.line}${w.resource ? ` (${w.resource})` : ''} ${w.pointer}`
}

/** What the command printed from its error on: `orgscan: …` and the lines after it. */
function errorOf(stderr: string): string[] {
  const lines = stderr.trimEnd().split('\n')
  return lines.slice(lines.findIndex((l) => l.startsWith('orgscan: ')))
}

/** Imports `bundle` as `format` with the command; expects it refused with exactly `expected` and nothing written. */
async function refused(t: Test, format: Format, bundle: unknown, expected: string[]): Promise<void> {
  const before = await scanCount()
  const r = await runCli(['import', '--account', account.id, write(bundle, format)], env)
  t.equal(r.code, 1, `${format}: exit 1`)
  t.same(errorOf(r.stderr), expected, `${format}: every problem, each with its place`)
  t.equal(await scanCount(), before, `${format}: nothing written`)
}

await importFile(sql, resources, account.id, write(example, 'json'), { copy: false })

t.test('an org and records pasted from the API import; what the service computes is ignored with a note', async (t) => {
  const org = (await ts.get(`/v1/orgs/${orgId}`, auth)).body.data
  t.ok(org.lastScanDate && org.resourceCounts, 'the answer holds computed values')
  const limits = (await ts.get(`/v1/orgs/${orgId}/orgLimits`, auth)).body.data
  const licenses = (await ts.get(`/v1/orgs/${orgId}/licenseUsages?limit=200`, auth)).body.data
  t.equal(limits.length, 2)
  t.equal(licenses.length, 2)
  let minute = 0
  for (const format of FORMATS) {
    const startedAt = new Date(Date.parse('2031-01-01T00:00:00Z') + ++minute * 60_000).toISOString()
    const bundle: Bundle = { org, scan: { ...example.scan, startedAt }, data: { ...example.data, orgLimits: limits, licenseUsages: licenses } }
    const r = await runCli(['import', '--account', account.id, write(bundle, format)], env)
    t.equal(r.code, 0, `${format}: exit 0`, { stderr: r.stderr })
    t.match(r.stdout, new RegExp(`^imported scan \\d+ of org ${orgId}\\n$`))
    const lines = r.stderr.trimEnd().split('\n')
    t.same(lines.slice(lines.findIndex((l) => l.startsWith('note: '))), [
      'note: the bundle holds values the service computes, which an import does not take; they were ignored (leave them out):',
      `  ${at(format, bundle, '/org')}: lastScanDate, lastScanStatus, scanCount, score, latestScanId, issueCounts, resourceCounts`,
      `  ${at(format, bundle, '/data/orgLimits/0')} and 1 more orgLimits record: used, percentUsed`,
      `  ${at(format, bundle, '/data/licenseUsages/0')} and 1 more licenseUsages record: remaining`,
    ], `${format}: the note, as its last lines`)
    const served = (await ts.get(`/v1/orgs/${orgId}/orgLimits`, auth)).body.data
    t.same(served, limits, `${format}: the records serve as they were pasted`)

    const again = await runCli(['import', '--account', account.id, write(bundle, format), '--json'], env)
    t.equal(again.code, 0)
    t.same(JSON.parse(again.stdout).ignored, [
      { ...where(format, bundle, '/org'), fields: ['lastScanDate', 'lastScanStatus', 'scanCount', 'score', 'latestScanId', 'issueCounts', 'resourceCounts'], records: 1 },
      { ...where(format, bundle, '/data/orgLimits/0'), fields: ['used', 'percentUsed'], records: 2 },
      { ...where(format, bundle, '/data/licenseUsages/0'), fields: ['remaining'], records: 2 },
    ], `${format}: --json lists them`)

    // Whole answers, envelope and all, where the org and a record belong.
    const record = (await ts.get(`/v1/orgs/${orgId}/connectedApps/1`, auth)).body
    const answers = { ...bundle, org: { data: org }, data: { ...bundle.data, connectedApps: [record, copy().data.connectedApps[1]] } }
    await refused(t, format, answers, [
      'orgscan: The scan bundle has 2 problems; nothing was imported.',
      `  ${at(format, bundle, '/org')}: this is a whole answer of the API: put its data member here, the org itself`,
      `  ${at(format, bundle, '/data/connectedApps/0')}: this is a whole answer of the API: put its data member here, the record itself`,
    ])
    if (format === 'json') {
      await refused(t, format, { ...bundle, data: { ...bundle.data, orgLimits: (await ts.get(`/v1/orgs/${orgId}/orgLimits`, auth)).body } }, [
        'orgscan: The scan bundle has 1 problem; nothing was imported.',
        '  /data/orgLimits: orgLimits must be a list of records: this is a whole list answer of the API, put its data member here',
      ])
    }
  }
})

t.test('missing fields: each named with what it holds, from its declaration', async (t) => {
  const bundle = copy()
  delete bundle.org.name
  delete bundle.org.instanceUrl
  delete bundle.org.namespacePrefix
  delete bundle.scan.startedAt
  delete bundle.data.connectedApps[0].isManaged
  delete bundle.data.fields[1].apiName
  delete bundle.data.fields[1].label
  for (const format of FORMATS) {
    await refused(t, format, bundle, [
      'orgscan: The scan bundle has 7 problems; nothing was imported.',
      `  ${at(format, bundle, '/org/name')}: name is required: org name as set in Company Information`,
      `  ${at(format, bundle, '/org/instanceUrl')}: instanceUrl is required: the org's My Domain URL`,
      `  ${at(format, bundle, '/org/namespacePrefix')}: namespacePrefix is required: the org's own managed-package namespace; null when it has none`,
      `  ${at(format, bundle, '/scan/startedAt')}: startedAt is required: when the scan started`,
      `  ${at(format, bundle, '/data/connectedApps/0/isManaged')}: isManaged is required: whether the app comes from a managed package`,
      `  ${at(format, bundle, '/data/fields/1/apiName')}: apiName is required: API name of the field (custom fields end in __c)`,
      `  ${at(format, bundle, '/data/fields/1/label')}: label is required: field label shown to users`,
    ])
  }
})

t.test('bad values in several records, unknown fields and an unknown resource: every one, in plain words', async (t) => {
  const bundle = copy()
  bundle.org.isSandbox = 'no'
  bundle.org.lastScanDat = '2026-01-01T00:00:00Z'
  bundle.scan.status = 'done'
  bundle.scan.score = 101
  bundle.data.connectedApps[0].permittedUsers = 'everyone'
  bundle.data.connectedApps[1].userCount = 'many'
  bundle.data.fields[0].percentPopulated = '50%'
  bundle.data.fields[1].length = 2.5
  bundle.data.fields[1].referenceTo = ['Account', 7]
  bundle.data.fields[1].colour = 'red'
  bundle.data.classTypes[1].classType = 'robot'
  bundle.data.objects[0].createdDate = 'last tuesday'
  bundle.data.cloudUsage = structuredClone(bundle.data.cloudUsage)
  const cloud = bundle.data.cloudUsage as unknown as { clouds: Array<Record<string, unknown>> }
  cloud.clouds[0].cloud = 'moon'
  bundle.data.fieldz = [{}]
  for (const format of FORMATS) {
    const fieldz = where(format, bundle, '/data/fieldz/0')
    await refused(t, format, bundle, [
      `orgscan: The scan bundle has ${format === 'json' ? 14 : 15} problems; nothing was imported.`,
      `  ${at(format, bundle, '/org/isSandbox')}: isSandbox must be true or false (got "no")`,
      `  ${at(format, bundle, '/org/lastScanDat')}: lastScanDat is not a field of the org; did you mean lastScanDate? (the service computes it: leave it out)`,
      `  ${at(format, bundle, '/scan/status')}: status must be one of completed, failed, running, queued (got "done")`,
      `  ${at(format, bundle, '/scan/score')}: score must be at most 100 (got 101)`,
      `  ${at(format, bundle, '/data/connectedApps/0/permittedUsers')}: permittedUsers must be one of all_self_authorize, admin_approved (got "everyone")`,
      `  ${at(format, bundle, '/data/connectedApps/1/userCount')}: userCount must be a whole number (got "many")`,
      `  ${at(format, bundle, '/data/fields/0/percentPopulated')}: percentPopulated must be a number (got "50%")`,
      `  ${at(format, bundle, '/data/fields/1/length')}: length must be a whole number (got 2.5)`,
      `  ${at(format, bundle, '/data/fields/1/referenceTo/1')}: referenceTo[1] must be text (got 7)`,
      `  ${at(format, bundle, '/data/fields/1/colour')}: colour is not a field of fields records (its fields are listed in docs/reference/rest.md)`,
      `  ${at(format, bundle, '/data/objects/0/createdDate')}: createdDate must be a date and time such as 2026-01-31T12:00:00Z (ISO 8601, with Z or an offset) (got "last tuesday")`,
      `  ${at(format, bundle, '/data/classTypes/1/classType')}: classType must be one of controller, test, batch, schedulable, queueable, invocable, rest_resource, trigger_handler, utility, other (got "robot")`,
      `  ${at(format, bundle, '/data/cloudUsage/clouds/0/cloud')}: clouds[0].cloud must be one of sales, service, marketing, commerce, experience, platform, analytics, field_service (got "moon")`,
      // An NDJSON bundle names the resource on each line, and counts it on the end line.
      ...(format === 'json'
        ? ['  /data/fieldz: fieldz is not a resource; did you mean fields?']
        : [`  line ${fieldz.line} /resource: fieldz is not a resource; did you mean fields?`, `  line ${fieldz.line! + 1} /counts/fieldz: fieldz is not a resource`]),
    ])
  }
})

t.test('a duplicate id names the place of the first record with it and of the second', async (t) => {
  const bundle = copy()
  bundle.data.fields[1].id = bundle.data.fields[0].id
  bundle.data.orgLimits[1].name = bundle.data.orgLimits[0].name
  // A third record with that id, bad otherwise too: its problems and the duplicate are all named.
  bundle.data.fields.push({ ...bundle.data.fields[0], type: null })
  for (const format of FORMATS) {
    await refused(t, format, bundle, [
      'orgscan: The scan bundle has 4 problems; nothing was imported.',
      `  ${at(format, bundle, '/data/fields/1/id')}: id 1 is used twice among fields records: first at ${at(format, bundle, '/data/fields/0/id')}, again here`,
      `  ${at(format, bundle, '/data/fields/2/type')}: type must be text (got null)`,
      `  ${at(format, bundle, '/data/fields/2/id')}: id 1 is used twice among fields records: first at ${at(format, bundle, '/data/fields/0/id')}, again here`,
      `  ${at(format, bundle, '/data/orgLimits/1/name')}: name "DailyApiRequests" is used twice among orgLimits records: first at ${at(format, bundle, '/data/orgLimits/0/name')}, again here`,
    ])
  }
})

t.test('thousands of problems: the first 100 listed, the rest counted, on the command line and in --json', async (t) => {
  const bundle = copy()
  const field = bundle.data.fields[0]
  bundle.data.fields = Array.from({ length: 3000 }, (_, i) => ({ ...field, id: i + 1, type: i, colour: 'red' }))
  for (const format of FORMATS) {
    const file = write(bundle, format)
    const before = await scanCount()
    const r = await runCli(['import', '--account', account.id, file], env)
    t.equal(r.code, 1)
    const lines = errorOf(r.stderr)
    t.equal(lines.length, 102, `${format}: a line, 100 problems and the count of the rest`)
    t.same(lines.slice(0, 3), [
      'orgscan: The scan bundle has 6,000 problems; nothing was imported.',
      `  ${at(format, bundle, '/data/fields/0/type')}: type must be text (got 0)`,
      `  ${at(format, bundle, '/data/fields/0/colour')}: colour is not a field of fields records (its fields are listed in docs/reference/rest.md)`,
    ])
    t.equal(lines[100], `  ${at(format, bundle, '/data/fields/49/colour')}: colour is not a field of fields records (its fields are listed in docs/reference/rest.md)`)
    t.equal(lines[101], '  … and 5,900 more problems not listed (fields: 5,900); the first 100 are above.')

    const json = await runCli(['import', '--account', account.id, file, '--json'], env)
    t.equal(json.code, 1)
    const { error } = JSON.parse(json.stderr.trimEnd().split('\n').at(-1)!)
    t.equal(error.kind, 'ImportError')
    t.equal(error.problems.length, 100)
    t.same(error.problems[0], { ...where(format, bundle, '/data/fields/0/type'), message: 'type must be text (got 0)' }, `${format}: each problem with its place`)
    t.equal(error.unlisted, 5900)
    t.equal(error.message, lines.join('\n').slice('orgscan: '.length), `${format}: the message is what the command prints`)
    t.equal(await scanCount(), before, `${format}: nothing written`)
  }
})
