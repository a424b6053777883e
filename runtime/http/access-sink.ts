/**
 * Where `orgscan serve` writes the access log: pino formats each line, and this sink gathers the lines in memory and
 * hands them to `write` (stderr) a block at a time — when a block is full, or a moment after the first line of a block
 * (so an idle server's lines still appear promptly), and at `flush()` before the process exits. A line costs an append
 * to an array; the system call is paid once per block (docs/decisions.md "Operations": pino's own destination,
 * sonic-boom, measured 4–5 µs of CPU per line here against about 0.2 µs for this).
 */
export interface AccessSink {
  /** pino's destination interface: one formatted line (with its newline). */
  write(line: string): void
  /** Writes whatever is gathered, now. */
  flush(): void
}

export function createAccessSink(write: (block: string) => void, opts: { blockChars?: number; maxDelayMs?: number } = {}): AccessSink {
  const blockChars = opts.blockChars ?? 16_384
  const maxDelayMs = opts.maxDelayMs ?? 200
  let lines: string[] = []
  let size = 0
  let timer: NodeJS.Timeout | undefined
  const flush = () => {
    if (timer) clearTimeout(timer)
    timer = undefined
    if (size === 0) return
    const block = lines.join('')
    lines = []
    size = 0
    write(block)
  }
  return {
    write(line) {
      lines.push(line)
      size += line.length
      if (size >= blockChars) flush()
      else if (!timer) {
        timer = setTimeout(flush, maxDelayMs)
        timer.unref()
      }
    },
    flush,
  }
}
