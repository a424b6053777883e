/**
 * The PostgreSQL side of the test templates (templates.ts): dropping the template databases of runs, and the databases
 * of test processes that are gone.
 */
import postgres from 'postgres'

/** Drops the template databases `orgscan_tpl_<run>_*` of the runs `which` selects. */
export async function dropRunDatabases(adminUrl: string, which: (run: string) => boolean): Promise<void> {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined })
  try {
    const rows = await admin<{ datname: string }[]>`SELECT datname FROM pg_database WHERE datname LIKE 'orgscan\\_tpl\\_%'`
    for (const { datname } of rows) {
      const run = /^orgscan_tpl_(\d+)_/.exec(datname)?.[1]
      if (run && which(run)) await admin.unsafe(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`)
    }
  } finally {
    await admin.end()
  }
}

/**
 * Drops the databases `orgscan_t_<pid>_*` (test-db.ts) whose test process `alive` says is gone: a test file killed by
 * tap's timeout never runs its teardown, and its database would otherwise stay on the server for good.
 */
export async function dropOrphanTestDatabases(adminUrl: string, alive: (pid: number) => boolean): Promise<string[]> {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined })
  const dropped: string[] = []
  try {
    const rows = await admin<{ datname: string }[]>`SELECT datname FROM pg_database WHERE datname LIKE 'orgscan\\_t\\_%'`
    for (const { datname } of rows) {
      const pid = /^orgscan_t_(\d+)_[0-9a-f]+$/.exec(datname)?.[1]
      if (pid && !alive(Number(pid))) {
        await admin.unsafe(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`)
        dropped.push(datname)
      }
    }
  } finally {
    await admin.end()
  }
  return dropped
}
