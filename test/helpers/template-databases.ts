/**
 * The PostgreSQL side of the test templates (templates.ts): dropping the template databases of runs, and the databases
 * of test processes that are gone.
 */
import postgres from 'postgres'

/** Drops the databases whose name `pattern` matches and whose first capture `which` selects; their names. */
async function dropMatching(adminUrl: string, pattern: RegExp, which: (id: string) => boolean): Promise<string[]> {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined })
  const dropped: string[] = []
  try {
    const rows = await admin<{ datname: string }[]>`SELECT datname FROM pg_database WHERE datname LIKE 'orgscan\\_t%'`
    for (const { datname } of rows) {
      const id = pattern.exec(datname)?.[1]
      if (id === undefined || !which(id)) continue
      await admin.unsafe(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`)
      dropped.push(datname)
    }
  } finally {
    await admin.end()
  }
  return dropped
}

/** Drops the template databases `orgscan_tpl_<run>_*` of the runs `which` selects. */
export async function dropRunDatabases(adminUrl: string, which: (run: string) => boolean): Promise<void> {
  await dropMatching(adminUrl, /^orgscan_tpl_(\d+)_/, which)
}

/**
 * Drops the databases `orgscan_t_<pid>_*` (test-db.ts) whose test process `alive` says is gone: a test file killed by
 * tap's timeout never runs its teardown, and its database would otherwise stay on the server for good.
 */
export function dropOrphanTestDatabases(adminUrl: string, alive: (pid: number) => boolean): Promise<string[]> {
  return dropMatching(adminUrl, /^orgscan_t_(\d+)_[0-9a-f]+$/, (pid) => !alive(Number(pid)))
}
