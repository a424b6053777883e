/**
 * Where an import's records come from: a bundle object (a JSON bundle, read whole) or an NDJSON bundle file, read line
 * by line in constant memory (docs/import.md "Formats"). A source yields records and the problems only it can see
 * (a line that is not JSON, an unknown resource); the import validates the records themselves.
 */
import { createReadStream, openSync, readSync, closeSync, statSync, readFileSync } from 'node:fs'
import { isUtf8 } from 'node:buffer'
import { NDJSON_FORMAT, NDJSON_VERSION } from './wire.ts'
import { isJsonObject } from '../../core/json-object.ts'

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
  /** Releases the file (an import that stopped before reading every item). */
  close?(): void
}

/**
 * A bundle object `{org, scan, data}`: `data` holds records per resource name, an array (a singleton: one object).
 * `singletons` and `known` come from the registry's import targets.
 */
export function objectSource(bundle: unknown, known: ReadonlySet<string>, singletons: ReadonlySet<string>): BundleSource {
  const b = isJsonObject(bundle) ? bundle : {}
  const headerProblems = isJsonObject(bundle) ? [] : ['the bundle must be a JSON object {org, scan, data}']
  for (const k of Object.keys(b)) if (k !== 'org' && k !== 'scan' && k !== 'data') headerProblems.push(`${k}: unknown member (a bundle has org, scan and data)`)
  const data = b.data === undefined ? {} : b.data
  if (!isJsonObject(data)) headerProblems.push('data: must be an object of records per resource')
  const entries = isJsonObject(data) ? Object.entries(data) : []
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
  if (!isUtf8(bytes)) return { ...objectSource({}, known, singletons), headerProblems: ['not valid UTF-8'] }
  const text = bytes.toString('utf8').replace(/^\uFEFF/, '')
  let bundle: unknown
  try {
    bundle = JSON.parse(text)
  } catch (e) {
    return { ...objectSource({}, known, singletons), headerProblems: [`not JSON: ${(e as Error).message.split('\n')[0]}`] }
  }
  return { ...objectSource(bundle, known, singletons), totalBytes: Buffer.byteLength(text) }
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
  const headerProblems: string[] = []
  if (!header) headerProblems.push(`line 1: not the header of an NDJSON bundle ({"format":"${NDJSON_FORMAT}","version":${NDJSON_VERSION},"org":…,"scan":…})`)
  else {
    if (header.version !== NDJSON_VERSION) headerProblems.push(`line 1: version ${JSON.stringify(header.version)} is not supported (this orgscan reads version ${NDJSON_VERSION})`)
    for (const k of Object.keys(header)) if (!['format', 'version', 'org', 'scan'].includes(k)) headerProblems.push(`line 1: unknown member "${k.slice(0, 40)}"`)
  }
  let lineNo = 1
  let end: Record<string, unknown> | undefined
  let endLine = 0
  /** One line: an item to yield, the end line (undefined), or nothing (a blank line). */
  const item = (line: string, at: number): SourceItem | undefined => {
    if (line === NOT_UTF8) return { problem: `line ${at}: not valid UTF-8` }
    if (line.trim() === '') return undefined
    if (end) return { problem: `line ${at}: nothing may follow the end line (line ${endLine})` }
    let x: unknown
    try {
      x = JSON.parse(line)
    } catch (e) {
      return { problem: `line ${at}: not JSON (${(e as Error).message.split('\n')[0].slice(0, 100)})` }
    }
    if (isJsonObject(x) && typeof x.resource === 'string' && 'record' in x && Object.keys(x).length === 2) {
      const resource = x.resource
      return known.has(resource) ? { resource, record: x.record, where: () => `line ${at} (${resource})` } : { problem: `line ${at}: unknown resource "${resource.slice(0, 60)}"` }
    }
    if (isJsonObject(x) && x.end === true) {
      end = x
      endLine = at
      return undefined
    }
    return { problem: `line ${at}: expected {"resource":…,"record":…} or the end line {"end":true,"counts":{…}}` }
  }
  return {
    format: 'ndjson',
    org: header?.org,
    scan: header?.scan,
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
            if (it && 'problem' in it && it.problem.includes('nothing may follow')) return
          }
        }
      } finally {
        reader.stream.destroy()
      }
    },
    finish(counts) {
      if (!header) return []
      if (!end) return [`the end line {"end":true,"counts":{…}} is missing: the file is truncated`]
      const declared = end.counts
      if (!isJsonObject(declared)) return [`line ${endLine}: "counts" must be an object of record counts per resource`]
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
