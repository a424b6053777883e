/**
 * The problems of a scan bundle as a person reads them: each with its place — a JSON pointer into the bundle
 * (`/data/fields/17/apiName`), and for an NDJSON bundle the line and the pointer within that line
 * (`line 12 (fields) /record/apiName`) — and a sentence in plain words. A bundle may hold millions of bad values: the
 * first MAX_LISTED are kept, the rest only counted, per resource (docs/import.md "Import").
 */

/** Where a problem is: the line of an NDJSON bundle (with its resource), and a JSON pointer (into the line, or the file). */
export interface Place {
  line?: number
  resource?: string
  /** RFC 6901, '' for the whole document (or line). */
  pointer: string
}

export interface Problem extends Place {
  message: string
}

/** Values the service computes that a bundle held, ignored: where (the first object holding them), which, in how many objects. */
export interface IgnoredFields extends Place {
  fields: string[]
  /** Objects (records) that held some of them. */
  records: number
}

/** The note an import prints when it ignored computed values: a line, and one per kind of object that held them. */
export function renderIgnored(list: readonly IgnoredFields[]): string[] {
  return [
    'note: the bundle holds values the service computes, which an import does not take; they were ignored (leave them out):',
    ...list.map((e) => `  ${renderPlace(e)}${e.records > 1 ? ` and ${counted(e.records - 1, `more ${e.resource ?? /^\/data\/([^/]+)/.exec(e.pointer)?.[1] ?? ''} record`)}` : ''}: ${e.fields.join(', ')}`),
  ]
}

/** Problems listed at most; the rest are counted. */
export const MAX_LISTED = 100

/** One token of a JSON pointer (`~` and `/` escaped); a key longer than 60 characters is cut, control characters shown as escapes. */
export function pointerToken(key: string | number): string {
  if (typeof key === 'number') return String(key)
  const cut = key.length > 60 ? key.slice(0, 60) + '…' : key
  return cut.replace(/~/g, '~0').replace(/\//g, '~1').replace(/[\u0000-\u001f\u007f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

/** A place as a person reads it: `/org/name`, `line 12 (fields) /record/apiName`, `line 3`. */
export function renderPlace(p: Place): string {
  const line = p.line === undefined ? '' : `line ${p.line}${p.resource ? ` (${p.resource})` : ''}`
  return [line, p.pointer].filter(Boolean).join(' ')
}

export function renderProblem(p: Problem): string {
  const at = renderPlace(p)
  return at ? `${at}: ${p.message}` : p.message
}

/** A name in a sentence: as it is when it is a plain word, quoted otherwise (and cut at 60 characters). */
export function nameOf(key: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]{0,59}$/.test(key) ? key : JSON.stringify(key.length > 60 ? key.slice(0, 60) + '…' : key)
}

/** A value as "got …" shows it: short text quoted, numbers as written, an object or a list by its kind. */
export function shown(x: unknown): string {
  if (typeof x === 'string') return JSON.stringify(x.length > 40 ? x.slice(0, 40) + '…' : x)
  if (typeof x === 'number') return Number.isFinite(x) ? String(x) : 'a number too large to store'
  if (x === null || typeof x === 'boolean') return String(x)
  if (x === undefined) return 'nothing'
  return Array.isArray(x) ? 'a list' : 'an object'
}

/** A count in words for a sentence: `1 problem`, `4,900 problems`. */
export function counted(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`
}

/** The problems of one import: the first MAX_LISTED kept in the order found, the rest counted per resource. */
export class ProblemList {
  readonly listed: Problem[] = []
  /** Problems beyond the listed ones. */
  unlisted = 0
  private readonly unlistedBy = new Map<string, number>()

  constructor(private readonly max = MAX_LISTED) {}

  /** Whether a further problem is only counted. */
  get full(): boolean {
    return this.listed.length >= this.max
  }

  get count(): number {
    return this.listed.length + this.unlisted
  }

  add(p: Problem): void {
    if (this.listed.length < this.max) {
      this.listed.push(p)
      return
    }
    this.unlisted++
    let k = p.resource ?? (/^\/data\/([^/]+)/.exec(p.pointer)?.[1] ?? 'the bundle')
    // Bounded: a hostile bundle may name any number of resources that do not exist.
    if (!this.unlistedBy.has(k) && this.unlistedBy.size >= 40) k = 'elsewhere'
    this.unlistedBy.set(k, (this.unlistedBy.get(k) ?? 0) + 1)
  }

  /** The text of an invalid bundle's error: a first line, one line per listed problem, and what was not listed. */
  render(): string {
    const lines = [`The scan bundle has ${counted(this.count, 'problem')}; nothing was imported.`, ...this.listed.map((p) => `  ${renderProblem(p)}`)]
    if (this.unlisted > 0) {
      const where = [...this.unlistedBy].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k}: ${n.toLocaleString('en-US')}`).join(', ')
      lines.push(`  … and ${counted(this.unlisted, 'more problem')} not listed (${where}); the first ${this.max} are above.`)
    }
    return lines.join('\n')
  }
}
