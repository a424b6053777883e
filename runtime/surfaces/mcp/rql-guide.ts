/**
 * RQL for assistants: the few lines the server's instructions give once (every filter argument points here), and
 * `service://rql`, the whole grammar as a compact docs/rql.md (an MCP resource, read
 * without the database, free of quota). test/mcp/mcp-errors-teach.test.ts checks that it names every operator.
 */
import { DEFAULT_RQL_LIMITS } from '../../core/rql/index.ts'
import type { LookupDocument } from './lookup-document.ts'

export const RQL_URI = 'service://rql'

/** The essentials, once, in the server's instructions. */
export const RQL_ESSENTIALS =
  'Filters are RQL: eq(f,v) ne lt le gt ge; like(f,*text*) and ilike (any case) with * as wildcard; in(f,a,b) and ' +
  'out(f,a,b) for lists; isNull(f) isNotNull(f); and(c1,c2) or(c1,c2) not(c), or c1&c2, c1|c2. Quote a value with ' +
  'spaces, commas or parentheses: eq(label,"Account, Main"). Dates: 2026-01-31 or 2026-01-31T10:00:00Z. A rejected ' +
  `filter names the offset of the problem; ${RQL_URI} has the whole grammar.`

const L = DEFAULT_RQL_LIMITS

/** The whole grammar: docs/rql.md without its examples table, its measurements and the REST-only URL notes. */
export const RQL_GUIDE = `# RQL filters

A list tool's \`filter\` (REST: the \`filter\` query parameter) is one RQL expression over the record fields its
description names; anything else is rejected, never ignored. A filter replaces the list's default filter; an empty filter means none.

## Operators
- \`eq(f,v)\` equal (\`eq(f,null)\`: f is null); \`ne(f,v)\` not equal, rows where f is null included.
- \`lt(f,v)\` \`le(f,v)\` \`gt(f,v)\` \`ge(f,v)\`: < <= > >=; rows where f is null never match. Not on booleans.
- \`like(f,p)\` \`ilike(f,p)\` (any case): \`*\` matches any run of characters, everything else is literal. Text and
  enum fields only.
- \`in(f,v1,v2,...)\` or \`in(f,(v1,v2))\`: f is one of the values (fetch many records at once: \`in(id,1,2,3)\`);
  listing \`null\` also matches nulls. \`out(f,...)\`: none of them; nulls included unless \`null\` is listed.
- \`isNull(f)\` \`isNotNull(f)\`.
- \`and(c1,c2,...)\` \`or(c1,c2,...)\` \`not(c)\`; infix \`c1&c2\` \`c1|c2\`, mixing & and | needs parentheses:
  \`(eq(a,1)|eq(b,2))&eq(c,3)\`.
Operator and field names are case-sensitive. List and JSON fields cannot be filtered.

## Values
- \`5\` \`-1.5\` \`1e3\`: number; \`true\` \`false\`: boolean; \`null\` (eq, ne, in, out only).
- \`2026-01-31\`: date (midnight UTC); \`2026-01-31T10:00:00Z\` or with an offset (\`+02:00\`): timestamp.
- \`'text'\` or \`"text"\`: a string taken literally; escapes \`\\'\` \`\\"\` \`\\\\\` only. Quote any value with spaces,
  commas, parentheses, & or |: \`eq(label,"Account, Main")\`.
- Unquoted text ends at \`( ) , & |\`, whitespace or a quote, and is percent-decoded (\`%2C\` is a comma).
- \`string:123\` \`number:5\` \`date:2026-01-01\` \`boolean:true\` force a type. A value is converted to its field's
  type; an enum field takes one of its values (each list's \`resource://filter-values/{resource}/{field}\` lists them).

## Limits
At most ${L.maxLength} characters, ${L.maxDepth} levels of nesting, ${L.maxNodes} conditions, ${L.maxValues} values in one in/out,
${L.maxPatterns} like/ilike conditions, each pattern at most ${L.maxPatternLength} characters with at most ${L.maxWildcards} wildcards.

## Errors
A rejected filter is \`bad_filter\` (REST: 400) with \`reason\` (filter_parse_error, unknown_filter_field,
unsupported_filter_operator, invalid_filter_value, filter_too_complex), \`offset\` (the 0-based position in the filter
of the problem: for an unknown field, where its name starts), and where they apply \`field\`, \`allowed\` and the
lookup of the field's valid values.
`

/** `service://rql` as a lookup document (its text is markdown). */
export function rqlGuide(): LookupDocument {
  return {
    uri: RQL_URI,
    name: 'rql',
    title: 'RQL filter grammar',
    description: 'Operators, values, quoting, limits and errors of the filter argument of every list tool.',
    mimeType: 'text/markdown',
    body: () => RQL_GUIDE,
  }
}
