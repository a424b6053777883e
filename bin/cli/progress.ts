/**
 * Progress of `orgscan import` and `orgscan export` on stderr: a bar redrawn in place when stderr is a terminal,
 * otherwise one plain line when the work starts, one per resource with its count, and one at the end (with --json:
 * those events as JSON lines).
 */
import type { ProgressEvent, ProgressSink } from '../../runtime/platform/bundle/progress.ts'

/** stderr when it is a terminal. */
export interface Terminal {
  write(s: string): void
  columns?: number
}

const REDRAW_MS = 100
const fmt = (n: number) => n.toLocaleString('en-US')
const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`
const records = (n: number) => `${fmt(n)} record${n === 1 ? '' : 's'}`

function startLine(e: Extract<ProgressEvent, { type: 'start' }>): string {
  const size = [e.format, e.totalRecords !== undefined ? `${fmt(e.totalRecords)} records` : undefined, e.totalBytes !== undefined ? mb(e.totalBytes) : undefined]
  return `${e.op === 'import' ? 'importing' : 'exporting'} ${e.orgId ? `org ${e.orgId}` : 'a scan'}${e.scanId ? ` scan ${e.scanId}` : ''} (${size.filter(Boolean).join(', ')})`
}

export function progressRenderer(err: (line: string) => void, terminal: Terminal | undefined, json: boolean): ProgressSink {
  if (json) return (e) => void (e.type === 'tick' ? undefined : err(JSON.stringify(e)))
  if (!terminal) {
    return (e) => {
      if (e.type === 'start') err(startLine(e))
      else if (e.type === 'resource') err(`  ${e.resource}: ${records(e.records)}`)
      else if (e.type === 'end') err(`done: ${records(e.records)} in ${secs(e.ms)}`)
    }
  }
  let start: Extract<ProgressEvent, { type: 'start' }> | undefined
  let t0 = Date.now()
  let drawn = 0
  let done = 0
  let bytes: number | undefined
  let resource = ''
  let count = 0
  const clear = '\r\x1b[K'
  const bar = () => {
    const width = Math.max(10, Math.min(30, (terminal.columns ?? 80) - 60))
    const frac = start?.totalRecords ? done / start.totalRecords : start?.totalBytes && bytes !== undefined ? bytes / start.totalBytes : undefined
    const meter = frac === undefined ? '' : `[${'#'.repeat(Math.round(Math.min(1, frac) * width)).padEnd(width, '-')}] ${Math.floor(Math.min(1, frac) * 100).toString().padStart(3)}%  `
    terminal.write(`${clear}${meter}${resource} ${fmt(count)}  ${records(done)}  ${secs(Date.now() - t0)}`)
    drawn = Date.now()
  }
  return (e) => {
    if (e.type === 'start') {
      start = e
      t0 = Date.now()
      terminal.write(startLine(e) + '\n')
    } else if (e.type === 'tick') {
      resource = e.resource
      count = e.records
      done = e.doneRecords
      bytes = e.doneBytes ?? bytes
      if (Date.now() - drawn >= REDRAW_MS) bar()
    } else if (e.type === 'resource') {
      done += e.resource === resource ? e.records - count : e.records
      resource = e.resource
      count = e.records
      terminal.write(`${clear}  ${e.resource}: ${records(e.records)}\n`)
      bar()
    } else {
      terminal.write(`${clear}done: ${records(e.records)} in ${secs(e.ms)}\n`)
    }
  }
}
