/** The files of test/install/ (what `npm install` builds and patches: the command's bundles, the driver's patch), in this one process (test/helpers/file-test.ts). */
import { runGroup } from './helpers/file-test.ts'

await runGroup(new URL('./install/', import.meta.url), (name) => import(`./install/${name}.test.ts`))
