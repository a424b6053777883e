/**
 * Workers' stderr (logs and the access log) reaches the primary through a pipe of its own per worker, and the
 * primary writes it on its stderr in whole lines only. Workers writing on one shared stderr could interleave inside
 * a line: pino writes blocks of up to 16 KB, and a write to a pipe is atomic only up to 4 KB (PIPE_BUF), so under a
 * slow reader two blocks can mix. With the relay, the primary is the only writer, and its writes end on line ends.
 */
import type { Readable } from 'node:stream'

/** Copies `from` to `write` in blocks that end on a line end; a last unterminated line gets its line end at the close. */
export function relayLines(from: Readable, write: (block: Buffer) => void): void {
  let partial: Buffer | undefined
  from.on('data', (chunk: Buffer) => {
    const end = chunk.lastIndexOf(0x0a)
    if (end < 0) {
      partial = partial ? Buffer.concat([partial, chunk]) : chunk
      return
    }
    const head = chunk.subarray(0, end + 1)
    write(partial ? Buffer.concat([partial, head]) : head)
    partial = end + 1 < chunk.length ? chunk.subarray(end + 1) : undefined
  })
  from.on('end', () => {
    if (partial) write(Buffer.concat([partial, Buffer.from('\n')]))
    partial = undefined
  })
}
