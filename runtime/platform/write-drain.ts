/**
 * Backpressure for a writer that must not buffer without bound: after a `write` that returned false, wait for
 * `drain`, or fail with `failure()` when `failEvent` comes first ('error' for a file or pipe, 'close' for a socket the
 * other side left). Both listeners are removed whichever comes first.
 */
import type { EventEmitter } from 'node:events'

export function drained(stream: EventEmitter, failEvent: 'error' | 'close', failure: () => Error | undefined): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onDrain = () => {
      stream.off(failEvent, onFail)
      resolve()
    }
    const onFail = () => {
      stream.off('drain', onDrain)
      reject(failure())
    }
    stream.once('drain', onDrain)
    stream.once(failEvent, onFail)
  })
}
