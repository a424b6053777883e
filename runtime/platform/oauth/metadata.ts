/**
 * Discovery and registration: authorization-server metadata (RFC 8414), protected-resource metadata (RFC 9728) for
 * the MCP endpoint and the REST API, the published signing keys, and automatic client registration (RFC 7591) of
 * public clients, bounded per client address.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { clientNameProblem, MAX_CLIENT_NAME, redirectUriProblem, registerClient, SCOPES } from './clients.ts'
import type { OAuthContext } from './context.ts'
import { OAuthError, readJson, sendJson, sendOAuthError } from './http-util.ts'

type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void>

const PUBLIC = { 'Cache-Control': 'public, max-age=300', 'Access-Control-Allow-Origin': '*' }

export function authorizationServerMetadata(o: OAuthContext): Record<string, unknown> {
  const { issuer } = o.urls()
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    registration_endpoint: `${issuer}/oauth/register`,
    revocation_endpoint: `${issuer}/oauth/revoke`,
    jwks_uri: `${issuer}/oauth/jwks`,
    scopes_supported: [...SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:token-exchange'],
    token_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
    revocation_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
  }
}

export function metadataHandlers(o: OAuthContext): Record<'authorizationServer' | 'mcpResource' | 'restResource' | 'jwks' | 'register', Handler> {
  const resourceMetadata = (resource: string, name: string) => ({
    resource,
    authorization_servers: [o.urls().issuer],
    scopes_supported: [...SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: name,
  })
  return {
    async authorizationServer(_req, res) {
      sendJson(res, 200, authorizationServerMetadata(o), PUBLIC)
    },
    async mcpResource(_req, res) {
      sendJson(res, 200, resourceMetadata(o.urls().mcpResource, 'orgscan MCP server'), PUBLIC)
    },
    async restResource(_req, res) {
      sendJson(res, 200, resourceMetadata(o.urls().restResource, 'orgscan REST API'), PUBLIC)
    },
    async jwks(_req, res) {
      sendJson(res, 200, await o.keys.jwks(), PUBLIC)
    },
    async register(req, res) {
      try {
        const m = await readJson(req)
        const uris = m.redirect_uris
        if (!Array.isArray(uris) || uris.length === 0 || uris.length > 10) throw new OAuthError(400, 'invalid_redirect_uri', 'redirect_uris must list 1 to 10 URIs.')
        for (const u of uris) {
          const problem = redirectUriProblem(u as string)
          if (problem) throw new OAuthError(400, 'invalid_redirect_uri', `Redirect URI ${JSON.stringify(String(u).slice(0, 200))} ${problem}.`)
        }
        const method = m.token_endpoint_auth_method ?? 'none'
        if (method !== 'none') throw new OAuthError(400, 'invalid_client_metadata', 'Automatic registration is for public clients: token_endpoint_auth_method must be none (PKCE protects the code).')
        const grants = (m.grant_types ?? ['authorization_code', 'refresh_token']) as unknown
        if (!Array.isArray(grants) || grants.some((g) => g !== 'authorization_code' && g !== 'refresh_token')) throw new OAuthError(400, 'invalid_client_metadata', 'grant_types may be authorization_code and refresh_token.')
        const types = (m.response_types ?? ['code']) as unknown
        if (!Array.isArray(types) || types.some((t) => t !== 'code')) throw new OAuthError(400, 'invalid_client_metadata', 'response_types may only be code.')
        const rawScope = m.scope ?? SCOPES.join(' ')
        if (typeof rawScope !== 'string') throw new OAuthError(400, 'invalid_client_metadata', 'scope must be a string.')
        const scopes = [...new Set(rawScope.split(' ').filter((s) => s !== ''))]
        if (scopes.length === 0 || scopes.some((s) => !(SCOPES as readonly string[]).includes(s))) throw new OAuthError(400, 'invalid_client_metadata', `scope may name ${SCOPES.join(', ')}.`)
        if (m.client_name !== undefined && typeof m.client_name !== 'string') throw new OAuthError(400, 'invalid_client_metadata', 'client_name must be a string.')
        const given = m.client_name?.trim() ?? ''
        const nameProblem = clientNameProblem(given)
        if (nameProblem) throw new OAuthError(400, 'invalid_client_metadata', `client_name ${nameProblem}.`)
        // Cut by characters, never inside a surrogate pair.
        const name = given === '' ? 'Unnamed application' : [...given].slice(0, MAX_CLIENT_NAME).join('')
        const now = new Date(o.clock())
        const client = await registerClient(o.sql, { name, redirectUris: [...new Set(uris as string[])], scopes, source: req.socket.remoteAddress ?? 'unknown', now }, o.config.registrationsPerHour)
        // RFC 7591 has no error for this; temporarily_unavailable is OAuth's registered "try again later", with when.
        if (!client) throw new OAuthError(429, 'temporarily_unavailable', `Too many registrations from this address; at most ${o.config.registrationsPerHour} an hour.`, { 'Retry-After': '3600' })
        sendJson(res, 201, {
          client_id: client.clientId,
          client_id_issued_at: Math.floor(now.getTime() / 1000),
          client_name: client.name,
          redirect_uris: client.redirectUris,
          // What the client may actually use (RFC 7591 §3.2.1): grants are not restricted per client, so a narrower
          // list asked for is answered with the two every registered client has.
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: 'none',
          scope: client.scopes.join(' '),
        })
      } catch (e) {
        if (!(e instanceof OAuthError)) throw e
        sendOAuthError(res, e)
      }
    },
  }
}
