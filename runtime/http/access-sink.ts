/**
 * Where `orgscan serve` writes the access log: each line formatted (access-log.ts), this sink writes the lines into a
 * block of memory and hands the block to `write` (stderr) when the next line would not fit, a moment after the first
 * line of a block (so an idle server's lines still appear promptly), and at `flush()` before the process exits. A
 * line costs its UTF-8 encoding into the block; the system call is paid once per block (docs/decisions.md
 * "Operations": pino's own destination, sonic-boom, measured 4–5 µs of CPU per line here; an array of lines joined per
 * block, 1.4 µs per line in a served process, plus 24 µs per 4 KB block written through `process.stderr`).
 *
 * A block is whole lines. On a pipe it is at most PIPE_BUF (4,096) bytes, so one write(2) of it is atomic and the
 * workers of `orgscan serve --workers N`, writing on the one stderr they share, never mix their lines
 * (docs/decisions.md "Workers"). On a regular file a write(2) is never interleaved with another through the same
 * open file (Linux serialises them), so blocks there are 64 KB (`blockBytes`).
 */
import { fstatSync, writeSync } from 'node:fs'
import { encodeAccessLine, formatAccessLine, maxLineBytes, type AccessLine } from './access-log.ts'

export interface AccessSink {
  /** One formatted line (with its newline); pino's destination interface too. */
  write(line: string): void
  /** One access line, encoded straight into the block (`encodeAccessLine`): the same bytes as `write(formatAccessLine(…))`. */
  line(l: AccessLine, time: number, worker?: number): void
  /** Writes whatever is gathered, now. */
  flush(): void
}

/** Bytes a write to a pipe may have and still be atomic (POSIX PIPE_BUF on Linux). */
export const ATOMIC_WRITE_BYTES = 4096
/** The block on a regular file. */
export const FILE_BLOCK_BYTES = 64 * 1024

/**
 * `write` gets each block as a buffer of its own (never reused by the sink), so it may keep it. A line longer than a
 * block is a block of its own. A block `write` fails to take (stderr closed, a full disk) is dropped: the access log
 * never fails the request that writes a line, nor the timer that flushes one.
 */
export function createAccessSink(write: (block: Buffer) => void, opts: { maxDelayMs?: number; blockBytes?: number } = {}): AccessSink {
  const maxDelayMs = opts.maxDelayMs ?? 200
  const size = opts.blockBytes ?? ATOMIC_WRITE_BYTES
  let block = Buffer.allocUnsafe(size)
  let used = 0
  let timer: NodeJS.Timeout | undefined
  const flush = () => {
    if (timer) clearTimeout(timer)
    timer = undefined
    if (used === 0) return
    const full = block.subarray(0, used)
    block = Buffer.allocUnsafe(size)
    used = 0
    send(full)
  }
  const send = (b: Buffer) => {
    try {
      write(b)
    } catch {
      // Dropped: see above.
    }
  }
  const started = () => {
    if (!timer) {
      timer = setTimeout(flush, maxDelayMs)
      timer.unref()
    }
  }
  const writeLine = (line: string) => {
    // A line's UTF-8 is at most 3 bytes per UTF-16 unit: measured exactly only when it might not fit.
    if (used + line.length * 3 > size) {
      const n = Buffer.byteLength(line)
      if (used + n > size) flush()
      if (n > size) return send(Buffer.from(line))
    }
    used += block.write(line, used)
    started()
  }
  return {
    line(l, time, worker) {
      const most = maxLineBytes(l)
      if (used + most > size) {
        if (most > size) return writeLine(formatAccessLine(l, time, worker))
        flush()
      }
      used = encodeAccessLine(block, used, l, time, worker)
      started()
    },
    write: writeLine,
    flush,
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
  if (file) return createAccessSink((block) => writeAll(2, block), { blockBytes: FILE_BLOCK_BYTES })
  return createAccessSink((block) => void process.stderr.write(block))
}

function writeAll(fd: number, block: Buffer): void {
  let off = 0
  while (off < block.length) off += writeSync(fd, block, off)
}
