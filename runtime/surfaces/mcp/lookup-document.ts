/** A document the MCP server lists and reads (resources/list, resources/read): the lookups of valid values, the RQL grammar. */
export interface LookupDocument {
  uri: string
  name: string
  title: string
  description: string
  /** Default application/json. */
  mimeType?: string
  /** The resource's text: JSON (an object, serialised) or text as it is (`mimeType` says which). */
  body: () => Record<string, unknown> | string
}
