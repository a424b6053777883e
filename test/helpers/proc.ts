/** Processes on Linux, from /proc: the children of a process (the workers of `orgscan serve --workers N`). */
import { readdirSync, readFileSync } from 'node:fs'

/** The process ids whose parent is `pid`. */
export function childPids(pid: number): number[] {
  return readdirSync('/proc').filter((d) => /^\d+$/.test(d)).flatMap((d) => {
    try {
      // The fields after the command name (in parentheses, and it may contain spaces): state, ppid, …
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8')
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid ? [Number(d)] : []
    } catch {
      return []
    }
  })
}
