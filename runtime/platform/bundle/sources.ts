/**
 * Where an import's records come from: a bundle object (a JSON bundle, read whole) or an NDJSON bundle file, read line
 * by line in constant memory (docs/import.md "Formats"). A source yields records and the problems only it can see
 * (a line that is not JSON, an unknown resource); the import validates the records themselves.
 */
import { createReadStream, openSync, readSync, closeSync, statSync, readFileSync } from 'node:fs'
import { isUtf8 } from 'node:buffer'
import { NDJSON_FORMAT, NDJSON_VERSION } from './wire.ts'
import { isJsonObject } from '../../core/json-object.ts'
import { nearestName } from '../../core/nearest.ts'
import { counted, nameOf, pointerToken, shown, type Place, type Problem } from './problems.ts'

/**
 * One record of a resource, or a problem of the source. `pos` places the record: its index among the resource's
 * records in a JSON bundle, its line in an NDJSON one (`BundleSource.placeOf`).
 */
export type SourceItem = { resource: string; record: unknown; pos: number } | { problem: Problem }

export interface BundleSource {
  format: 'json' | 'ndjson'
  /** The bundle's `org` and `scan`, not validated yet. */
  org: unknown
  scan: unknown
  /** Where the org and the scan are. */
  orgPlace: Place
  scanPlace: Place
  /** The place of a record (`pos` of its item). */
  placeOf(resource: string, pos: number): Place
  /** Problems of the bundle as a whole, found before any record (not an object, no header). */
  headerProblems: Problem[]
  /** Nothing of the bundle could be read (not JSON, not UTF-8, no NDJSON header): its header problems say all there is. */
  unreadable?: true
  totalRecords?: number
  totalBytes?: number
  bytesRead?: () => number
  items(): AsyncIterable<SourceItem>
  /** After the last item: problems of the end of the bundle, given the records read per resource. */
  finish(counts: ReadonlyMap<string, number>): Problem[]
  /** Releases the file (an import that stopped before reading every item). */
  close?(): void
}

/**
 * A bundle object `{org, scan, data}`: `data` holds records per resource name, an array (a singleton: one object).
 * `singletons` and `known` come from the registry's import targets.
 */
export function objectSource(bundle: unknown, known: ReadonlySet<string>, singletons: ReadonlySet<string>): BundleSource {
  const b = isJsonObject(bundle) ? bundle : {}
  const headerProblems: Problem[] = isJsonObject(bundle) ? [] : [{ pointer: '', message: `the bundle must be a JSON object {"org":…,"scan":…,"data":…} (got ${shown(bundle)})` }]
  for (const k of Object.keys(b)) {
    if (k !== 'org' && k !== 'scan' && k !== 'data') headerProblems.push({ pointer: `/${pointerToken(k)}`, message: `${nameOf(k)} is not part of a bundle: a bundle has org, scan and data` })
  }
  const data = b.data === undefined ? {} : b.data
  if (!isJsonObject(data)) headerProblems.push({ pointer: '/data', message: `data must be an object of records per resource, such as {"fields":[…]} (got ${shown(data)})` })
  const entries = isJsonObject(data) ? Object.entries(data) : []
  const names = [...known]
  let total = 0
  for (const [k, raw] of entries) if (known.has(k)) total += singletons.has(k) ? 1 : Array.isArray(raw) ? raw.length : 0
  return {
    format: 'json',
    org: b.org,
    scan: b.scan,
    orgPlace: { pointer: '/org' },
    scanPlace: { pointer: '/scan' },
    placeOf: (resource, pos) => ({ pointer: singletons.has(resource) ? `/data/${resource}` : `/data/${resource}/${pos}` }),
    headerProblems,
    totalRecords: total,
    async *items() {
      for (const [name, raw] of entries) {
        if (!known.has(name)) {
          const near = nearestName(name, names)
          yield { problem: { pointer: `/data/${pointerToken(name)}`, message: `${nameOf(name)} is not a resource${near ? `; did you mean ${near}?` : ' (the resources are listed in docs/reference/rest.md)'}` } }
          continue
        }
        if (singletons.has(name)) {
          yield { resource: name, record: raw, pos: 0 }
          continue
        }
        if (!Array.isArray(raw)) {
          const answer = isJsonObject(raw) && Array.isArray(raw.data)
          const message = answer
            ? `${name} must be a list of records: this is a whole list answer of the API, put its data member here`
            : `${name} must be a list of records (got ${shown(raw)})`
          yield { problem: { pointer: `/data/${name}`, message } }
          continue
        }
        for (let i = 0; i < raw.length; i++) yield { resource: name, record: raw[i], pos: i }
      }
    },
    finish: () => [],
  }
}

/** The first line of an NDJSON bundle, e.g. `{"format":"orgscan-scan-bundle+ndjson","version":1,"org":{…},"scan":{…}}`. */
function ndjsonHeader(line: string): Record<string, unknown> | undefined {
  try {
    const h = JSON.parse(line) as unknown
    return isJsonObject(h) && h.format === NDJSON_FORMAT ? h : undefined
  } catch {
    return undefined
  }
}

/** How every NDJSON bundle this service writes begins (whitespace aside). */
const NDJSON_START = new RegExp(`^\\s*\\{\\s*"format"\\s*:\\s*"${NDJSON_FORMAT.replace(/[+]/g, '\\+')}"`)

/**
 * Whether a file is an NDJSON bundle: its first line (read from the first 1 MB at most, after a byte-order mark) is
 * the NDJSON header, or begins as one — a header longer than 1 MB, or a broken one, is then reported as the NDJSON
 * header's problem rather than as a JSON bundle that does not parse.
 */
export function isNdjsonFile(file: string): boolean {
  const fd = openSync(file, 'r')
  try {
    const buf = Buffer.alloc(1024 * 1024)
    const n = readSync(fd, buf, 0, buf.length, 0)
    const text = buf.subarray(0, n).toString('utf8').replace(/^\uFEFF/, '')
    const nl = text.indexOf('\n')
    return NDJSON_START.test(text) || ndjsonHeader(nl < 0 ? text : text.slice(0, nl)) !== undefined
  } finally {
    closeSync(fd)
  }
}

/** A JSON bundle file, read and parsed whole. */
export function jsonFileSource(file: string, known: ReadonlySet<string>, singletons: ReadonlySet<string>): BundleSource {
  const bytes = readFileSync(file)
  // Bytes that are not UTF-8 are a corrupt transfer: refused, not imported as U+FFFD.
  if (!isUtf8(bytes)) return { ...objectSource({}, known, singletons), headerProblems: [{ pointer: '', message: 'the file is not valid UTF-8' }], unreadable: true }
  const text = bytes.toString('utf8').replace(/^\uFEFF/, '')
  let bundle: unknown
  try {
    bundle = JSON.parse(text)
  } catch (e) {
    return { ...objectSource({}, known, singletons), headerProblems: [notJson(text, e as Error)], unreadable: true }
  }
  return { ...objectSource(bundle, known, singletons), totalBytes: Buffer.byteLength(text) }
}

/** A JSON document that does not parse: the parser's sentence, with the line and column where it stopped. */
function notJson(text: string, e: Error): Problem {
  const first = e.message.split('\n')[0]
  const at = /at position (\d+)/.exec(first)
  if (!at) return { pointer: '', message: `the file is not JSON: ${first}` }
  const upTo = text.slice(0, Number(at[1]))
  const line = upTo.split('\n').length
  const column = upTo.length - upTo.lastIndexOf('\n')
  return { line, pointer: '', message: `the file is not JSON: ${first.replace(/ in JSON at position \d+.*/, '')} (column ${column})` }
}

/**
 * The lines of a file, a chunk at a time (newline-separated, a CR before it dropped): bytes are split at newlines and
 * each line decoded once, which costs half of what `readline` does (measured on an 85 MB bundle).
 */
class LineReader {
  private readonly chunks: AsyncIterator<Buffer>
  private pending: Buffer[] = []
  private done = false

  constructor(readonly stream: ReturnType<typeof createReadStream>) {
    this.chunks = (stream as AsyncIterable<Buffer>)[Symbol.asyncIterator]()
  }

  /** The complete lines of the next chunk (possibly none); undefined at the end of the file. */
  async next(): Promise<string[] | undefined> {
    if (this.done) return undefined
    const r = await this.chunks.next()
    if (r.done) {
      this.done = true
      const last = Buffer.concat(this.pending)
      this.pending = []
      return last.length ? [decode(last, 0, last.length)] : undefined
    }
    const buf: Buffer = r.value
    const out: string[] = []
    let start = 0
    for (let nl = buf.indexOf(10); nl >= 0; nl = buf.indexOf(10, start)) {
      if (this.pending.length) {
        this.pending.push(buf.subarray(0, nl))
        const line = Buffer.concat(this.pending)
        this.pending = []
        out.push(decode(line, 0, line.length))
      } else out.push(decode(buf, start, nl))
      start = nl + 1
    }
    if (start < buf.length) this.pending.push(buf.subarray(start))
    return out
  }
}

/** What `decode` gives for a line that is not UTF-8 (NUL cannot start a JSON line, so no real line is this). */
const NOT_UTF8 = '\u0000(not UTF-8)'

function decode(buf: Buffer, start: number, end: number): string {
  const stop = end > start && buf[end - 1] === 13 ? end - 1 : end
  return isUtf8(buf.subarray(start, stop)) ? buf.toString('utf8', start, stop) : NOT_UTF8
}

/**
 * An NDJSON bundle file: the header line, one `{"resource":…,"record":…}` line per record (in any order; a resource's
 * records together are written fastest), and the end line `{"end":true,"counts":{…}}` — without it the file is
 * truncated and refused. Blank lines are ignored.
 */
export async function ndjsonFileSource(file: string, known: ReadonlySet<string>): Promise<BundleSource> {
  const totalBytes = statSync(file).size
  const reader = new LineReader(createReadStream(file, { highWaterMark: 256 * 1024 }))
  let batch: string[] = []
  let first: string | undefined
  for (let b = await reader.next(); b !== undefined; b = await reader.next()) {
    if (b.length === 0) continue
    first = b[0].replace(/^\uFEFF/, '')
    batch = b.slice(1)
    break
  }
  const header = first === undefined ? undefined : ndjsonHeader(first)
  const headerProblems: Problem[] = []
  const atLine = (line: number, message: string, resource?: string): { problem: Problem } => ({ problem: { line, resource, pointer: '', message } })
  if (!header) headerProblems.push(atLine(1, `this is not the header of an NDJSON bundle ({"format":"${NDJSON_FORMAT}","version":${NDJSON_VERSION},"org":…,"scan":…})`).problem)
  else {
    if (header.version !== NDJSON_VERSION) headerProblems.push({ line: 1, pointer: '/version', message: `version ${shown(header.version)} is not supported: this orgscan reads version ${NDJSON_VERSION}` })
    for (const k of Object.keys(header)) {
      if (!['format', 'version', 'org', 'scan'].includes(k)) headerProblems.push({ line: 1, pointer: `/${pointerToken(k)}`, message: `${nameOf(k)} is not part of the header: it has format, version, org and scan` })
    }
  }
  const names = [...known]
  let lineNo = 1
  let end: Record<string, unknown> | undefined
  let endLine = 0
  /** One line: an item to yield, the end line (undefined), or nothing (a blank line). */
  const item = (line: string, at: number): SourceItem | undefined => {
    if (line === NOT_UTF8) return atLine(at, 'the line is not valid UTF-8')
    if (line.trim() === '') return undefined
    if (end) return atLine(at, `nothing may follow the end line (line ${endLine})`)
    let x: unknown
    try {
      x = JSON.parse(line)
    } catch (e) {
      const why = (e as Error).message.split('\n')[0].slice(0, 100).replace(/ in JSON at position (\d+).*/, (_, p: string) => ` (column ${Number(p) + 1})`)
      return atLine(at, `the line is not JSON: ${why}`)
    }
    if (isJsonObject(x) && typeof x.resource === 'string' && 'record' in x && Object.keys(x).length === 2) {
      const resource = x.resource
      if (known.has(resource)) return { resource, record: x.record, pos: at }
      const near = nearestName(resource, names)
      return { problem: { line: at, pointer: '/resource', message: `${nameOf(resource)} is not a resource${near ? `; did you mean ${near}?` : ' (the resources are listed in docs/reference/rest.md)'}` } }
    }
    if (isJsonObject(x) && x.end === true) {
      end = x
      endLine = at
      return undefined
    }
    return atLine(at, 'each line after the header is a record {"resource":…,"record":…}, and the last is the end line {"end":true,"counts":{…}}')
  }
  return {
    format: 'ndjson',
    org: header?.org,
    scan: header?.scan,
    ...(header ? {} : { unreadable: true as const }),
    orgPlace: { line: 1, pointer: '/org' },
    scanPlace: { line: 1, pointer: '/scan' },
    placeOf: (resource, pos) => ({ line: pos, resource, pointer: '/record' }),
    headerProblems,
    totalBytes,
    bytesRead: () => reader.stream.bytesRead,
    close: () => void reader.stream.destroy(),
    async *items() {
      try {
        if (!header) return
        for (let b: string[] | undefined = batch; b !== undefined; b = await reader.next()) {
          for (const line of b) {
            const it = item(line, ++lineNo)
            if (it) yield it
            if (it && 'problem' in it && it.problem.message.startsWith('nothing may follow')) return
          }
        }
      } finally {
        reader.stream.destroy()
      }
    },
    finish(counts) {
      if (!header) return []
      if (!end) return [{ pointer: '', message: `the end line {"end":true,"counts":{…}} is missing after line ${lineNo}: the file is truncated` }]
      const declared = end.counts
      if (!isJsonObject(declared)) return [{ line: endLine, pointer: '/counts', message: `counts must be an object of record counts per resource (got ${shown(declared)})` }]
      const problems: Problem[] = []
      for (const [k, n] of Object.entries(declared)) {
        const at = { line: endLine, pointer: `/counts/${pointerToken(k)}` }
        if (!known.has(k)) problems.push({ ...at, message: `${nameOf(k)} is not a resource` })
        else if (n !== (counts.get(k) ?? 0)) problems.push({ ...at, message: `counts says ${shown(n)} ${k} record${n === 1 ? '' : 's'}, the file holds ${(counts.get(k) ?? 0).toLocaleString('en-US')}` })
      }
      for (const [k, n] of counts) {
        if (n > 0 && !Object.hasOwn(declared, k)) problems.push({ line: endLine, pointer: '/counts', message: `counts says nothing of ${k}, the file holds ${counted(n, 'record')}` })
      }
      return problems
    },
  }
}
