/**
 * Runs a prompt's plan as an assistant would: gets the prompt, takes its JSON plan, and makes every call it names in
 * order with the official MCP client, resolving `$item.<field>` (one call per record of the earlier step) and
 * `$items.<field>` (the values of its first records, each a quoted RQL string, comma-separated) as the prompt's text
 * says. Counts the characters of what the assistant receives from each call: the JSON text of its `content` and of its
 * `structuredContent`. Used by test/mcp/mcp-prompt-plans.test.ts and test/bench/prompt-cost.ts.
 */
import type { Client } from '@modelcontextprotocol/client'

export type Rec = Record<string, unknown>
type Value = string | number | readonly string[]

export interface PlanStep {
  tool: string
  arguments: Record<string, Value>
  why: string
  from?: { step: number; take: number; each?: boolean }
}

export interface PlanCall {
  arguments: Record<string, unknown>
  isError: boolean
  structured: { data?: Rec | Rec[]; meta?: Rec; error?: string; message?: string } | undefined
  /** Characters of the JSON of `content` plus those of `structuredContent`. */
  chars: number
}

export interface StepRun {
  step: PlanStep
  calls: PlanCall[]
  /** The records of the first call, for later steps to refer to (a get's record as a list of one). */
  records: Rec[]
}

export interface PlanRun {
  text: string
  plan: { steps: PlanStep[] }
  steps: StepRun[]
  /** Characters of every call's result, summed. */
  chars: number
}

/** A value as a quoted RQL string. */
const quoted = (v: unknown) => `"${String(v).replace(/["\\]/g, (c) => `\\${c}`)}"`

/** The arguments of one call: `$item.<field>` alone is the record's value as it is, else the references written as text. */
export function resolveArguments(args: Record<string, Value>, item: Rec | undefined, items: readonly Rec[]): Record<string, unknown> {
  const one = (v: string): unknown => {
    const whole = /^\$item\.(\w+)$/.exec(v)
    if (whole) return item![whole[1]]
    return v.replace(/\$items\.(\w+)/g, (_m, f: string) => items.map((r) => quoted(r[f])).join(',')).replace(/\$item\.(\w+)/g, (_m, f: string) => String(item![f]))
  }
  return Object.fromEntries(Object.entries(args).map(([k, v]) => [k, typeof v === 'string' ? one(v) : v]))
}

/** Gets the prompt and runs its plan; a step whose source step found nothing is skipped, as the text says. */
export async function runPromptPlan(client: Client, name: string, args: Record<string, string>): Promise<PlanRun> {
  const got = await client.getPrompt({ name, arguments: args })
  const text = (got.messages[0].content as { text: string }).text
  const plan = JSON.parse((got.messages[1].content as { resource: { text: string } }).resource.text) as { steps: PlanStep[] }
  const steps: StepRun[] = []
  let chars = 0
  for (const step of plan.steps) {
    const source = step.from ? steps[step.from.step - 1].records.slice(0, step.from.take) : []
    const calls = step.from?.each ? source.map((item) => resolveArguments(step.arguments, item, source)) : step.from && source.length === 0 ? [] : [resolveArguments(step.arguments, undefined, source)]
    const run: StepRun = { step, calls: [], records: [] }
    for (const a of calls) {
      const r = await client.callTool({ name: step.tool, arguments: a })
      const n = JSON.stringify(r.content ?? []).length + (r.structuredContent === undefined ? 0 : JSON.stringify(r.structuredContent).length)
      chars += n
      run.calls.push({ arguments: a, isError: r.isError === true, structured: r.structuredContent as PlanCall['structured'], chars: n })
    }
    const data = run.calls[0]?.structured?.data
    run.records = data === undefined ? [] : Array.isArray(data) ? data : [data]
    steps.push(run)
  }
  return { text, plan, steps, chars }
}
