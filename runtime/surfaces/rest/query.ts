/** Query-string parsing into the surface-neutral QueryInput (repeatable names keep every value). */
import { ApiError } from '../../core/errors.ts'
import type { QueryInput } from '../../core/plan.ts'

const MAX_PARAMS = 64

export function parseQuery(qs: string): QueryInput {
  const out = new Map<string, string[]>()
  if (qs === '') return out
  let params: URLSearchParams
  try {
    params = new URLSearchParams(qs)
  } catch {
    throw new ApiError('invalid_parameter', 'Malformed query string.')
  }
  let n = 0
  for (const [k, v] of params) {
    if (++n > MAX_PARAMS) throw new ApiError('invalid_parameter', `At most ${MAX_PARAMS} query parameters are accepted.`)
    if (/[\uFFFD]/.test(k) || /[\uFFFD]/.test(v)) throw new ApiError('invalid_parameter', 'Query parameters must be valid UTF-8 percent-encoding.', { parameter: k.slice(0, 64) })
    const list = out.get(k)
    if (list) list.push(v)
    else out.set(k, [v])
  }
  return out
}
