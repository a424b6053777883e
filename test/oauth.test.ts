/** The files of test/oauth/ (OAuth 2.0 sign-in, consent and tokens), in this one process (test/helpers/file-test.ts). */
import { runGroup } from './helpers/file-test.ts'

await runGroup(new URL('./oauth/', import.meta.url), (name) => import(`./oauth/${name}.test.ts`))
