/** The files of test/cli/ (the orgscan command: its build, its Node flags, serving, import and export), in this one process (test/helpers/file-test.ts). */
import { runGroup } from './helpers/file-test.ts'

await runGroup(new URL('./cli/', import.meta.url), (name) => import(`./cli/${name}.test.ts`))
