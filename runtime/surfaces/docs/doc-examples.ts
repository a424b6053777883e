/**
 * Example calls and answers for the generated references (docs/reference/mcp.md and the OpenAPI document's
 * response examples), kept in docs/examples.json. They are real answers: test/docs/docs-examples.test.ts makes every
 * call against the demo data through the MCP SDK client and REST and fails when an answer differs from the file;
 * `npm run regen` rewrites the file from the same calls, then the references.
 */
import { readFileSync } from 'node:fs'
import type { CompiledResource } from '../../core/registry.ts'
import { exampleFilter } from '../../core/examples.ts'

/** One tool's example: its arguments and the answer (`structuredContent`, which is also the REST body). */
export interface DocExample {
  arguments: Record<string, unknown>
  /** The REST request of the same call. */
  rest: string
  result: { data: unknown; meta?: Record<string, unknown>; links?: Record<string, string> }
}

export type DocExamples = Record<string, DocExample>

/** Records shown of a list answer: enough to show the shape, short enough to read. */
export const EXAMPLE_RECORDS = 2

export const EXAMPLES_FILE = new URL('../../../docs/examples.json', import.meta.url)

export function loadDocExamples(): DocExamples {
  try {
    return JSON.parse(readFileSync(EXAMPLES_FILE, 'utf8')) as DocExamples
  } catch {
    return {}
  }
}

/** An answer as the references show it: a list cut to its first EXAMPLE_RECORDS records (meta and links kept). */
export function shown(result: DocExample['result']): DocExample['result'] {
  return Array.isArray(result.data) && result.data.length > EXAMPLE_RECORDS ? { ...result, data: result.data.slice(0, EXAMPLE_RECORDS) } : result
}

/**
 * The example list call of a resource: a short page, with the resource's example filter where it has one
 * (`withFilter` false gives the call without it, for when the filter selects nothing in the demo data).
 */
export function exampleListArgs(c: CompiledResource, ids: { orgId: string; parentId?: string | number }, withFilter: boolean): Record<string, unknown> {
  const d = c.decl
  const args: Record<string, unknown> = d.scope === 'org' ? { orgId: ids.orgId } : {}
  if (d.parent) args[d.parent.param] = ids.parentId
  if (!d.unpaged) args.limit = EXAMPLE_RECORDS
  const ex = exampleFilter(c)
  if (withFilter && ex) args.filter = ex
  return args
}
