/**
 * `orgscan export --org ID [--scan ID] [--format json|ndjson] [--out FILE]`: writes a scan bundle (docs/import.md) to
 * FILE or to standard output, streaming. A file is written under a temporary name and renamed when complete, so FILE
 * never holds half a bundle. The result line goes to stdout with --out, to stderr when stdout carries the bundle.
 */
import { createWriteStream, renameSync, rmSync } from 'node:fs'
import { resolve } from 'node:path'
import type { ProgressSink } from '../../runtime/platform/bundle/progress.ts'
import { parse, UsageError } from './args.ts'
import { progressRenderer, type Terminal } from './progress.ts'
import { drained } from '../../runtime/platform/write-drain.ts'

/** Writing the bundle failed (a full disk, a closed pipe). */
export class OutputError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'OutputError'
  }
}

interface ExportIO {
  out(line: string): void
  err(line: string): void
  stdout?: NodeJS.WritableStream
  terminal?: Terminal
}

type RunExport = (
  args: Record<string, unknown>,
  streams: { output: (chunk: string) => Promise<void> | void; events: ProgressSink },
) => Promise<unknown>

/** Writes to a stream with backpressure; a failed stream fails the next write with an OutputError. */
function streamSink(stream: NodeJS.WritableStream, what: string) {
  let failure: OutputError | undefined
  stream.on('error', (e: Error) => (failure ??= new OutputError(`Cannot write ${what}: ${e.message.split('\n')[0]}`)))
  return {
    write(chunk: string): Promise<void> | void {
      if (failure) throw failure
      if (stream.write(chunk)) return
      return drained(stream, 'error', () => failure)
    },
    failure: () => failure,
  }
}

export async function exportCommand(args: string[], io: ExportIO, run: RunExport): Promise<void> {
  const { values } = parse(args, { org: { type: 'string' }, scan: { type: 'string' }, format: { type: 'string' }, out: { type: 'string' } })
  if (!values.org) throw new UsageError('export needs --org ID.')
  const out = values.out === undefined ? undefined : resolve(String(values.out))
  const format = values.format === undefined ? (out && /\.(ndjson|jsonl)$/i.test(out) ? 'ndjson' : 'json') : String(values.format)
  if (format !== 'json' && format !== 'ndjson') throw new UsageError(`--format takes json or ndjson, got "${format}".`)
  const events = progressRenderer(io.err, io.terminal, !!values.json)
  const a = { org: String(values.org), scan: values.scan === undefined ? undefined : String(values.scan), format }
  type Result = { orgId: string; scanId: string; counts: Record<string, number>; bytes: number }
  const line = (r: Result) => `exported scan ${r.scanId} of org ${r.orgId}: ${Object.values(r.counts).reduce((x, y) => x + y, 0)} records, ${r.bytes} bytes (${format})${out ? ` to ${out}` : ''}`

  if (out) {
    const temp = `${out}.partial-${process.pid}`
    const stream = createWriteStream(temp)
    const sink = streamSink(stream, out)
    let r: Result
    try {
      r = (await run(a, { output: (c) => sink.write(c), events })) as Result
      await new Promise<void>((ok, fail) => stream.end(() => (sink.failure() ? fail(sink.failure()) : ok())))
      renameSync(temp, out)
    } catch (e) {
      stream.destroy()
      rmSync(temp, { force: true })
      throw e
    }
    return io.out(values.json ? JSON.stringify({ ...r, format, file: out }) : line(r))
  }

  // Standard output: the stream when there is one; otherwise (the command run in a process of its own making) the
  // bundle is handed to out() whole.
  let collected = ''
  const sink = io.stdout ? streamSink(io.stdout, 'standard output') : { write: (c: string) => void (collected += c), failure: () => undefined }
  const r = (await run(a, { output: (c) => sink.write(c), events })) as Result
  if (!io.stdout) io.out(collected.replace(/\n$/, ''))
  io.err(values.json ? JSON.stringify({ ...r, format }) : line(r))
}
