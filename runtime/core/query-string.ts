/**
 * Query strings the service writes itself: the REST equivalent of an MCP call, from which that call's `links` are
 * built, and the pairs the links change (`offset`, `limit`). One encoding for both surfaces, so a filtered, sorted
 * page links to its next page with the same bytes whether it was asked for over REST or MCP.
 *
 * Names and values are percent-encoded as UTF-8, except the unreserved characters and `( ) , : @ / ! *`: an RQL
 * filter and a sort list then read in a link as they are written in docs/rql.md and in a curl command. `&`, `=`,
 * `+`, `#`, `%`, `'`, spaces, controls and non-ASCII are encoded, so the output is one a WHATWG URL parser (a
 * browser, fetch) leaves as it is. A lone surrogate is encoded as U+FFFD, as URLSearchParams does.
 */

const LITERAL = new Uint8Array(128)
for (const ch of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~(),:@/!*') LITERAL[ch.charCodeAt(0)] = 1
const HEX = Array.from({ length: 256 }, (_v, b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`)

/** One name or value of a query string, encoded as described above. */
export function encodeQueryComponent(s: string): string {
  let i = 0
  while (i < s.length && s.charCodeAt(i) < 128 && LITERAL[s.charCodeAt(i)] === 1) i++
  if (i === s.length) return s
  let out = s.slice(0, i)
  for (const b of Buffer.from(s.slice(i), 'utf8')) out += b < 128 && LITERAL[b] === 1 ? String.fromCharCode(b) : HEX[b]
  return out
}

/** `name=value`, both encoded. */
export function queryPair(name: string, value: string): string {
  return `${encodeQueryComponent(name)}=${encodeQueryComponent(value)}`
}

/** The query string of these parameters (without `?`): each value of each name a pair, in the order given. */
export function formatQuery(params: Iterable<readonly [string, readonly string[]]>): string {
  const pairs: string[] = []
  for (const [name, values] of params) for (const v of values) pairs.push(queryPair(name, v))
  return pairs.join('&')
}
