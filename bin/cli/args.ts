/** Small argument helpers for the `orgscan` command: every error is one clear line and exit code 2. */
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { didYouMean } from '../../runtime/core/nearest.ts'

export class UsageError extends Error {
  /** The command line was not understood: `run` adds where its command's help is (`Run "orgscan keys --help".`). */
  readonly pointsToHelp: boolean

  constructor(message: string, opts: { pointsToHelp?: boolean } = {}) {
    super(message)
    this.name = 'UsageError'
    this.pointsToHelp = opts.pointsToHelp ?? false
  }
}

export interface Parsed {
  values: Record<string, string | boolean | undefined>
  positionals: string[]
}

/**
 * One line for what Node's parseArgs refused: an unknown option is named, with the nearest option the command takes
 * when one is close (a typo); anything else is Node's message on one line (an ambiguous value says how to give one
 * starting with a dash).
 */
function parseProblem(e: Error & { code?: string }, options: NonNullable<ParseArgsConfig['options']>): string {
  const unknown = e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? /^Unknown option '([^']*)'/.exec(e.message)?.[1] : undefined
  if (unknown === undefined) {
    const line = e.message.split('\n').join(' ')
    return /[.?!]$/.test(line) ? line : `${line}.`
  }
  const near = unknown.startsWith('--') ? didYouMean(unknown.slice(2), Object.keys(options)) : ''
  // "; did you mean "account"?" names the option as it is typed.
  return `Unknown option "${unknown}"${near.replace(/"(.*)"/, '"--$1"')}${near ? '' : '.'}`
}

export function parse(args: string[], options: NonNullable<ParseArgsConfig['options']>, positionals = 0): Parsed {
  let parsed
  const all = { ...options, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } satisfies NonNullable<ParseArgsConfig['options']>
  try {
    parsed = parseArgs({ args, options: all, allowPositionals: true, strict: true })
  } catch (e) {
    throw new UsageError(parseProblem(e as Error, all), { pointsToHelp: true })
  }
  if (parsed.positionals.length > positionals) throw new UsageError(`Unexpected argument "${parsed.positionals[positionals]}".`, { pointsToHelp: true })
  return { values: parsed.values as Parsed['values'], positionals: parsed.positionals }
}

export function intOption(value: unknown, name: string, min = 0): number | undefined {
  if (value === undefined) return undefined
  const s = String(value)
  if (!/^\d+$/.test(s) || Number(s) < min || Number(s) > 2_000_000_000) throw new UsageError(`--${name} must be a whole number ≥ ${min}, got "${s}".`)
  return Number(s)
}

export function numOption(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined
  const n = Number(value)
  if (!Number.isFinite(n) || n <= 0 || n > 10) throw new UsageError(`--${name} must be a number between 0 and 10, got "${String(value)}".`)
  return n
}
