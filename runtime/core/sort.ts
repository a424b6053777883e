/** JSON:API sort strings (docs/contract.md §4.1): `-priority,effort`. Nulls sort below every value. */
import { ApiError } from './errors.ts'
import { MAX_SORT_LENGTH } from './limits.ts'
import { didYouMean } from './nearest.ts'

export interface SortKey {
  field: string
  desc: boolean
}

const FIELD = /^[A-Za-z_][A-Za-z0-9_]*$/

/** Parses and whitelists a sort string. `parameter` names the parameter in errors. */
export function parseSort(input: string, sortable: readonly string[], parameter = 'sort', maxLength = MAX_SORT_LENGTH): SortKey[] {
  if (input.length === 0) throw new ApiError('invalid_parameter', 'sort must not be empty.', { parameter })
  if (input.length > maxLength) throw new ApiError('invalid_parameter', 'sort is too long.', { parameter })
  const keys: SortKey[] = []
  const seen = new Set<string>()
  // Where each entry starts in the input: an unknown field is reported at its name, as filter fields are.
  let start = 0
  for (const raw of input.split(',')) {
    const at = start + (raw.length - raw.trimStart().length)
    start += raw.length + 1
    const part = raw.trim()
    const desc = part.startsWith('-')
    const field = desc || part.startsWith('+') ? part.slice(1) : part
    if (!FIELD.test(field)) {
      throw new ApiError('invalid_parameter', `Malformed sort field "${part}"; use comma-separated field names, a leading "-" for descending.`, { parameter })
    }
    if (!sortable.includes(field)) {
      throw new ApiError('unknown_sort_field', `Cannot sort by "${field}"${didYouMean(field, sortable) || '.'}`, { parameter, field, allowed: sortable, offset: at + part.length - field.length })
    }
    if (seen.has(field)) throw new ApiError('invalid_parameter', `Sort field "${field}" is given twice.`, { parameter, field })
    seen.add(field)
    keys.push({ field, desc })
  }
  return keys
}
