/**
 * The limits of a request's query parameters, each stated once: the compiled operations (runtime/core/operations.ts) carry
 * them to planning, the MCP tool schemas, OpenAPI and the reference docs.
 */
/** Records per page: the default, and the most a page holds (REST clamps larger values, MCP refuses them). */
export const DEFAULT_LIMIT = 50
export const MAX_LIMIT = 200
/** What a refused limit (MCP) says to do instead: page. */
export const PAGE_INSTEAD = 'to read more records, page: call again with offset increased by limit while meta.hasMore is true'
/** The largest offset (a 32-bit integer, as PostgreSQL's OFFSET takes). */
export const MAX_OFFSET = 2_147_483_647
/** Longest `sort` and `fields` values, in characters. */
export const MAX_SORT_LENGTH = 512
export const MAX_FIELDS_LENGTH = 1024
/** A repeatable parameter: at most this many values, each 1 to `MAX_VALUE_LENGTH` characters. */
export const MAX_VALUES = 50
export const MAX_VALUE_LENGTH = 200
/** A grouped count groups by at most this many fields. */
export const MAX_GROUP_BY = 3
/**
 * The longest request URL served (characters, as sent; the listener refuses a longer one with a 400). Filters are
 * limited to 4,096 characters once decoded (docs/rql.md); fully percent-encoded, ASCII takes three characters each, so
 * a filter at its limit fits with the path and the other parameters.
 */
export const MAX_URL = 14_336
