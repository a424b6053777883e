/**
 * When the primary of `orgscan serve --workers N` restarts a worker that died (docs/operating.md "Several
 * processes"). A worker that had been ready for `minUptimeMs` is restarted at once; one that died sooner (or before
 * it was ready) counts as a failed start, and each further failed start in a row doubles the wait, from `baseDelayMs`
 * to at most `maxDelayMs`, so a worker that dies at start every time never spins the CPU. When `maxFailures` restarts
 * in a row have failed the primary gives up: something every worker shares is wrong (the database, the configuration), and
 * a service that exits lets its supervisor see it, where one that limps along on fewer workers would hide it.
 */
export interface RestartPolicy {
  minUptimeMs: number
  baseDelayMs: number
  maxDelayMs: number
  maxFailures: number
}

export const RESTART_POLICY: RestartPolicy = { minUptimeMs: 10_000, baseDelayMs: 500, maxDelayMs: 30_000, maxFailures: 6 }

export type RestartDecision = { failures: number; delayMs: number } | { failures: number; giveUp: true }

/**
 * What to do about a worker that died: `failures` failed starts in a row so far in its slot, `readyForMs` how long it
 * had been ready (undefined: it never was).
 */
export function decideRestart(failures: number, readyForMs: number | undefined, p: RestartPolicy = RESTART_POLICY): RestartDecision {
  if (readyForMs !== undefined && readyForMs >= p.minUptimeMs) return { failures: 0, delayMs: 0 }
  const n = failures + 1
  if (n > p.maxFailures) return { failures: n, giveUp: true }
  return { failures: n, delayMs: Math.min(p.maxDelayMs, p.baseDelayMs * 2 ** (n - 1)) }
}
