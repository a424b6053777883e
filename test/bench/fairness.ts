/**
 * `npm run bench`, the fairness pair (docs/adr/0100-fair-share.md): account B reads one request every 100 ms, alone
 * and while account A keeps 16 of the most expensive legal filters in flight (test/attack/tenant-starvation.ts), on
 * one served process with default settings, in alternating turns. Two kinds of B reads: its few lists again (answered
 * from the response cache), and pages never asked before (each one reads the database). Reported per kind: B's p50
 * and p99 alone and under the attack (the medians of the turns), their ratio (target: p99 under the attack at most 3×
 * alone), B's statuses and A's. Called by run.ts with its own tools; `npm run bench:fairness` runs it alone, on the
 * demo data seeded at BENCH_SCALE (1) into a throwaway PostgreSQL database (BENCH_DATABASE_URL, default
 * TEST_DATABASE_URL or the local server), with BENCH_SECONDS (10) a turn and BENCH_ROUNDS (2) pairs.
 */
import { randomBytes } from 'node:crypto'
import { openSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { registry } from '../../resources/index.ts'
import { seedDemo } from '../../demo/seed.ts'
import { compileRegistry } from '../../runtime/core/registry.ts'
import { migrate } from '../../runtime/platform/db/migrate.ts'
import { createKey, updateAccount } from '../../runtime/platform/admin.ts'
import { alternatingPairs, median, spawnServer, SERVE_ARGS, SERVE_ENV, type BenchTools } from './load.ts'
import { percentile, starvationAttack, type Party } from '../attack/tenant-starvation.ts'

export interface FairnessBench extends Pick<BenchTools, 'start' | 'stop' | 'serveArgs' | 'seconds' | 'log'> {
  attacker: Party
  victim: Party
  /** Pairs of turns (alone, attacked) per kind. */
  pairs: number
}

interface Turn {
  p50: number
  p99: number
  requests: number
  victim: Record<number, number>
  attacker: Record<number, number>
}

export interface FairnessKind {
  alone: { p50: number; p99: number }
  attacked: { p50: number; p99: number }
  /** p99 under the attack / p99 alone: target ≤ 3. */
  p99Ratio: number
  turns: Array<{ alone: Turn; attacked: Turn }>
}

export type FairnessResult = Record<'cached' | 'database', FairnessKind>

export async function benchFairness(d: FairnessBench): Promise<FairnessResult> {
  const { child, url } = await d.start(d.serveArgs, {})
  try {
    const turn = async (misses: boolean, alone: boolean, seconds = d.seconds): Promise<Turn> => {
      const r = await starvationAttack({ url, attacker: d.attacker, victim: d.victim, seconds, concurrency: 16, victimIntervalMs: 100, victimMisses: misses, alone })
      const lat = r.victim.latenciesMs
      return { p50: percentile(lat, 0.5), p99: percentile(lat, 0.99), requests: lat.length, victim: r.victim.statuses, attacker: r.attacker.statuses }
    }
    const result = {} as FairnessResult
    for (const [kind, misses] of [['cached', false], ['database', true]] as const) {
      await turn(misses, true, 2) // warm-up: B's key, quota lease, org state and lists at hand, as before any attack
      const turns = (await alternatingPairs(d.pairs, () => turn(misses, true), () => turn(misses, false))).map(([alone, attacked]) => ({ alone, attacked }))
      const alone = { p50: median(turns.map((x) => x.alone.p50)), p99: median(turns.map((x) => x.alone.p99)) }
      const attacked = { p50: median(turns.map((x) => x.attacked.p50)), p99: median(turns.map((x) => x.attacked.p99)) }
      result[kind] = { alone, attacked, p99Ratio: attacked.p99 / alone.p99, turns }
      for (const x of turns) d.log(`fairness ${kind.padEnd(8)} B alone p50 ${x.alone.p50.toFixed(1)} ms p99 ${x.alone.p99.toFixed(1)} ms ${JSON.stringify(x.alone.victim)}; attacked p50 ${x.attacked.p50.toFixed(1)} ms p99 ${x.attacked.p99.toFixed(1)} ms ${JSON.stringify(x.attacked.victim)}, A ${JSON.stringify(x.attacked.attacker)}`)
    }
    return result
  } finally {
    await d.stop(child)
  }
}

/** The large demo org's account (A) and another account with a scanned org (B), each with a key and a quota that lasts. */
export async function fairnessParties(sql: postgres.Sql, pepper: string, seed: Awaited<ReturnType<typeof seedDemo>>): Promise<{ attacker: Party; victim: Party }> {
  const large = seed.orgs.find((o) => o.large)!
  const other = seed.orgs.find((o) => o.accountId !== large.accountId && o.scans > 0)!
  const party = async (o: typeof large): Promise<Party> => {
    await updateAccount(sql, o.accountId, { dailyLimit: 1_000_000_000, monthlyLimit: 1_000_000_000 })
    const k = await createKey(sql, pepper, o.accountId)
    return { authorization: 'Basic ' + Buffer.from(`${k.keyId}:${k.secret}`).toString('base64'), orgId: o.salesforceId }
  }
  return { attacker: await party(large), victim: await party(other) }
}

/** The p50/p99 lines of a result, for the report. */
export function fairnessReport(r: FairnessResult): string {
  return (['cached', 'database'] as const)
    .map((k) => `  fairness (B's ${k === 'cached' ? 'lists from the response cache' : 'pages read from the database'}): alone p50 ${r[k].alone.p50.toFixed(1)} ms p99 ${r[k].alone.p99.toFixed(1)} ms; under A's attack p50 ${r[k].attacked.p50.toFixed(1)} ms p99 ${r[k].attacked.p99.toFixed(1)} ms; p99 ratio ${r[k].p99Ratio.toFixed(1)} (target ≤ 3)`)
    .join('\n')
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const adminUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
  const log = (s: string) => process.stderr.write(s + '\n')
  const dbName = `orgscan_fairness_${process.pid}_${randomBytes(3).toString('hex')}`
  const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined })
  await admin.unsafe(`CREATE DATABASE ${dbName}`)
  const dbUrl = adminUrl.replace(/\/[^/?]+(\?|$)/, `/${dbName}$1`)
  try {
    const sql = postgres(dbUrl, { max: 4, onnotice: () => undefined })
    await migrate(sql)
    const scale = Number(process.env.BENCH_SCALE ?? 1)
    log(`seeding scale ${scale} into ${dbName}…`)
    const seed = await seedDemo(sql, compileRegistry(registry), { scale })
    const pepper = randomBytes(32).toString('base64url')
    const parties = await fairnessParties(sql, pepper, seed)
    await sql.unsafe('VACUUM (ANALYZE)')
    await sql.end()
    const stderr = openSync(join(tmpdir(), `orgscan-fairness-${process.pid}.log`), 'w')
    const env = { ...SERVE_ENV, DATABASE_URL: dbUrl, ORGSCAN_PEPPER: pepper, PORT: '0', ORGSCAN_SEED_DEMO: 'false' }
    const r = await benchFairness({
      ...parties,
      start: (args, extra) => spawnServer(args, { ...env, ...extra }, stderr),
      stop: async (child) => {
        await new Promise<void>((done) => {
          child.once('exit', () => done())
          child.kill('SIGTERM')
        })
      },
      serveArgs: SERVE_ARGS,
      seconds: Number(process.env.BENCH_SECONDS ?? 10),
      pairs: Number(process.env.BENCH_ROUNDS ?? 2),
      log,
    })
    log(fairnessReport(r))
  } finally {
    await admin.unsafe(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`)
    await admin.end()
  }
}
