/**
 * tap's `before` script (package.json "tap"): builds this run's database templates (templates.ts) — on PostgreSQL when
 * TEST_DATABASE_URL is set, else on the embedded database — and, meanwhile, its test bundles (test-bundles.mjs), after
 * removing the templates and bundles of runs whose runner is gone; the command's bundles when a source changed
 * since they were built, since bin/orgscan.js, which every spawned server and command runs, never builds them; and the
 * test tools (test/tools/install.mjs) when they are not installed yet, so the tests that need them find them there.
 */
import { cpSync, writeFileSync } from 'node:fs'
import postgres from 'postgres'
import { registry } from '../../resources/index.ts'
import { seedDemo, type SeedResult } from '../../demo/seed.ts'
import { compileRegistry } from '../../runtime/core/registry.ts'
import { openDatabase } from '../../runtime/platform/db/connect.ts'
import { migrate } from '../../runtime/platform/db/migrate.ts'
import { withDatabase } from './test-db.ts'
import { alive, removeTemplateFiles, runId, SEED_SCALE, templateNames, templateRuns } from './templates.ts'
import { dropOrphanTestDatabases, dropRunDatabases } from './template-databases.ts'
import { buildTestBundles, removeTestBundles } from './test-bundles.mjs'
import { buildStale } from '../../scripts/build.js'
import { ensureTestTools } from '../tools/install.mjs'

const run = runId()
if (!run) throw new Error('run-before.ts runs as tap’s before script')
const pg = process.env.TEST_DATABASE_URL
const t0 = Date.now()

for (const stale of templateRuns().filter((r) => !r.alive)) removeTemplateFiles(stale.run)
removeTestBundles(undefined, (r: string) => !alive(Number(r)))
// esbuild works in a process of its own while the templates are built here. A failed build is reported, not fatal:
// the test files then run from their sources.
const bundling = buildTestBundles(run).then(
  (n) => `${n} test bundles`,
  (e: Error) => `no test bundles (${e.message.split('\n')[0]}): test files run from their sources`,
)
const commandBuild = buildStale().then(
  (built: string[]) => (built.length ? `, ${built.join(' and ')} rebuilt` : ''),
  (e: Error) => `, the command not built (${e.message.split('\n')[0]}): spawned commands run its sources through tsx`,
)
// npm ci of the test tools (network and unpacking) runs while the templates are built here. Not being able to install
// them is no failure of the run: the tests that need them say so (test/helpers/test-tools.ts).
const tooling = ensureTestTools().then((r) =>
  'error' in r ? `; test tools NOT installed (${r.error}); the tests that need them skip or fail` : r.installedMs !== undefined ? `; test tools installed in ${(r.installedMs / 1000).toFixed(1)} s` : '',
)
// Only runs whose runner is gone: another test run may be using the same PostgreSQL server right now.
if (pg) {
  await dropRunDatabases(pg, (r) => r !== run && !alive(Number(r)))
  await dropOrphanTestDatabases(pg, alive)
}

const bare = templateNames(run, 'bare')
const empty = templateNames(run, 'empty')
const seeded = templateNames(run, 'seeded')
let seed: SeedResult
if (pg) {
  const admin = postgres(pg, { max: 1, onnotice: () => undefined })
  try {
    await admin.unsafe(`CREATE DATABASE "${empty.database}"`)
    const e = postgres(withDatabase(pg, empty.database), { max: 1, onnotice: () => undefined })
    await migrate(e)
    await e.end()
    await admin.unsafe(`CREATE DATABASE "${seeded.database}" TEMPLATE "${empty.database}"`)
    const s = postgres(withDatabase(pg, seeded.database), { max: 1, onnotice: () => undefined })
    seed = await seedDemo(s, compileRegistry(registry), { scale: SEED_SCALE })
    await s.end()
  } finally {
    await admin.end()
  }
} else {
  // initdb once: the bare template is the new folder before migration (for the tests of migration and of SQL itself)
  await (await openDatabase({ dataDir: bare.dir })).close()
  cpSync(bare.dir, empty.dir, { recursive: true })
  const e = await openDatabase({ dataDir: empty.dir })
  await migrate(e.sql)
  await e.close()
  cpSync(empty.dir, seeded.dir, { recursive: true })
  const s = await openDatabase({ dataDir: seeded.dir })
  seed = await seedDemo(s.sql, compileRegistry(registry), { scale: SEED_SCALE })
  await s.close()
}
const marker = (s: SeedResult | null) => JSON.stringify({ seed: s, embedded: !pg, postgres: !!pg })
if (!pg) writeFileSync(bare.seedFile, marker(null))
writeFileSync(empty.seedFile, marker(null))
writeFileSync(seeded.seedFile, marker(seed))
const bundled = await bundling
const command = await commandBuild
const tools = await tooling
process.stderr.write(`# database templates (${pg ? 'PostgreSQL' : 'embedded'}) and ${bundled} ready${command}${tools} in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`)
