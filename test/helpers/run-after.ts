/**
 * tap's `after` script (package.json "tap"): removes this run's database templates (templates.ts) and test bundles
 * (test-bundles.mjs), and stops and removes any streaming replica a killed test file left running (replica.ts).
 */
import { removeTemplateFiles, runId } from './templates.ts'
import { dropRunDatabases } from './template-databases.ts'
import { removeStaleReplicas } from './replica.ts'
import { removeTestBundles } from './test-bundles.mjs'

const run = runId()
removeStaleReplicas()
if (run) {
  removeTemplateFiles(run)
  removeTestBundles(run, () => false)
  if (process.env.TEST_DATABASE_URL) await dropRunDatabases(process.env.TEST_DATABASE_URL, (r) => r === run)
}
