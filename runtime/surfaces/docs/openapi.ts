/**
 * The OpenAPI 3.1 document of the REST API, generated from the registry, the error table and the version table, so
 * it cannot drift from what the server does: every path with its parameters (filterable and sortable fields as
 * enums, defaults, the clamp of `limit`), response schemas from the field declarations, the envelopes, the 429 forms
 * and the rate-limit and version headers, both security schemes, `GET /` and the quota endpoints.
 */
import type { CompiledResource } from '../../core/registry.ts'
import { ERROR_CODES, ERROR_HELP, type ErrorCode } from '../../core/errors.ts'
import { queryParam, valuesOf, type CompiledOperation, type QueryParam } from '../../core/operations.ts'
import { exampleFilter } from '../../core/examples.ts'
import { MAX_URL } from '../../core/limits.ts'
import { API_VERSION } from '../../core/api-version.ts'
import { loadDocExamples, shown, type DocExamples } from './doc-examples.ts'
import { fieldJsonSchema, recordJsonSchema, type JsonSchema } from '../mcp/json-schema.ts'
import { QUOTA_SCHEMA } from '../mcp/service-tools.ts'

export const API_TITLE = 'orgscan — Organization Scan Data Service'

export { API_VERSION }

/**
 * The document's licence. package.json says `UNLICENSED`: no licence is granted to anyone. OpenAPI asks for a name,
 * and there is neither an SPDX identifier nor a licence text to point at, so only the name says it
 * (docs/adr/0185-openapi-license-and-array-parameters.md).
 */
export const LICENSE = { name: 'Proprietary' } as const

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })
const pascal = (s: string) => s.charAt(0).toUpperCase() + s.slice(1)

const RATE_HEADERS = {
  'X-RateLimit-Limit': { description: 'Requests allowed in the window described (the blocking one on a 429, else the one with fewer left).', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left in that window.', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'When that window resets: a Unix timestamp in seconds (not a number of seconds to wait; `Retry-After` gives that on a 429).', schema: { type: 'integer' } },
  'RateLimit-Policy': { description: 'Both windows (IETF draft structured field).', schema: { type: 'string' } },
  RateLimit: { description: 'Remaining and reset of both windows (IETF draft structured field).', schema: { type: 'string' } },
}
/** Headers of every answer under /v1/ (the version's lifecycle headers while it is deprecated). */
const VERSION_HEADERS = {
  'X-Orgscan-API-Version': { description: 'The API version that handled the request.', schema: { type: 'string', const: '1' } },
  'X-Request-Id': { description: 'The request id (the one sent, when well-formed), also in the access log.', schema: { type: 'string' } },
  Deprecation: { description: 'Present while this API version is deprecated: `true`.', schema: { type: 'string' } },
  Sunset: { description: 'Present while this API version is deprecated: the HTTP date from which it answers 410.', schema: { type: 'string' } },
}

const hdr = (name: string) => ({ $ref: `#/components/headers/${name}` })
const RATE_REFS = Object.fromEntries(Object.keys(RATE_HEADERS).map((h) => [h, hdr(h)]))
const VERSION_REFS = Object.fromEntries(Object.keys(VERSION_HEADERS).map((h) => [h, hdr(h)]))

function errorResponse(codes: readonly ErrorCode[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  const lines = codes.map((c) => `- \`${c}\`: ${ERROR_HELP[c].meaning}`).join('\n')
  return { description: `${ERROR_CODES[codes[0]].title}.\n\n${lines}`, headers: { ...VERSION_REFS, ...extra }, content: { 'application/json': { schema: ref('Error') } } }
}

const FILTER_ERRORS: ErrorCode[] = ['invalid_parameter', 'unknown_parameter', 'filter_parse_error', 'unknown_filter_field', 'invalid_filter_value', 'unsupported_filter_operator', 'filter_too_complex', 'unknown_sort_field', 'unknown_field', 'invalid_id', 'query_too_expensive']

/** The shared error responses (components.responses). */
function errorResponses(): Record<string, unknown> {
  return {
    BadQuery: errorResponse(FILTER_ERRORS, RATE_REFS),
    BadRequest: errorResponse(['invalid_parameter', 'unknown_parameter', 'invalid_id'], RATE_REFS),
    Unauthorized: errorResponse(['unauthorized'], { 'WWW-Authenticate': { description: 'Basic and Bearer challenges.', schema: { type: 'string' } } }),
    Forbidden: errorResponse(['forbidden'], RATE_REFS),
    NotFound: errorResponse(['not_found'], RATE_REFS),
    TooManyRequests: {
      description:
        'Too Many Requests, in two forms. With a body (`rate_limited`: the quota is spent; `concurrency_limited`: too many at once), ' +
        '`Retry-After` and the rate-limit headers. Bare (no body, no rate-limit headers): `authentication_throttled`, with `Retry-After`, or edge shedding, without.',
      headers: { 'Retry-After': hdr('Retry-After'), ...RATE_REFS },
      content: { 'application/json': { schema: ref('Error') } },
    },
    ServiceUnavailable: errorResponse(['service_unavailable'], { 'Retry-After': hdr('Retry-After') }),
    Shed: {
      description: 'Too Many Requests: edge shedding, before anything else (`ORGSCAN_BURST_GUARD` on, the client over its burst). Bare: no body, no `Retry-After`.',
      headers: { 'X-Request-Id': hdr('X-Request-Id') },
    },
  }
}

const resp = (name: string) => ({ $ref: `#/components/responses/${name}` })

/** The error responses every authenticated read can give. */
function errors(withFilter: boolean): Record<string, unknown> {
  return {
    400: resp(withFilter ? 'BadQuery' : 'BadRequest'),
    401: resp('Unauthorized'),
    403: resp('Forbidden'),
    404: resp('NotFound'),
    429: resp('TooManyRequests'),
    503: resp('ServiceUnavailable'),
  }
}

function param(name: string, where: 'path' | 'query', schema: JsonSchema, description: string, required = where === 'path', extra: Record<string, unknown> = {}) {
  return { name, in: where, required, description, schema, ...extra }
}

const ORG_ID_PARAM = param('orgId', 'path', { type: 'string', pattern: '^[A-Za-z0-9]{15}([A-Za-z0-9]{3})?$' }, "The org's 15- or 18-character id (both address the same org).")

/**
 * How an array parameter is serialised (runtime/core/operations.ts `valuesOf`). A list is advertised comma-separated
 * (`explode: false`, the form of the references, the links and every example), and the server takes it repeated too
 * (`sort=a&sort=b`), the form most generated clients send whatever the document says; a repeatable parameter's values
 * are never split, so only the repeated form describes it (docs/adr/0185-openapi-license-and-array-parameters.md).
 */
function arrayStyle(p: QueryParam): Record<string, unknown> {
  return { style: 'form', explode: valuesOf(p) === 'repeat' }
}
const REPEATED = (name: string) => ` Also accepted repeated: \`${name}=a&${name}=b\` is \`${name}=a,b\`.`

/** The parameters of an operation (runtime/core/operations.ts), as OpenAPI describes them. */
function paramsOf(op: CompiledOperation): unknown[] {
  const ps: unknown[] = []
  for (const p of op.pathParams) {
    if (p.type === 'orgId') ps.push(ORG_ID_PARAM)
    else if (p.role === 'parent') ps.push(param(p.name, 'path', { type: 'integer' }, `Id of the parent ${p.resource} record.`))
    else {
      const schema: JsonSchema = p.encoding === 'int' ? { type: 'integer' } : { type: 'string' }
      const how = p.encoding === 'base64url' ? ` (the ${p.field} encoded with Base64URL)` : ''
      ps.push(param(p.name, 'path', schema, `The record's ${p.field}${how}.`))
    }
  }
  for (const p of op.queryParams) {
    switch (p.type) {
      case 'limit':
        ps.push(param(p.name, 'query', { type: 'integer', minimum: p.min, default: p.default }, `Records per page (default ${p.default}). Values above ${p.max} are served with ${p.max}: \`meta.limit\` is ${p.max} and \`meta.requestedLimit\` the value asked for.`, false))
        break
      case 'offset':
        ps.push(param(p.name, 'query', { type: 'integer', minimum: p.min, maximum: p.max, default: p.default }, 'Records to skip; `links.next` gives the next page.', false))
        break
      case 'filter': {
        const ex = exampleFilter(op.resource)
        // The example is in the text, not an `example` value: the reference page's "Try it out" fills a parameter with its
        // example, which would replace the list's default filter on every try.
        ps.push(param(p.name, 'query', { type: 'string', maxLength: p.maxLength }, `RQL filter (docs/rql.md) on: ${p.fields.join(', ')}.${p.defaultFilter ? ` Default: \`${p.defaultFilter}\`; a supplied filter replaces it, an empty one means none.` : ''}${ex ? ` Example: \`${ex}\`.` : ''}`, false, {
          'x-filterable-fields': [...p.fields],
        }))
        break
      }
      case 'sort':
        ps.push(param(p.name, 'query', { type: 'array', items: { type: 'string', enum: p.fields.flatMap((f) => [f, `-${f}`]) }, uniqueItems: true }, `Comma-separated sort keys, \`-\` for descending.${p.defaultSort ? ` Default: \`${p.defaultSort}\`.` : ''} Ties end with the record id ascending.${REPEATED(p.name)}`, false, arrayStyle(p)))
        break
      case 'fields':
        ps.push(param(p.name, 'query', { type: 'array', items: { type: 'string', enum: [...p.fields] }, uniqueItems: true }, `Comma-separated fields to return (default all), in declaration order.${REPEATED(p.name)}`, false, arrayStyle(p)))
        break
      case 'groupBy':
        ps.push(param(p.name, 'query', { type: 'array', items: { type: 'string', enum: [...p.fields] }, minItems: 1, maxItems: p.maxItems, uniqueItems: true }, `Comma-separated fields to count by (1 to ${p.maxItems}): each combination of their values is a group.${REPEATED(p.name)}`, true, arrayStyle(p)))
        break
      case 'strings':
        ps.push(param(p.name, 'query', { type: 'array', items: { type: 'string' } }, `${p.description} Repeatable.`, false, arrayStyle(p)))
        break
    }
  }
  return ps
}

/** Revalidation of org-scoped answers: the If-None-Match parameter, the ETag and Cache-Control headers, the 304. */
const IF_NONE_MATCH = {
  name: 'If-None-Match',
  in: 'header',
  required: false,
  description: 'ETags of answers the client holds: when one is current, the answer is `304 Not Modified` with no body (still authenticated, and charged one unit like any read).',
  schema: { type: 'string' },
}
const CACHE_HEADERS = {
  ETag: { description: 'Strong tag of this answer: it changes when the org gets a new scan. Send it back in `If-None-Match`.', schema: { type: 'string' } },
  'Cache-Control': { description: '`private, no-cache`: a client may keep the answer and must revalidate it (If-None-Match) before using it; shared caches must not keep it.', schema: { type: 'string' } },
}
const notModified = () => ({ description: 'Not Modified: the tag in If-None-Match is current; no body.', headers: { ...CACHE_HEADERS, ...VERSION_REFS, ...RATE_REFS } })

/** A 200 answer's example (docs/examples.json): a real answer to the request it names. */
function exampleOf(examples: DocExamples, tool: string | undefined): Record<string, unknown> {
  const ex = tool ? examples[tool] : undefined
  return ex ? { examples: { demo: { summary: `GET ${ex.rest}`, value: shown(ex.result) } } } : {}
}

/**
 * The OpenAPI document; `serverUrl` is where the reference page points "try it"; `examples` the real answers shown
 * as response examples (docs/examples.json).
 */
export function buildOpenApi(resources: readonly CompiledResource[], serverUrl = '/', examples: DocExamples = loadDocExamples()): Record<string, unknown> {
  const schemas: Record<string, unknown> = {
    Error: {
      type: 'object',
      required: ['error'],
      properties: {
        error: {
          type: 'object',
          required: ['status', 'title', 'detail', 'code'],
          properties: {
            status: { type: 'integer' },
            title: { type: 'string' },
            detail: { type: 'string' },
            code: { type: 'string', enum: Object.keys(ERROR_CODES) },
            parameter: { type: 'string', description: 'The parameter at fault.' },
            offset: { type: 'integer', description: 'Position in the filter (RQL parse errors).' },
            field: { type: 'string' },
            allowed: { type: 'array', items: { type: 'string' } },
            scope: { type: 'string' },
          },
        },
      },
    },
    CountMeta: {
      type: 'object',
      required: ['total', 'groups', 'limit', 'hasMore'],
      properties: {
        total: { type: 'integer', description: 'Records the filter matches (the sum of every group\'s count).' },
        groups: { type: 'integer', description: 'Groups there are; the first `limit` are in `data`.' },
        limit: { type: 'integer' },
        hasMore: { type: 'boolean', description: 'Whether more groups than `limit` exist.' },
        requestedLimit: { type: 'integer', description: 'Present when the limit asked for was clamped: the value asked for.' },
      },
    },
    ListMeta: {
      type: 'object',
      required: ['count', 'total', 'hasMore'],
      properties: {
        count: { type: 'integer', description: 'Records in this page.' },
        total: { type: 'integer', description: 'Records the filter matches, on every page.' },
        hasMore: { type: 'boolean', description: 'Whether another page follows.' },
        limit: { type: 'integer' },
        offset: { type: 'integer' },
        requestedLimit: { type: 'integer', description: 'Present when the limit asked for was clamped: the value asked for (at most 9007199254740991).' },
      },
    },
    Links: {
      type: 'object',
      required: ['self'],
      properties: { self: { type: 'string' }, next: { type: 'string' }, prev: { type: 'string' } },
      description: 'Relative links to this page and its neighbours.',
    },
    Quota: QUOTA_SCHEMA,
    Versions: {
      type: 'object',
      required: ['versions'],
      properties: { versions: { type: 'array', items: { type: 'object', required: ['name', 'status'], properties: { name: { type: 'string' }, status: { enum: ['current', 'deprecated'] }, sunsetDate: { type: 'string', format: 'date' } } } } },
    },
  }
  const paths: Record<string, Record<string, unknown>> = {}
  const tags: unknown[] = []
  for (const c of resources) {
    const d = c.decl
    const name = pascal(c.name)
    const all = [...c.fields.keys()]
    // The record's schema, a component from its first use only: a list of fewer fields without a get would otherwise
    // leave it unreferenced. Every property comes unless the request's `fields` chose some (the record's id always
    // comes); every list and get takes `fields`, so no property is required of a record in an answer.
    const record = () => {
      schemas[name] ??= { ...recordJsonSchema(all, c.fields, false), title: d.title, description: d.description }
      return ref(name)
    }
    tags.push({ name: d.title, description: d.description })
    /** One GET operation of the resource: the same shape for a list and a record, the 200 body apart. */
    const operation = (op: CompiledOperation, body: JsonSchema, ok: string, withQueryErrors: boolean) => {
      const org = d.scope === 'org'
      const tool = op.tool
      paths[op.path] = {
        ...paths[op.path],
        get: {
          operationId: op.name,
          summary: op.title,
          description: d.description,
          tags: [d.title],
          parameters: [...paramsOf(op), ...(org ? [IF_NONE_MATCH] : [])],
          responses: {
            200: { description: ok, headers: { ...VERSION_REFS, ...RATE_REFS, ...(org ? CACHE_HEADERS : {}) }, content: { 'application/json': { schema: body, ...exampleOf(examples, tool) } } },
            ...(org ? { 304: notModified() } : {}),
            ...errors(withQueryErrors),
          },
        },
      }
    }
    const { list, get } = c.ops
    if (list) {
      const listRecord = c.listFieldNames.length === all.length ? record() : recordJsonSchema(c.listFieldNames, c.fields, false)
      const body = { type: 'object', required: ['data', 'meta', 'links'], properties: { data: { type: 'array', items: listRecord }, meta: ref('ListMeta'), links: ref('Links') } }
      operation(list, body, queryParam(list, 'limit') ? 'A page of records.' : 'Every record, in one page.', list.queryParams.some((p) => p.type === 'filter' || p.type === 'sort' || p.type === 'fields'))
    }
    if (get) operation(get, { type: 'object', required: ['data'], properties: { data: record() } }, 'The record.', false)
    const { count } = c.ops
    if (count) {
      const by = queryParam(count, 'groupBy')!
      const group = { type: 'object', required: ['count'], properties: { ...Object.fromEntries(by.fields.map((f) => [f, fieldJsonSchema(c.fields.get(f)!)])), count: { type: 'integer', description: 'Records in the group.' } } }
      operation(count, { type: 'object', required: ['data', 'meta'], properties: { data: { type: 'array', items: group }, meta: ref('CountMeta') } }, 'The groups, most records first.', true)
    }
  }
  const quota = (withOrg: boolean) => ({
    get: {
      operationId: withOrg ? 'getOrgQuota' : 'getAccountQuota',
      summary: 'Get account quota',
      description: "Both windows of the account's quota. Free: consumes nothing." + (withOrg ? ' Checks access to the org.' : ''),
      tags: ['Quota'],
      parameters: withOrg ? [ORG_ID_PARAM] : [],
      responses: { 200: { description: 'The quota.', headers: { ...VERSION_REFS, ...RATE_REFS }, content: { 'application/json': { schema: ref('Quota') } } }, ...errors(false) },
    },
  })
  paths['/v1/account/quota'] = quota(false)
  paths['/v1/orgs/{orgId}/quota'] = quota(true)
  // The unauthenticated endpoints' refusals: what the listener answers before any route (runtime/platform/http/server.ts)
  // and, for the document, its refusal of any query; never a 401 or a quota 429.
  const tooLong = `A request URL over ${MAX_URL.toLocaleString('en-US')} characters, or an HTTP/1.1 request without \`Host\` (\`invalid_parameter\`).`
  paths['/'] = {
    get: {
      operationId: 'listVersions',
      summary: 'List API versions',
      description: 'The version table: each version, its status and, when deprecated, its sunset date. Unauthenticated.',
      tags: ['Service'],
      security: [],
      responses: {
        200: { description: 'The versions.', content: { 'application/json': { schema: ref('Versions') } } },
        400: { description: `Bad Request. ${tooLong}`, headers: { 'X-Request-Id': hdr('X-Request-Id') }, content: { 'application/json': { schema: ref('Error') } } },
        429: resp('Shed'),
      },
    },
  }
  paths['/v1/openapi.json'] = {
    get: {
      operationId: 'getOpenApi',
      summary: 'Get this document',
      description: 'This OpenAPI document. Unauthenticated, free.',
      tags: ['Service'],
      security: [],
      responses: {
        200: { description: 'OpenAPI 3.1.', headers: VERSION_REFS, content: { 'application/json': { schema: { type: 'object' } } } },
        400: { description: `Bad Request. Any query parameter (\`unknown_parameter\`: it takes none). ${tooLong}`, headers: VERSION_REFS, content: { 'application/json': { schema: ref('Error') } } },
        429: resp('Shed'),
      },
    },
  }
  return {
    // No jsonSchemaDialect: the schemas are plain JSON Schema 2020-12, which OpenAPI 3.1's default dialect extends, and
    // Swagger UI (GET /docs) shows a warning box for any other value.
    openapi: '3.1.0',
    info: {
      title: API_TITLE,
      version: API_VERSION,
      summary: 'Read-only access to what scans of CRM-platform orgs found.',
      license: LICENSE,
      description:
        'Every request but `GET /` and this document is authenticated (an API key with HTTP Basic, or a user OAuth access token with `Bearer`) and counted on the account quota, reads of the quota excepted. Lists take `limit`, `offset`, `filter` (RQL) and `sort` where declared.',
    },
    servers: [{ url: serverUrl }],
    security: [{ apiKey: [] }, { oauth: ['mcp:read'] }],
    tags: [...tags, { name: 'Quota', description: "The account's quota." }, { name: 'Service', description: 'Discovery.' }],
    paths,
    components: {
      schemas,
      responses: errorResponses(),
      headers: { ...RATE_HEADERS, ...VERSION_HEADERS, 'Retry-After': { description: 'Seconds to wait.', schema: { type: 'integer' } } },
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'basic', description: 'An API key: the key id as user name, the secret as password.' },
        oauth: {
          type: 'oauth2',
          description: 'A user OAuth 2.0 access token (authorization code with PKCE S256); the token sees only the orgs granted to the user.',
          flows: { authorizationCode: { authorizationUrl: '/oauth/authorize', tokenUrl: '/oauth/token', refreshUrl: '/oauth/token', scopes: { 'mcp:read': 'Read scan data', 'mcp:write': 'Change data (no endpoint needs it yet)' } } },
        },
      },
    },
  }
}

