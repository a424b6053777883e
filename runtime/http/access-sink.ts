/**
 * Where `orgscan serve` writes the access log: each line formatted (access-log.ts), this sink gathers the lines in memory and
 * hands them to `write` (stderr) a block at a time — when the next line would not fit in the block, a moment after the
 * first line of a block (so an idle server's lines still appear promptly), and at `flush()` before the process exits.
 * A line costs an append to an array; the system call is paid once per block (docs/decisions.md "Operations": pino's
 * own destination, sonic-boom, measured 4–5 µs of CPU per line here against about 0.2 µs for this).
 *
 * A block is whole lines of at most PIPE_BUF (4,096) bytes, so one write(2) of it is atomic on a pipe and lands in one
 * piece in a file: the workers of `orgscan serve --workers N` write on the one stderr they share and their lines never
 * mix (docs/decisions.md "Workers").
 */
export interface AccessSink {
  /** One formatted line (with its newline); pino's destination interface too. */
  write(line: string): void
  /** Writes whatever is gathered, now. */
  flush(): void
}

/** Bytes a write to a pipe may have and still be atomic (POSIX PIPE_BUF on Linux). */
export const ATOMIC_WRITE_BYTES = 4096

export function createAccessSink(write: (block: string) => void, opts: { maxDelayMs?: number } = {}): AccessSink {
  const maxDelayMs = opts.maxDelayMs ?? 200
  let lines: string[] = []
  let bytes = 0
  let timer: NodeJS.Timeout | undefined
  const flush = () => {
    if (timer) clearTimeout(timer)
    timer = undefined
    if (bytes === 0) return
    const block = lines.join('')
    lines = []
    bytes = 0
    write(block)
  }
  return {
    write(line) {
      const n = Buffer.byteLength(line)
      if (bytes + n > ATOMIC_WRITE_BYTES) flush()
      lines.push(line)
      bytes += n
      if (!timer) {
        timer = setTimeout(flush, maxDelayMs)
        timer.unref()
      }
    },
    flush,
  }
}
