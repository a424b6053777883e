/**
 * Writing a scan's records into their tables inside the import's transaction, in constant memory: on PostgreSQL large
 * tables with COPY (text format, rows sent in 256 KB chunks) and small ones with one multi-row INSERT, on the embedded
 * database with multi-row INSERTs (COPY FROM STDIN does not work through its socket server:
 * docs/adr/0040-ndjson-bundles-and-one-pass-import.md). One table is written at a time — a
 * connection in copy mode takes nothing else — so `ScanWriter` closes one table's writer before opening the next.
 */
import type postgres from 'postgres'
import { columnName, quotedColumn } from '../../core/fields.ts'
import { copyIn, type CopyIn } from '../db/copy-in.ts'
import type { CompiledResource } from '../../core/registry.ts'
import { copyEncoder, type CopyEncoder } from './copy-text.ts'
import { storedFields } from './wire.ts'

/** A resource's table as the writers need it, prepared once per import. */
export interface TableShape {
  resource: CompiledResource
  fields: string[]
  columns: string[]
  encoders: CopyEncoder[]
}

export function tableShape(c: CompiledResource): TableShape {
  const fields = storedFields(c)
  return { resource: c, fields, columns: fields.map(columnName), encoders: fields.map((n) => copyEncoder(c.fields.get(n)!)) }
}

interface TableWriter {
  /** Adds one validated record; returns a promise only when it had to wait for the database. */
  add(record: Record<string, unknown>): Promise<void> | undefined
  close(): Promise<void>
  abort(): Promise<void>
}

const COPY_CHUNK = 256 * 1024
/** Tables of more records than this are written with COPY (on PostgreSQL) by default. */
export const COPY_FROM = 5000
/** Bound parameters per INSERT (PostgreSQL allows 65,535). */
const INSERT_PARAMS = 30_000

/** The database refused a record; `recordIndex` (0-based, among the resource's records) when COPY named its line. */
export class TableWriteError extends Error {
  constructor(message: string, readonly resource: string, readonly recordIndex: number | undefined) {
    super(message)
    this.name = 'TableWriteError'
  }
}

async function copyWriter(tx: postgres.TransactionSql, shape: TableShape, scanId: string): Promise<TableWriter> {
  const cols = ['"scan_id"', ...shape.fields.map(quotedColumn)].join(', ')
  const copy: CopyIn = await copyIn(tx, `COPY "${shape.resource.decl.table}" (${cols}) FROM STDIN`)
  const prefix = scanId + '\t'
  const { fields, encoders } = shape
  let buf = ''
  return {
    add(rec) {
      let line = prefix
      for (let i = 0; i < fields.length; i++) line += (i ? '\t' : '') + encoders[i](rec[fields[i]])
      buf += line + '\n'
      if (buf.length < COPY_CHUNK) return undefined
      const chunk = buf
      buf = ''
      return copy.write(chunk)
    },
    async close() {
      if (buf) await copy.write(buf)
      buf = ''
      await copy.end()
    },
    abort: () => copy.abort('import refused'),
  }
}

function insertWriter(tx: postgres.TransactionSql, shape: TableShape, scanId: string): TableWriter {
  const cols = ['scan_id', ...shape.columns]
  const chunk = Math.max(1, Math.floor(INSERT_PARAMS / cols.length))
  let rows: Record<string, unknown>[] = []
  const flush = async () => {
    const part = rows
    rows = []
    if (part.length) await tx`INSERT INTO ${tx(shape.resource.decl.table)} ${tx(part as never, cols as never)}`
  }
  return {
    add(rec) {
      const row: Record<string, unknown> = { scan_id: scanId }
      for (let i = 0; i < shape.fields.length; i++) row[shape.columns[i]] = rec[shape.fields[i]] ?? null
      rows.push(row)
      return rows.length >= chunk ? flush() : undefined
    },
    close: flush,
    async abort() {
      rows = []
    },
  }
}

/**
 * COPY for a large table, INSERTs for a small one: rows are held until more than COPY_FROM arrived, then COPY takes
 * them and the rest. A COPY costs about 90 ms more than its rows on PostgreSQL over TCP (postgres.js sends its end as
 * a separate small segment, held by Nagle's algorithm until the server's delayed acknowledgement: measured 40–50 ms
 * twice), which one multi-row INSERT of a few rows does not pay.
 */
function hybridWriter(tx: postgres.TransactionSql, shape: TableShape, scanId: string, copyFrom: number): TableWriter {
  const insert = insertWriter(tx, shape, scanId)
  let held: Record<string, unknown>[] = []
  let copy: TableWriter | undefined
  const drain = async (w: TableWriter) => {
    const rows = held
    held = []
    for (const r of rows) {
      const wait = w.add(r)
      if (wait) await wait
    }
  }
  return {
    add(rec) {
      if (copy) return copy.add(rec)
      held.push(rec)
      if (held.length <= copyFrom) return undefined
      return copyWriter(tx, shape, scanId).then((w) => drain((copy = w)))
    },
    async close() {
      if (copy) return copy.close()
      await drain(insert)
      await insert.close()
    },
    async abort() {
      held = []
      await copy?.abort()
    },
  }
}

/** Writes the records of one scan, table after table: tables of more than `copyFrom` records with COPY, the others with INSERTs. */
export class ScanWriter {
  private shape: TableShape | undefined
  private writer: TableWriter | undefined
  /** Records added per resource, and how many there were when the current writer opened (to name a refused record). */
  private readonly added = new Map<string, number>()
  private base = 0

  constructor(
    private readonly tx: postgres.TransactionSql,
    private readonly scanId: string,
    /** Tables of more records than this are written with COPY; undefined: never (the embedded database). */
    private readonly copyFrom: number | undefined,
  ) {}

  /** Adds a validated record of `shape`'s resource; a promise when the caller must wait before the next one. */
  add(shape: TableShape, record: Record<string, unknown>): Promise<void> | undefined {
    const name = shape.resource.name
    this.added.set(name, (this.added.get(name) ?? 0) + 1)
    if (shape === this.shape && this.writer) {
      const wait = this.writer.add(record)
      return wait && wait.catch((e) => this.refused(e))
    }
    return this.switchTo(shape)
      .then((w) => w.add(record))
      .catch((e) => this.refused(e))
  }

  /** Finishes the table being written. */
  async close(): Promise<void> {
    const w = this.writer
    this.writer = undefined
    await w?.close().catch((e) => this.refused(e))
    this.shape = undefined
  }

  /** Gives up the table being written (the transaction is then rolled back). */
  async abort(): Promise<void> {
    const w = this.writer
    this.writer = undefined
    this.shape = undefined
    await w?.abort()
  }

  private async switchTo(shape: TableShape): Promise<TableWriter> {
    await this.close()
    this.base = (this.added.get(shape.resource.name) ?? 1) - 1
    this.writer = this.copyFrom !== undefined ? hybridWriter(this.tx, shape, this.scanId, this.copyFrom) : insertWriter(this.tx, shape, this.scanId)
    this.shape = shape
    return this.writer
  }

  /** A database error while writing: which record, when COPY said so. */
  private refused(e: unknown): never {
    if (e instanceof TableWriteError) throw e
    const line = /COPY \S+, line (\d+)/.exec(String((e as { where?: unknown }).where ?? ''))?.[1]
    const resource = this.shape?.resource.name ?? 'records'
    const detail = (e as { detail?: unknown }).detail
    throw new TableWriteError(`${(e as Error).message}${typeof detail === 'string' ? ` (${detail})` : ''}`, resource, line ? this.base + Number(line) - 1 : undefined)
  }
}
