/** The files of test/docs/ (the generated reference, its examples and the typed client), in this one process (test/helpers/file-test.ts). */
import { runGroup } from './helpers/file-test.ts'

await runGroup(new URL('./docs/', import.meta.url), (name) => import(`./docs/${name}.test.ts`))
