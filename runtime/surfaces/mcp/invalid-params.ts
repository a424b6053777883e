/**
 * Malformed params of a protocol method answer −32602 (JSON-RPC "Invalid params") with a short message naming each
 * wrong field — never −32603 and never the validator's raw issue list.
 *
 * Why this exists: the SDK's `Server` checks the params of every spec method (`prompts/get`, `resources/read`,
 * `completion/complete`, `tools/list`, `initialize`, …) against the method's wire schema before our handler runs, and
 * throws a plain `Error` carrying the schema issues as pretty-printed JSON when they do not pass; its dispatcher then
 * answers −32603 "Internal error" with that dump as the message (upstream: modelcontextprotocol/typescript-sdk#2284).
 * For `tools/call` it answers −32602, but with the same dump. `McpProtocolServer` (server.ts) turns both into
 * `invalidParams()` below.
 */
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server'

/** One issue of the validator (zod): where (`path`), what (`message`), and for a union the issues of each branch. */
interface Issue {
  code?: string
  path: readonly (string | number)[]
  message: string
  errors?: readonly (readonly Issue[])[]
}

const MAX_ISSUES = 4
const MAX_MESSAGE = 600

function isIssueList(v: unknown): v is Issue[] {
  return Array.isArray(v) && v.length > 0 && v.every((i) => typeof i === 'object' && i !== null && Array.isArray((i as Issue).path) && typeof (i as Issue).message === 'string')
}

/** The issues a validator's message carries (a JSON array of issues), or undefined when it carries none. */
export function issuesOf(message: string): Issue[] | undefined {
  if (!message.startsWith('[')) return undefined
  try {
    const v: unknown = JSON.parse(message)
    return isIssueList(v) ? v : undefined
  } catch {
    return undefined
  }
}

function describe(issue: Issue, prefix: readonly (string | number)[]): string[] {
  const path = [...prefix, ...issue.path]
  // A union (e.g. a completion's `ref`): the branch that came closest, i.e. with the fewest issues.
  if (issue.code === 'invalid_union' && issue.errors?.length) {
    const closest = issue.errors.filter(isIssueList).sort((a, b) => a.length - b.length)[0]
    if (closest) return closest.flatMap((i) => describe(i, path))
  }
  const where = path.length ? path.join('.') : 'params'
  const what = issue.message.replace(/^Invalid input: /, '').replace(/^expected (.+), received undefined$/, 'missing (expected $1)')
  return [`${where}: ${what}`]
}

/** "params.name: expected string, received number; params.uri: missing (expected string)" (at most four). */
export function describeIssues(issues: readonly Issue[]): string {
  const all = issues.flatMap((i) => describe(i, []))
  const shown = all.slice(0, MAX_ISSUES).join('; ') + (all.length > MAX_ISSUES ? `; and ${all.length - MAX_ISSUES} more` : '')
  return shown.length > MAX_MESSAGE ? `${shown.slice(0, MAX_MESSAGE - 1)}…` : shown
}

/** The −32602 answer of `method` for the given issues. */
export function invalidParams(method: string, issues: readonly Issue[]): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid params for ${method}: ${describeIssues(issues)}`)
}

/**
 * The error a handler wrapped by the SDK ended with, as the client should see it: a schema failure of the params
 * (a plain Error, or the SDK's "Invalid tools/call request" −32602, either carrying the issue dump) becomes
 * `invalidParams`; anything else is returned as it is.
 */
export function asInvalidParams(method: string, error: unknown): unknown {
  if (!(error instanceof Error)) return error
  const isProtocol = error instanceof ProtocolError
  if (isProtocol && error.code !== ProtocolErrorCode.InvalidParams) return error
  const dump = isProtocol ? error.message.replace(/^Invalid [\w/]+ request: /, '') : error.message
  const issues = issuesOf(dump)
  return issues ? invalidParams(method, issues) : error
}
