/** The files of test/runtime/ (runtime modules on their own: configuration, registry, RQL, the response cache), in this one process (test/helpers/file-test.ts). */
import { runGroup } from './helpers/file-test.ts'

await runGroup(new URL('./runtime/', import.meta.url), (name) => import(`./runtime/${name}.test.ts`))
