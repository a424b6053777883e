/**
 * The typed values of RQL filters (docs/rql.md): what an unquoted token means (true, false, null, a number, an ISO date,
 * else text) and the conversion of a `type:`-prefixed value. A bad value is a `filter_parse_error` at its offset.
 */
import { parseIsoDate, parseNumberText, type RqlValue } from './ast.ts'
import { parseError as fail, show } from './lexical.ts'

/** Type of an unprefixed, unquoted token. Inference looks at the raw text: `%74rue` is the string "true". */
export function inferValue(token: string, decoded: string, offset: number): RqlValue {
  if (token === 'true') return true
  if (token === 'false') return false
  if (token === 'null') return null
  const n = parseNumberText(token)
  if (n !== undefined) return n
  const d = parseIsoDate(token)
  if (d === 'invalid') fail(`Invalid date ${show(token)}`, offset)
  if (d !== undefined) return d
  return decoded
}

/** The value of a typed token (`number:`, `date:`, `boolean:`, `string:`), from its decoded text. */
export function convertValue(prefix: string, text: string, offset: number): RqlValue {
  switch (prefix) {
    case 'number': {
      const n = parseNumberText(text)
      if (n === undefined) fail(`Invalid number ${show(text)}`, offset)
      return n
    }
    case 'date': {
      const d = parseIsoDate(text)
      if (d === undefined || d === 'invalid') fail(`Invalid date ${show(text)}`, offset)
      return d
    }
    case 'boolean':
      if (text === 'true') return true
      if (text === 'false') return false
      fail(`Invalid boolean ${show(text)}; expected true or false`, offset)
    default:
      return text
  }
}
