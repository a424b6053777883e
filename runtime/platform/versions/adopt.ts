/**
 * The first-start default of the version table (docs/adr/0038-version-table-in-database.md): ORGSCAN_VERSIONS and
 * ORGSCAN_MCP_VERSIONS, as earlier releases read them, are adopted into the database by the first start of a
 * database whose table was never set (by such a start or by `orgscan versions`); afterwards they are ignored, with a
 * warning, and the table is changed only with `orgscan versions`. One process adopts: the marker row is inserted in
 * the same transaction.
 */
import type postgres from 'postgres'
import type { Logger } from '../../core/log.ts'
import type { Surface } from '../../core/plan.ts'
import type { VersionEntry } from '../../core/version-state.ts'
import { markInitialized, writeVersion } from './store.ts'
import { firstStartProblems } from './rules.ts'
import { ConfigError } from '../config.ts'

const VARIABLE: Record<Surface, string> = { rest: 'ORGSCAN_VERSIONS', mcp: 'ORGSCAN_MCP_VERSIONS' }

export async function adoptFirstStartVersions(sql: postgres.Sql, initial: Partial<Record<Surface, readonly VersionEntry[]>>, now: Date, log: Logger): Promise<void> {
  const given = (Object.entries(initial) as Array<[Surface, readonly VersionEntry[] | undefined]>).filter(([, e]) => e !== undefined) as Array<[Surface, readonly VersionEntry[]]>
  const adopted = await sql.begin(async (tx) => {
    if (!(await markInitialized(tx, given.length ? 'environment' : 'default'))) return false
    // Adopted, a table takes the lifecycle's rules as `orgscan versions` would have: refused whole (the start fails,
    // nothing written), never adopted in part.
    for (const [surface, entries] of given) {
      const problems = firstStartProblems(surface, entries, now.getTime())
      if (problems.length) throw new ConfigError(`${VARIABLE[surface]}: ${problems.join('; ')}`)
    }
    for (const [surface, entries] of given) {
      await tx`DELETE FROM api_versions WHERE surface = ${surface} AND name <> ALL(${entries.map((e) => e.name)}::text[])`
      for (const e of entries) await writeVersion(tx, surface, e.name, e.status, e.sunsetDate ?? null, now)
    }
    return true
  })
  const names = given.map(([s]) => VARIABLE[s]).join(' and ')
  if (!names) return
  if (adopted) log.info({ msg: `versions: adopted ${names} into the database; from now on the table is changed with orgscan versions, and the variables are ignored` })
  else log.warn({ msg: `versions: ${names} ignored: the version table lives in the database (orgscan versions list); remove the variables` })
}
