/**
 * Where an import's records come from: a bundle object (a JSON bundle, read whole) or an NDJSON bundle file, read line
 * by line in constant memory (docs/import.md "Formats"). A source yields records and the problems only it can see
 * (a line that is not JSON, an unknown resource); the import validates the records themselves.
 */
import { createReadStream, openSync, readSync, closeSync, statSync, readFileSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { NDJSON_FORMAT, NDJSON_VERSION } from './wire.ts'

/** One record of a resource, or a problem of the source. `where` names it in a problem list. */
export type SourceItem = { resource: string; record: unknown; where: () => string } | { problem: string }

export interface BundleSource {
  format: 'json' | 'ndjson'
  /** The bundle's `org` and `scan`, not validated yet. */
  org: unknown
  scan: unknown
  /** Problems of the bundle as a whole, found before any record (not an object, no header). */
  headerProblems: string[]
  totalRecords?: number
  totalBytes?: number
  bytesRead?: () => number
  items(): AsyncIterable<SourceItem>
  /** After the last item: problems of the end of the bundle, given the records read per resource. */
  finish(counts: ReadonlyMap<string, number>): string[]
}

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x)

/**
 * A bundle object `{org, scan, data}`: `data` holds records per resource name, an array (a singleton: one object).
 * `singletons` and `known` come from the registry's import targets.
 */
export function objectSource(bundle: unknown, known: ReadonlySet<string>, singletons: ReadonlySet<string>): BundleSource {
  const b = isObject(bundle) ? bundle : {}
  const headerProblems = isObject(bundle) ? [] : ['the bundle must be a JSON object {org, scan, data}']
  for (const k of Object.keys(b)) if (k !== 'org' && k !== 'scan' && k !== 'data') headerProblems.push(`${k}: unknown member (a bundle has org, scan and data)`)
  const data = b.data === undefined ? {} : b.data
  if (!isObject(data)) headerProblems.push('data: must be an object of records per resource')
  const entries = isObject(data) ? Object.entries(data) : []
  let total = 0
  for (const [k, raw] of entries) if (known.has(k)) total += singletons.has(k) ? 1 : Array.isArray(raw) ? raw.length : 0
  return {
    format: 'json',
    org: b.org,
    scan: b.scan,
    headerProblems,
    totalRecords: total,
    async *items() {
      for (const [name, raw] of entries) {
        if (!known.has(name)) {
          yield { problem: `data.${name}: unknown resource` }
          continue
        }
        if (singletons.has(name)) {
          yield { resource: name, record: raw, where: () => `data.${name}` }
          continue
        }
        if (!Array.isArray(raw)) {
          yield { problem: `data.${name}: must be an array` }
          continue
        }
        for (let i = 0; i < raw.length; i++) yield { resource: name, record: raw[i], where: () => `data.${name}[${i}]` }
      }
    },
    finish: () => [],
  }
}

/** The first line of an NDJSON bundle, e.g. `{"format":"orgscan-scan-bundle+ndjson","version":1,"org":{…},"scan":{…}}`. */
function ndjsonHeader(line: string): Record<string, unknown> | undefined {
  try {
    const h = JSON.parse(line) as unknown
    return isObject(h) && h.format === NDJSON_FORMAT ? h : undefined
  } catch {
    return undefined
  }
}

/** Whether a file is an NDJSON bundle: its first line is the NDJSON header (read from the first 1 MB at most). */
export function isNdjsonFile(file: string): boolean {
  const fd = openSync(file, 'r')
  try {
    const buf = Buffer.alloc(1024 * 1024)
    const n = readSync(fd, buf, 0, buf.length, 0)
    const text = buf.subarray(0, n).toString('utf8')
    const nl = text.indexOf('\n')
    return ndjsonHeader(nl < 0 ? text : text.slice(0, nl)) !== undefined
  } finally {
    closeSync(fd)
  }
}

/** A JSON bundle file, read and parsed whole. */
export function jsonFileSource(file: string, known: ReadonlySet<string>, singletons: ReadonlySet<string>): BundleSource {
  const text = readFileSync(file, 'utf8')
  let bundle: unknown
  try {
    bundle = JSON.parse(text)
  } catch (e) {
    return { ...objectSource({}, known, singletons), headerProblems: [`not JSON: ${(e as Error).message.split('\n')[0]}`] }
  }
  return { ...objectSource(bundle, known, singletons), totalBytes: Buffer.byteLength(text) }
}

/**
 * An NDJSON bundle file: the header line, one `{"resource":…,"record":…}` line per record (in any order; a resource's
 * records together are written fastest), and the end line `{"end":true,"counts":{…}}` — without it the file is
 * truncated and refused. Blank lines are ignored.
 */
export async function ndjsonFileSource(file: string, known: ReadonlySet<string>): Promise<BundleSource> {
  const totalBytes = statSync(file).size
  const stream = createReadStream(file, { encoding: 'utf8', highWaterMark: 256 * 1024 })
  const lines = createInterface({ input: stream, crlfDelay: Infinity })[Symbol.asyncIterator]()
  let lineNo = 0
  const first = await lines.next()
  lineNo++
  const header = first.done ? undefined : ndjsonHeader(first.value)
  const headerProblems: string[] = []
  if (!header) headerProblems.push(`line 1: not the header of an NDJSON bundle ({"format":"${NDJSON_FORMAT}","version":${NDJSON_VERSION},"org":…,"scan":…})`)
  else {
    if (header.version !== NDJSON_VERSION) headerProblems.push(`line 1: version ${JSON.stringify(header.version)} is not supported (this orgscan reads version ${NDJSON_VERSION})`)
    for (const k of Object.keys(header)) if (!['format', 'version', 'org', 'scan'].includes(k)) headerProblems.push(`line 1: unknown member "${k.slice(0, 40)}"`)
  }
  let end: Record<string, unknown> | undefined
  let endLine = 0
  return {
    format: 'ndjson',
    org: header?.org,
    scan: header?.scan,
    headerProblems,
    totalBytes,
    bytesRead: () => stream.bytesRead,
    async *items() {
      if (!header) return stream.destroy()
      try {
        for (let r = await lines.next(); !r.done; r = await lines.next()) {
          const at = ++lineNo
          const line = r.value
          if (line.trim() === '') continue
          if (end) {
            yield { problem: `line ${at}: nothing may follow the end line (line ${endLine})` }
            break
          }
          let item: unknown
          try {
            item = JSON.parse(line)
          } catch (e) {
            yield { problem: `line ${at}: not JSON (${(e as Error).message.split('\n')[0].slice(0, 100)})` }
            continue
          }
          if (isObject(item) && typeof item.resource === 'string' && 'record' in item && Object.keys(item).length === 2) {
            if (known.has(item.resource)) yield { resource: item.resource, record: item.record, where: () => `line ${at} (${item.resource})` }
            else yield { problem: `line ${at}: unknown resource "${item.resource.slice(0, 60)}"` }
          } else if (isObject(item) && item.end === true) {
            end = item
            endLine = at
          } else {
            yield { problem: `line ${at}: expected {"resource":…,"record":…} or the end line {"end":true,"counts":{…}}` }
          }
        }
      } finally {
        stream.destroy()
      }
    },
    finish(counts) {
      if (!header) return []
      if (!end) return [`the end line {"end":true,"counts":{…}} is missing: the file is truncated`]
      const declared = end.counts
      if (!isObject(declared)) return [`line ${endLine}: "counts" must be an object of record counts per resource`]
      const problems: string[] = []
      for (const [k, n] of Object.entries(declared)) {
        if (!known.has(k)) problems.push(`line ${endLine}: counts names an unknown resource "${k.slice(0, 60)}"`)
        else if (n !== (counts.get(k) ?? 0)) problems.push(`line ${endLine}: counts says ${JSON.stringify(n)} ${k} records, the file holds ${counts.get(k) ?? 0}`)
      }
      for (const [k, n] of counts) if (n > 0 && !Object.hasOwn(declared, k)) problems.push(`line ${endLine}: counts says nothing of ${k}, the file holds ${n} records`)
      return problems
    },
  }
}
