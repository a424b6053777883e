/**
 * MCP prompts (declared in resources/ with `definePrompt`): validated against the tools at start-up, rendered for
 * `prompts/get` as instructions naming the exact calls to make, plus the same plan as JSON (an embedded resource)
 * for clients that follow it mechanically.
 *
 * Validation renders every prompt with sample arguments (each optional argument once absent and once present) and
 * checks every step as its tool would check a call: the tool exists, its arguments, filter, sort and fields are
 * accepted, and `$item`/`$items` refer to a field the earlier step's records carry (among its `fields`, or its `by`
 * and `count` for a grouped count). A prompt that names something that does not work stops start-up, like a bad
 * resource declaration.
 */
import type { GetPromptResult, Prompt } from '@modelcontextprotocol/server'
import type { PromptArgument, PromptDeclaration, PromptStep } from '../../core/define.ts'
import { isApiError } from '../../core/errors.ts'
import { RegistryError, type CompiledResource } from '../../core/registry.ts'
import { COUNT_TOOL, queryParam } from '../../core/operations.ts'
import type { McpTool } from './resource-tools.ts'
import { orgIdFormProblem } from '../../core/org-id.ts'

const REF = /\$(item|items)\.([A-Za-z][A-Za-z0-9]*)/g

/** An argument of a step as the plan carries it: a string (which may hold references), a number, or a list of names. */
type StepValue = string | number | readonly string[]

/** The JSON plan of a rendered prompt. */
export interface PromptPlan {
  steps: Array<PromptStep & { arguments: Record<string, StepValue> }>
}

const isNames = (v: unknown): v is readonly string[] => Array.isArray(v)

/**
 * The fields of the records a step answers: a grouped count's `by` fields and `count`; with `fields`, those and the
 * record's id; else every field of its records. Undefined for a tool that reads no resource of the registry.
 */
function recordFieldsOf(s: PromptStep, tools: ReadonlyMap<string, McpTool>): ReadonlySet<string> | undefined {
  if (s.tool === COUNT_TOOL) return new Set([...(isNames(s.arguments.by) ? s.arguments.by : []), 'count'])
  const c = tools.get(s.tool)?.resource
  const op = c?.ops.list?.tool === s.tool ? c.ops.list : c?.ops.get?.tool === s.tool ? c.ops.get : undefined
  if (!op) return undefined
  const fields = s.arguments.fields
  if (!isNames(fields)) return new Set(op.recordFields)
  const key = queryParam(op, 'fields')?.key
  return new Set([...fields, ...(key ? [key] : [])])
}

export interface CompiledPrompt {
  definition: Prompt
  decl: PromptDeclaration
}

function sampleArgs(p: PromptDeclaration, withOptional: boolean, resources: readonly CompiledResource[]): Record<string, string> {
  const out: Record<string, string> = {}
  for (const a of p.arguments) {
    if (!a.required && !withOptional) continue
    if (a.complete === 'org') out[a.name] = '00D000000000001AAA'
    else if (a.complete?.startsWith('field:')) out[a.name] = enumValues(resources, a.complete)[0] ?? 'x'
    else out[a.name] = a.number ? String(a.number.max) : '30'
  }
  return out
}

/**
 * Why a prompt argument's value is refused (-32602), or undefined: a number out of its declared type or range, a value
 * of an enum field that is not one of its values. Checked before a prompt is rendered, so no value is spliced into a
 * step's filter unchecked.
 */
export function argumentProblem(a: PromptArgument, value: string, resources: readonly CompiledResource[]): string | undefined {
  if (a.number) {
    const { integer, min, max } = a.number
    const n = Number(value)
    if (!(integer ? /^[0-9]{1,15}$/ : /^[0-9]{1,15}(\.[0-9]{1,6})?$/).test(value) || n < min || n > max) {
      return `${a.name} must be ${integer ? 'a whole number' : 'a number'} from ${min} to ${max}.`
    }
  }
  if (a.complete?.startsWith('field:')) {
    const values = enumValues(resources, a.complete)
    if (!values.includes(value)) return `${a.name} must be one of: ${values.join(', ')}.`
  }
  // The form only (15 or 18 characters of an org id); whether the org exists is the tools' answer when they run.
  if (a.complete === 'org' && orgIdFormProblem(value)) return `${a.name} ${orgIdFormProblem(value)}.`
  return undefined
}

/** The values of an enum field named `field:<resource>.<field>`. */
export function enumValues(resources: readonly CompiledResource[], complete: string): readonly string[] {
  const [resource, field] = complete.slice('field:'.length).split('.')
  const spec = resources.find((c) => c.name === resource)?.fields.get(field)
  return spec?.kind === 'enum' ? (spec.values ?? []) : []
}

function fail(p: PromptDeclaration, msg: string): never {
  throw new RegistryError(`prompt "${p.name}": ${msg}`)
}

function checkPrompt(p: PromptDeclaration, tools: ReadonlyMap<string, McpTool>, resources: readonly CompiledResource[]): void {
  if (!/^[a-z][a-z0-9_]{2,63}$/.test(p.name)) fail(p, 'name must be snake_case')
  for (const a of p.arguments) {
    if (a.complete?.startsWith('field:') && enumValues(resources, a.complete).length === 0) fail(p, `argument ${a.name} completes ${a.complete}, which is not an enum field`)
  }
  for (const withOptional of [false, true]) {
    const steps = p.steps({ args: sampleArgs(p, withOptional, resources), today: '2026-01-01' })
    if (steps.length === 0) fail(p, 'has no steps')
    steps.forEach((s, i) => {
      const tool = tools.get(s.tool)
      if (!tool?.check) fail(p, `step ${i + 1} names ${s.tool}, which is not a tool of the registry`)
      const from = s.from ? steps[s.from.step - 1] : undefined
      if (s.from && (!from || s.from.step > i)) fail(p, `step ${i + 1} refers to step ${s.from.step}, which is not an earlier step`)
      const source = from ? recordFieldsOf(from, tools) : undefined
      const args: Record<string, unknown> = {}
      for (const [k, v] of Object.entries(s.arguments)) {
        if (v === undefined) continue
        if (isNames(v) && v.some((x) => typeof x !== 'string' || x.includes('$item'))) fail(p, `step ${i + 1}: ${k} is a list of names, without references`)
        args[k] = typeof v === 'string'
          ? v.replace(REF, (_m, kind: string, field: string) => {
              if (!source?.has(field)) fail(p, `step ${i + 1} refers to $${kind}.${field}, not a field of step ${s.from?.step ?? '?'}'s records`)
              if ((kind === 'item') !== (s.from?.each === true)) fail(p, `step ${i + 1}: $item needs from.each, $items needs from without each`)
              return kind === 'item' ? '1' : '"1"'
            })
          : v
      }
      try {
        tool.check(args)
      } catch (e) {
        if (isApiError(e)) fail(p, `step ${i + 1} (${s.tool} ${JSON.stringify(args)}) would fail: ${e.message}`)
        throw e
      }
    })
  }
}

/** Validates the prompts against the tools; throws RegistryError naming the first problem. */
export function compilePrompts(decls: readonly PromptDeclaration[], tools: ReadonlyMap<string, McpTool>, resources: readonly CompiledResource[]): CompiledPrompt[] {
  const names = new Set<string>()
  return decls.map((p) => {
    if (names.has(p.name)) fail(p, 'is declared twice')
    names.add(p.name)
    checkPrompt(p, tools, resources)
    return {
      decl: p,
      definition: {
        name: p.name,
        title: p.title,
        description: p.description,
        arguments: p.arguments.map((a) => ({ name: a.name, description: a.description, required: a.required === true })),
      },
    }
  })
}

function describeStep(s: PromptStep, n: number, args: Record<string, StepValue>): string {
  const call = `${s.tool} ${JSON.stringify(args)}`
  let line: string
  if (s.from?.each) line = `${n}. For each of the first ${s.from.take} records of step ${s.from.step} (none: skip this step): ${call} — $item.<field> is that record's field.`
  else if (s.from) line = `${n}. ${call} — $items.<field> is that field of the first ${s.from.take} records of step ${s.from.step}, each as a quoted string ("…", a quote or backslash in it as \\" or \\\\), separated by commas (none: skip this step).`
  else line = `${n}. ${call}`
  return `${line}\n   ${s.why}`
}

/** The prompt's messages for these arguments (already checked to be present when required). */
export function renderPrompt(p: CompiledPrompt, args: Record<string, string>, today: string): GetPromptResult {
  const ctx = { args, today }
  const steps = p.decl.steps(ctx).map((s) => ({
    ...s,
    arguments: Object.fromEntries(Object.entries(s.arguments).filter((e): e is [string, StepValue] => e[1] !== undefined)),
  }))
  const text = [
    p.decl.task(ctx),
    '',
    'Make these tool calls, in order (arguments in JSON). Every tool returns its records in structuredContent.data; a list\'s meta.total is how many records its filter matches, and a count\'s data is one record per group: count with these, never by paging through records.',
    ...steps.map((s, i) => describeStep(s, i + 1, s.arguments)),
    '',
    `Then report: ${p.decl.report}`,
  ].join('\n')
  const plan: PromptPlan = { steps }
  return {
    description: p.decl.description,
    messages: [
      { role: 'user', content: { type: 'text', text } },
      { role: 'user', content: { type: 'resource', resource: { uri: `prompt://${p.decl.name}/plan`, mimeType: 'application/json', text: JSON.stringify(plan) } } },
    ],
  }
}
