/**
 * What each MCP prompt's job costs an assistant: runs every prompt's plan with the official MCP client as an assistant
 * would (test/helpers/prompt-plan.ts) and counts the characters of the tool results of each step and of each job (the
 * JSON text of each call's content and structuredContent). Used by `npm run bench` and `npm run bench:prompts`.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { prompts } from '../../resources/index.ts'
import { runPromptPlan } from '../helpers/prompt-plan.ts'

/** The most characters of tool results one job may cost (docs/adr/0155-prompt-plans.md). */
export const PROMPT_BUDGET = 30_000

export interface PromptJob { name: string; chars: number; failedCalls: number; steps: Array<{ tool: string; chars: number; what: string }> }

const fmt = (n: number) => n.toLocaleString('en-US')

export async function measurePromptJobs(opts: { mcpUrl: string; authorization: string; orgId: string; log: (line: string) => void }): Promise<PromptJob[]> {
  const client = new Client({ name: 'orgscan-bench-prompts', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(opts.mcpUrl), { requestInit: { headers: { authorization: opts.authorization } } }))
  const jobs: PromptJob[] = []
  try {
    for (const p of prompts) {
      const run = await runPromptPlan(client, p.name, { orgId: opts.orgId })
      const job: PromptJob = { name: p.name, chars: run.chars, failedCalls: 0, steps: [] }
      opts.log(`${fmt(run.chars).padStart(8)}  ${p.name}${run.chars > PROMPT_BUDGET ? '  OVER THE TARGET' : ''}`)
      for (const [i, s] of run.steps.entries()) {
        const meta = s.calls[0]?.structured?.meta
        const errors = s.calls.filter((c) => c.isError)
        const chars = s.calls.reduce((a, c) => a + c.chars, 0)
        const what = s.step.from?.each ? `${s.calls.length} calls` : meta?.groups !== undefined ? `${s.records.length} of ${meta.groups} groups, ${meta.total} records` : `${s.records.length} of ${meta?.total} records`
        job.failedCalls += errors.length
        job.steps.push({ tool: s.step.tool, chars, what })
        opts.log(`${fmt(chars).padStart(16)}  ${i + 1}. ${s.step.tool}: ${what}${errors.length ? `, ${errors.length} failed: ${errors[0].structured?.message}` : ''}`)
      }
      jobs.push(job)
    }
  } finally {
    await client.close()
  }
  return jobs
}
