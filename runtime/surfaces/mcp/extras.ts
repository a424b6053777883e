/**
 * Prompts and resources registered beside those the registry derives, as tools are (`mcpExtraTools`): tests register
 * the conformance suite's fixtures this way (test/helpers/conformance-fixtures.ts), and nothing in production does.
 * They go through the same handlers as orgscan's own: listed, read, got, completed and subscribed to alike.
 */
import { UriTemplate, type GetPromptResult, type Prompt, type ReadResourceResult, type Resource, type ResourceTemplateType } from '@modelcontextprotocol/server'
import type { Principal } from '../../core/principal.ts'

/** What an extra prompt or resource is given: the caller, and orgscan's own resources to read from. */
export interface ExtraContext {
  principal: Principal
  /** orgscan's own resource at `uri` (a lookup of resources/list or the filter-values template), or undefined. */
  readResource(uri: string): ReadResourceResult | undefined
}

export interface McpExtraPrompt {
  definition: Prompt
  /** The prompt's messages for these arguments (the required ones are present: the handler checked). */
  get(args: Record<string, string>, ctx: ExtraContext): Promise<GetPromptResult>
  /** Values for an argument beginning with `prefix`; none when absent. */
  complete?(argument: string, prefix: string): readonly string[]
}

/** A resource at one address (`definition.uri`), listed by resources/list. */
export interface McpExtraFixedResource {
  definition: Resource
  read(uri: string, ctx: ExtraContext): Promise<ReadResourceResult>
}

/** The resources of a template (`definition.uriTemplate`, RFC 6570), listed by resources/templates/list. */
export interface McpExtraTemplate {
  definition: ResourceTemplateType
  /** `variables`: the template's variables as the address gave them. */
  read(uri: string, ctx: ExtraContext, variables: Record<string, string>): Promise<ReadResourceResult>
  complete?(variable: string, prefix: string): readonly string[]
}

export type McpExtraResource = McpExtraFixedResource | McpExtraTemplate

export const isTemplate = (r: McpExtraResource): r is McpExtraTemplate => 'uriTemplate' in r.definition

/** The extra resources, ready to match an address. */
export class ExtraResources {
  readonly fixed: ReadonlyMap<string, McpExtraFixedResource>
  readonly templates: ReadonlyArray<{ entry: McpExtraTemplate; template: UriTemplate }>

  constructor(all: readonly McpExtraResource[]) {
    const fixed = new Map<string, McpExtraFixedResource>()
    const templates: Array<{ entry: McpExtraTemplate; template: UriTemplate }> = []
    for (const r of all) {
      if (isTemplate(r)) templates.push({ entry: r, template: new UriTemplate(r.definition.uriTemplate) })
      else if (fixed.has(r.definition.uri)) throw new Error(`MCP resource ${r.definition.uri} is declared twice`)
      else fixed.set(r.definition.uri, r)
    }
    this.fixed = fixed
    this.templates = templates
  }

  /** Reads `uri`, or undefined when no extra resource has that address. */
  read(uri: string, ctx: ExtraContext): Promise<ReadResourceResult> | undefined {
    const f = this.fixed.get(uri)
    if (f) return f.read(uri, ctx)
    for (const { entry, template } of this.templates) {
      const vars = template.match(uri)
      if (vars) return entry.read(uri, ctx, Object.fromEntries(Object.entries(vars).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : v])))
    }
    return undefined
  }

  /** Whether `uri` is the address of an extra resource (a fixed one, or one a template matches). */
  has(uri: string): boolean {
    return this.fixed.has(uri) || this.templates.some(({ template }) => template.match(uri) !== null)
  }

  template(uriTemplate: string): McpExtraTemplate | undefined {
    return this.templates.find(({ entry }) => entry.definition.uriTemplate === uriTemplate)?.entry
  }
}
