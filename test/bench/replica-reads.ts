/**
 * Bench target (called by run.ts): the authenticated list read from a streaming replica, against the same read from
 * the primary. Both on the miss path — the response cache off and a distinct page every request — so every request
 * runs its statement: on the replica here (`replica-miss`), on the primary in run.ts's `nocache-miss`, alternating
 * in the same rounds. The replica is a real one (test/helpers/replica.ts), made after the seed so it holds the bench
 * database. On this machine it shares the two cores with the primary and the server, so no gain is expected: the
 * figure shows that it works and what it costs.
 */
import { createReplica, type Replica } from '../helpers/replica.ts'
import { SERVE_ARGS, type Load, type PathStream } from './load.ts'


export interface ReplicaBench {
  target: { name: string; args: string[]; env: Record<string, string>; loads: (url: string) => Promise<Array<[string, Load]>> }
  /** The ratio line for the summary: replica against primary, both misses. */
  report(summary: Record<string, { rps: number }>): string
  close(): Promise<void>
}

/** The replica target, or undefined (with the reason on stderr) where no replica can be made. */
export async function replicaBench(o: { adminUrl: string; dbUrl: string; path: string; auth: Record<string, string>; pages: () => PathStream }): Promise<ReplicaBench | undefined> {
  const made = await createReplica(o.adminUrl)
  if ('skip' in made) {
    process.stderr.write(`replica reads not measured: ${made.skip}\n`)
    return undefined
  }
  const replica: Replica = made
  return {
    target: {
      name: 'service reading from a replica, without the cache',
      args: SERVE_ARGS,
      env: { ORGSCAN_CACHE_MB: '0', DATABASE_REPLICA_URL: replica.urlOf(o.dbUrl) },
      loads: async (url) => [['replica-miss', { url: url + o.path, headers: o.auth, paths: o.pages() }]],
    },
    report(summary) {
      const r = summary['replica-miss']?.rps
      const p = summary['nocache-miss']?.rps
      if (!r || !p) return '  replica reads: not measured'
      return `  misses, cache off: from the replica / from the primary ${(r / p).toFixed(2)} (${r.toFixed(0)} against ${p.toFixed(0)} req/s; the replica shares these 2 cores, so no gain is expected)`
    },
    close: () => replica.stop(),
  }
}
