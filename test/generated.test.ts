/** The files of test/generated/ (tests generated from the registry: the conformance suite of every resource, every filter through the server), in this one process (test/helpers/file-test.ts). */
import { runGroup } from './helpers/file-test.ts'

await runGroup(new URL('./generated/', import.meta.url), (name) => import(`./generated/${name}.test.ts`))
