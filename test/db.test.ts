/** The files of test/db/ (the database layer: connecting, errors, deadlines, prepared statements, the embedded wire server, the schema, the demo seed, the org-state cache refreshed ahead), in this one process (test/helpers/file-test.ts). */
import { runGroup } from './helpers/file-test.ts'

await runGroup(new URL('./db/', import.meta.url), (name) => import(`./db/${name}.test.ts`))
