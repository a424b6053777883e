/**
 * Where `orgscan serve` writes the access log: access lines are queued as they come and encoded (access-log.ts) in
 * batches (`BATCH_LINES`) into a block of memory, and the block is handed to `write` (stderr) when the next line would
 * not fit, at most a moment
 * (`maxDelayMs`) after a line was gathered (so an idle server's lines still appear promptly), and at `flush()` before
 * the process exits. Blocks are reused once written (`BlockWriter`): a busy server writes from the same two. A
 * line costs its UTF-8 encoding into the block; the system call is paid once per block
 * (docs/adr/0036-access-log-hand-encoded-pino-lines.md: pino's own destination, sonic-boom, measured 4–5 µs of CPU per
 * line here; an array of lines joined per block, 1.4 µs per line in a served process, plus 24 µs per 4 KB block written
 * through `process.stderr`).
 *
 * A block is whole lines. On a pipe it is at most PIPE_BUF (4,096) bytes, so one write(2) of it is atomic and the
 * workers of `orgscan serve --workers N`, writing on the one stderr they share, never mix their lines
 * (docs/adr/0042-workers-with-node-cluster.md). On a regular file a write(2) is never interleaved with another through
 * the same open file (Linux serialises them), so blocks there are 64 KB (`blockBytes`).
 */
import { fstatSync, writeSync } from 'node:fs'
import { encodeAccessLine, formatAccessLine, maxLineBytes, type AccessLine } from './access-log.ts'

export interface AccessSink {
  /** One formatted line (with its newline); pino's destination interface too. */
  write(line: string): void
  /**
   * One access line, queued and encoded with the next batch straight into the block (`encodeAccessLine`): the same
   * bytes as `write(formatAccessLine(…))`. The line object is read when the batch is encoded, so it must not change.
   */
  line(l: AccessLine, time: number, worker?: number): void
  /** Writes whatever is gathered, now. */
  flush(): void
}

/** Bytes a write to a pipe may have and still be atomic (POSIX PIPE_BUF on Linux). */
export const ATOMIC_WRITE_BYTES = 4096
/** The block on a regular file. */
export const FILE_BLOCK_BYTES = 64 * 1024

/**
 * Hands a block of whole lines to its destination. `release` is called once the destination no longer needs the
 * block's bytes (at once after a synchronous write, in the callback of a stream's write), and the sink may then fill
 * that memory again; a block never released is never written to again. Blocks are reused rather than allocated per
 * write: a fresh 64 KB block per write lived through several young-generation collections of a busy server, was
 * promoted, and its bytes counted towards the next full collection
 * (docs/adr/0036-access-log-hand-encoded-pino-lines.md).
 */
export type BlockWriter = (block: Buffer, release: () => void) => void

/** Released blocks kept for reuse: one is being written while the next fills, so two are the steady state. */
const SPARE_BLOCKS = 2

/**
 * Access lines are queued as they come and encoded this many at a time (or when the timer fires, a text line is
 * written, or at `flush()`), not one by one in the request's own code: encoded in the code that ends each request, the
 * log cost about a tenth of a cache hit's throughput, of which the encoding's own CPU was under 2 %; queued and encoded
 * in batches, 2–6 % in the bench with the rest of the log's work (docs/adr/0036-access-log-hand-encoded-pino-lines.md).
 */
export const BATCH_LINES = 128

/**
 * A line longer than a block is a block of its own. A block `write` fails to take (stderr closed, a full disk) is
 * dropped: the access log never fails the request that writes a line, nor the timer that flushes one.
 */
export function createAccessSink(write: BlockWriter, opts: { maxDelayMs?: number; blockBytes?: number } = {}): AccessSink {
  const maxDelayMs = opts.maxDelayMs ?? 200
  const size = opts.blockBytes ?? ATOMIC_WRITE_BYTES
  const spare: Buffer[] = []
  let block: Buffer = Buffer.allocUnsafeSlow(size)
  let used = 0
  // One timer for the life of the sink, re-armed (refresh) by the first line after it fired: not one per block.
  let timer: NodeJS.Timeout | undefined
  let armed = false
  const handOver = () => {
    if (used === 0) return
    const full = block
    const n = used
    block = spare.pop() ?? Buffer.allocUnsafeSlow(size)
    used = 0
    let released = false
    send(full.subarray(0, n), () => {
      if (released) return
      released = true
      if (spare.length < SPARE_BLOCKS) spare.push(full)
    })
  }
  const send = (b: Buffer, release: () => void) => {
    try {
      write(b, release)
    } catch {
      // Dropped: see above. The destination did not take the block, so its memory is free again.
      release()
    }
  }
  const noRelease = () => undefined
  // Access lines waiting to be encoded: kept as they came (the line, its time, its worker) and encoded in batches.
  const queued: Array<AccessLine | undefined> = new Array(BATCH_LINES).fill(undefined)
  const times = new Float64Array(BATCH_LINES)
  const slots: Array<number | undefined> = new Array(BATCH_LINES).fill(undefined)
  let waiting = 0
  const encodeQueued = () => {
    // The queue is emptied before its lines are encoded: a line is never encoded twice.
    const n = waiting
    waiting = 0
    for (let i = 0; i < n; i++) {
      const l = queued[i]!
      queued[i] = undefined
      encodeOne(l, times[i], slots[i])
    }
  }
  const encodeOne = (l: AccessLine, time: number, worker: number | undefined) => {
    const most = maxLineBytes(l)
    if (used + most > size) {
      if (most > size) return writeText(formatAccessLine(l, time, worker))
      handOver()
    }
    used = encodeAccessLine(block, used, l, time, worker)
  }
  const onTimer = () => {
    armed = false
    encodeQueued()
    handOver()
  }
  const started = () => {
    if (armed) return
    armed = true
    if (timer) timer.refresh()
    else timer = setTimeout(onTimer, maxDelayMs).unref()
  }
  const writeText = (line: string) => {
    // A line's UTF-8 is at most 3 bytes per UTF-16 unit: measured exactly only when it might not fit.
    if (used + line.length * 3 > size) {
      const n = Buffer.byteLength(line)
      if (used + n > size) handOver()
      if (n > size) return send(Buffer.from(line), noRelease)
    }
    used += block.write(line, used)
  }
  return {
    line(l, time, worker) {
      queued[waiting] = l
      times[waiting] = time
      slots[waiting] = worker
      if (++waiting === BATCH_LINES) encodeQueued()
      started()
    },
    write(line) {
      // After the access lines given before it.
      encodeQueued()
      writeText(line)
      started()
    },
    flush() {
      encodeQueued()
      handOver()
    },
  }
}

/**
 * The access log's sink on this process's stderr: blocks of 64 KB written directly (write(2), synchronously) when
 * stderr is a regular file; otherwise (a pipe, a terminal) blocks of 4 KB through `process.stderr`, which waits for a
 * full pipe instead of failing.
 */
export function stderrAccessSink(): AccessSink {
  let file = false
  try {
    file = fstatSync(2).isFile()
  } catch {
    // No stderr to inspect: the stream decides.
  }
  if (file) {
    return createAccessSink((block, release) => {
      writeAll(2, block)
      release()
    }, { blockBytes: FILE_BLOCK_BYTES })
  }
  return createAccessSink((block, release) => void process.stderr.write(block, release))
}

function writeAll(fd: number, block: Buffer): void {
  let off = 0
  while (off < block.length) off += writeSync(fd, block, off)
}
