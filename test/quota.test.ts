/** The files of test/quota/ (the account quota: its windows, the burst guard, the engine on PostgreSQL, several processes on one database), in this one process (test/helpers/file-test.ts). */
import { runGroup } from './helpers/file-test.ts'

await runGroup(new URL('./quota/', import.meta.url), (name) => import(`./quota/${name}.test.ts`))
