/**
 * `npm run bench:prompts [-- --embedded]`: what each MCP prompt's job costs an assistant on the largest demo org at full
 * scale. Seeds the demo data (BENCH_SCALE, default 1) into a throwaway PostgreSQL database (BENCH_DATABASE_URL or the
 * local server) or the embedded database, starts the service, and runs every prompt's plan with the official MCP
 * client as an assistant would (test/helpers/prompt-plan.ts). Prints the characters of the tool results of each step
 * and of each job (the JSON text of each call's content and structuredContent); the target is at most 30,000 a job
 * (docs/adr/0155-prompt-plans.md). Exits non-zero when a call fails or a job is over the target.
 */
import { randomBytes } from 'node:crypto'
import postgres from 'postgres'
import { prompts, registry } from '../../resources/index.ts'
import { seedDemo } from '../../demo/seed.ts'
import { loadConfig } from '../../runtime/platform/config.ts'
import { startService } from '../../runtime/service/service.ts'
import { createKey, updateAccount } from '../../runtime/platform/admin.ts'
import { createLogger } from '../../runtime/core/log.ts'
import { measurePromptJobs, PROMPT_BUDGET } from './prompt-jobs.ts'

const embedded = process.argv.includes('--embedded')
const scale = Number(process.env.BENCH_SCALE ?? 1)
const adminUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const name = `orgscan_prompts_${randomBytes(3).toString('hex')}`
const admin = embedded ? undefined : postgres(adminUrl, { max: 1, onnotice: () => undefined })
if (admin) await admin.unsafe(`CREATE DATABASE ${name}`)
const fmt = (n: number) => n.toLocaleString('en-US')
let failed = false
try {
  let seed: Awaited<ReturnType<typeof seedDemo>> | undefined
  const config = loadConfig({}, { port: 0, host: '127.0.0.1', dataDir: 'memory://', databaseUrl: admin ? adminUrl.replace(/\/[^/?]+(\?|$)/, `/${name}$1`) : undefined, pepper: 'p'.repeat(40), seedDemo: false })
  process.stderr.write(`seeding the demo data at scale ${scale} (${embedded ? 'embedded' : 'PostgreSQL'})…\n`)
  const svc = await startService(config, {
    registry,
    prompts,
    log: createLogger(() => undefined),
    onEmptyDatabase: async ({ db, resources }) => {
      seed = await seedDemo(db.sql, resources, { scale })
    },
  })
  try {
    const org = seed!.orgs.find((o) => o.large)!
    await updateAccount(svc.db.sql, org.accountId, { dailyLimit: 1_000_000, monthlyLimit: 1_000_000 })
    svc.ctx.quota.invalidate?.()
    const key = await createKey(svc.db.sql, svc.pepper, org.accountId)
    const authorization = 'Basic ' + Buffer.from(`${key.keyId}:${key.secret}`).toString('base64')
    process.stdout.write(`${org.name} (${org.salesforceId}), scale ${scale}: characters of tool results per job (target ≤ ${fmt(PROMPT_BUDGET)})\n`)
    const jobs = await measurePromptJobs({ mcpUrl: svc.mcpUrl, authorization, orgId: org.salesforceId, log: (l) => process.stdout.write(l + '\n') })
    if (jobs.some((j) => j.failedCalls > 0 || j.chars > PROMPT_BUDGET)) failed = true
  } finally {
    await svc.close()
  }
} finally {
  if (admin) {
    await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await admin.end()
  }
}
if (failed) process.exitCode = 1
