/** The files of test/processes/ (served processes the tests start: workers, faults, replicas, several processes over one database), in this one process (test/helpers/file-test.ts). */
import { runGroup } from './helpers/file-test.ts'

await runGroup(new URL('./processes/', import.meta.url), (name) => import(`./processes/${name}.test.ts`))
