/** The PostgreSQL side of the test templates (templates.ts): dropping the template databases of runs. */
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
