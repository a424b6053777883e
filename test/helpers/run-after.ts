/** tap's `after` script (package.json "tap"): removes this run's database templates (templates.ts). */
import { removeTemplateFiles, runId } from './templates.ts'
import { dropRunDatabases } from './template-databases.ts'

const run = runId()
if (run) {
  removeTemplateFiles(run)
  if (process.env.TEST_DATABASE_URL) await dropRunDatabases(process.env.TEST_DATABASE_URL, (r) => r === run)
}
