/** The files of test/ops/ (health, metrics, the access log, retention, TLS, the version lifecycle), in this one process (test/helpers/file-test.ts). */
import { runGroup } from './helpers/file-test.ts'

await runGroup(new URL('./ops/', import.meta.url), (name) => import(`./ops/${name}.test.ts`))
