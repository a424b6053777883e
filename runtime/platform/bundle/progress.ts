/**
 * Progress of an import or an export, as events: the command renders them (a bar on a terminal, plain lines
 * otherwise, bin/cli/progress.ts), and a server running the operation for the command sends them through its admin
 * socket. Ticks come every `TICK_RECORDS` records, so a renderer can redraw without the work slowing down.
 */

export type ProgressEvent =
  | {
      type: 'start'
      op: 'import' | 'export'
      orgId?: string
      /** The scan exported. */
      scanId?: string
      format: 'json' | 'ndjson'
      /** Records expected in all, when known (an export; an import of a JSON bundle). */
      totalRecords?: number
      /** Size of the file being imported, when known. */
      totalBytes?: number
    }
  /** Running counts while `resource`'s records go by. */
  | { type: 'tick'; resource: string; records: number; doneRecords: number; doneBytes?: number }
  /** `resource` is done (its records were written or read). */
  | { type: 'resource'; resource: string; records: number }
  | { type: 'end'; records: number; ms: number }

export type ProgressSink = (e: ProgressEvent) => void

export const TICK_RECORDS = 2000

/** Counts records per resource and emits the tick and resource events; `finish()` emits the last resource and the end. */
export class ProgressCounter {
  private current: string | undefined
  private count = 0
  private done = 0
  private readonly t0 = Date.now()
  constructor(
    private readonly sink: ProgressSink,
    private readonly bytes?: () => number,
  ) {}

  /** One record of `resource` went by. */
  record(resource: string): void {
    if (resource !== this.current) {
      this.flushResource()
      this.current = resource
    }
    this.count++
    this.done++
    if (this.count % TICK_RECORDS === 0) this.sink({ type: 'tick', resource, records: this.count, doneRecords: this.done, doneBytes: this.bytes?.() })
  }

  /** A resource with no records (an export of an empty table), reported for completeness. */
  empty(resource: string): void {
    this.flushResource()
    this.sink({ type: 'resource', resource, records: 0 })
  }

  finish(): void {
    this.flushResource()
    this.sink({ type: 'end', records: this.done, ms: Date.now() - this.t0 })
  }

  private flushResource(): void {
    if (this.current !== undefined) this.sink({ type: 'resource', resource: this.current, records: this.count })
    this.current = undefined
    this.count = 0
  }
}
