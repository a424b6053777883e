/** The files of test/rest/ (REST behaviour over the wire), in this one process (test/helpers/file-test.ts). */
import { runGroup } from './helpers/file-test.ts'

await runGroup(new URL('./rest/', import.meta.url), (name) => import(`./rest/${name}.test.ts`))
