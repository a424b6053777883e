/** Small argument helpers for the `orgscan` command: every error is one clear line and exit code 2. */
import { parseArgs, type ParseArgsConfig } from 'node:util'

export class UsageError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'UsageError'
  }
}

export interface Parsed {
  values: Record<string, string | boolean | undefined>
  positionals: string[]
}

export function parse(args: string[], options: NonNullable<ParseArgsConfig['options']>, positionals = 0): Parsed {
  let parsed
  try {
    parsed = parseArgs({ args, options: { ...options, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true })
  } catch (e) {
    // Node's message may take several lines (an ambiguous value says how to give one starting with a dash): one line.
    throw new UsageError((e as Error).message.split('\n').join(' '))
  }
  if (parsed.positionals.length > positionals) throw new UsageError(`Unexpected argument "${parsed.positionals[positionals]}".`)
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
