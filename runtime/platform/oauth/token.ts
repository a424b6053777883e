/**
 * `/oauth/token` and `/oauth/revoke`.
 *
 * Client authentication: a client with a secret authenticates with HTTP Basic (`client_secret_basic`) or
 * `client_secret_post`; a public client sends its `client_id` and proves possession with PKCE.
 *
 * Grants:
 * - `authorization_code`: the code once, within its lifetime, by the client it was issued to, with the same
 *   `redirect_uri`, the PKCE verifier of its challenge and (when sent) the same `resource`. A code presented twice
 *   revokes what was issued from it.
 * - `refresh_token`: rotated at every use; a rotated token presented again revokes its whole family. Not subject to
 *   PKCE.
 * - token exchange (RFC 8693), for confidential clients an administrator allowed it: an access token of this
 *   service, or an ID token of the upstream provider, becomes an access token of the exchanging client for the same
 *   user. Not subject to PKCE; no refresh token. An access token's exchange keeps its family and at most its scopes,
 *   and a client cannot exchange its own tokens (docs/adr/0026-oauth-tokens-and-audiences.md).
 * Enhanced MCP Security: when the user's account has it on, only clients issued for that account get tokens; any
 * other client — registered automatically or issued elsewhere — fails with 400 `access_denied`. A client issued for
 * one account never gets tokens for another account's users.
 */
import { authorizationOf, SEVERAL_AUTHORIZATIONS } from '../../core/http/authorization.ts'
import { randomUUID } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { findClient, secretMatches, type OAuthClient } from './clients.ts'
import { requestedScopes, resolveResource, type OAuthContext } from './context.ts'
import { s256, safeEqual } from './crypto.ts'
import { OAuthError, readForm, sendJson, sendOAuthError } from './http-util.ts'
import { ApiError } from '../../core/errors.ts'

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange'
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token'
const ID_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:id_token'
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/

type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void>

/** A token refused as invalid (401) is no token; any other failure (the database unreachable) fails the request. */
function noToken(e: unknown): undefined {
  if (e instanceof ApiError && e.status === 401) return undefined
  throw e
}

function basicCredentials(header: string | undefined): { id: string; secret: string } | undefined {
  if (!header || !/^basic /i.test(header)) return undefined
  const text = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8')
  const colon = text.indexOf(':')
  if (colon < 0) return undefined
  try {
    return { id: decodeURIComponent(text.slice(0, colon)), secret: decodeURIComponent(text.slice(colon + 1)) }
  } catch {
    return undefined
  }
}

export function tokenHandlers(o: OAuthContext): { token: Handler; revoke: Handler } {
  const invalidClient = () => new OAuthError(401, 'invalid_client', 'Client authentication failed.', { 'WWW-Authenticate': 'Basic realm="orgscan"' })

  /** The calling client, authenticated as its kind requires. */
  async function authenticateClient(req: IncomingMessage, form: Map<string, string>): Promise<OAuthClient> {
    const authorization = authorizationOf(req)
    if (authorization === SEVERAL_AUTHORIZATIONS) throw invalidClient()
    const basic = basicCredentials(authorization)
    const id = basic?.id ?? form.get('client_id')
    const secret = basic?.secret ?? form.get('client_secret')
    if (basic && form.has('client_id') && form.get('client_id') !== basic.id) throw invalidClient()
    if (!id) throw new OAuthError(400, 'invalid_request', 'client_id is required.')
    const client = await findClient(o.sql, id)
    if (!client || client.revoked) throw invalidClient()
    if (client.confidential) {
      if (secret === undefined || !secretMatches(o.pepper, client, secret)) throw invalidClient()
    } else if (secret !== undefined) {
      throw invalidClient()
    }
    return client
  }

  /** Enhanced MCP Security and account binding, for every grant. */
  async function checkClientForUser(client: OAuthClient, userId: string): Promise<void> {
    const [u] = await o.sql`SELECT u.account_id::text AS account_id, a.enhanced_mcp_security AS ems FROM users u JOIN accounts a ON a.id = u.account_id WHERE u.id = ${userId}::bigint`
    if (!u) throw new OAuthError(400, 'invalid_grant', 'The user no longer exists.')
    if (client.accountId !== null && client.accountId !== u.account_id) throw new OAuthError(400, 'access_denied', 'This client was not issued for the user\'s account.')
    if (u.ems && client.accountId === null) {
      throw new OAuthError(400, 'access_denied', 'The account requires Enhanced MCP Security: only clients its administrator issued are accepted.')
    }
  }

  /**
   * The access token (of `scopes`) and, with `refresh`, the rotated refresh token, which keeps the sign-in's scopes
   * (`refreshScopes`, else `scopes`): asking a refresh for fewer scopes narrows that access token only (RFC 6749 §6).
   */
  async function tokens(client: OAuthClient, g: { userId: string; scopes: readonly string[]; refreshScopes?: readonly string[]; resource: string; family: string; refresh: boolean }) {
    const access = await o.tokens.issue({ userId: g.userId, clientId: client.clientId, scopes: g.scopes, resource: g.resource, family: g.family })
    const body: Record<string, unknown> = { access_token: access.token, token_type: 'Bearer', expires_in: access.expiresIn, scope: g.scopes.join(' ') }
    if (g.refresh) body.refresh_token = await o.grants.issueRefresh({ family: g.family, clientId: client.clientId, userId: g.userId, scopes: g.refreshScopes ?? g.scopes, resource: g.resource, now: o.clock() })
    return body
  }

  /** A parameter the grant cannot do without: its absence is `invalid_request` (RFC 6749 §5.2), not a failed grant. */
  function required(form: Map<string, string>, name: string): string {
    const v = form.get(name)
    if (v === undefined || v === '') throw new OAuthError(400, 'invalid_request', `${name} is required.`)
    return v
  }

  async function authorizationCode(client: OAuthClient, form: Map<string, string>) {
    const raw = required(form, 'code')
    required(form, 'redirect_uri')
    const code = await o.grants.takeCode(raw, o.clock())
    if (!code.ok) {
      // Its family was revoked: this process forgets the tokens it checked at once (others within ORGSCAN_AUTH_CACHE_MS).
      if (code.reused) o.onRevoke({ family: code.family })
      throw new OAuthError(400, 'invalid_grant', code.reused ? 'The code was already used; what it issued is revoked.' : 'Unknown code.')
    }
    if (code.expired) throw new OAuthError(400, 'invalid_grant', 'The code has expired.')
    if (code.clientId !== client.clientId) throw new OAuthError(400, 'invalid_grant', 'The code was issued to another client.')
    if (form.get('redirect_uri') !== code.redirectUri) throw new OAuthError(400, 'invalid_grant', 'redirect_uri does not match the authorization request.')
    const verifier = form.get('code_verifier') ?? ''
    if (!VERIFIER.test(verifier) || !safeEqual(s256(verifier), code.codeChallenge)) throw new OAuthError(400, 'invalid_grant', 'The PKCE code_verifier does not match.')
    if (form.has('resource') && resolveResource(form.get('resource'), o.urls()) !== code.resource) throw new OAuthError(400, 'invalid_target', 'resource differs from the authorization request.')
    await checkClientForUser(client, code.userId)
    return tokens(client, { userId: code.userId, scopes: code.scopes, resource: code.resource, family: code.family, refresh: true })
  }

  /** What a refresh request asks of a refresh token: its scopes (narrowed or as they are) and the same resource. */
  function refreshRequest(t: { scopes: string[]; resource: string }, form: Map<string, string>): string[] {
    if (form.has('resource') && resolveResource(form.get('resource'), o.urls()) !== t.resource) {
      throw new OAuthError(400, 'invalid_target', 'resource differs from the one the refresh token was issued for.')
    }
    if (!form.has('scope')) return t.scopes
    const asked = requestedScopes(form.get('scope'), t.scopes)
    if ('invalid' in asked) throw new OAuthError(400, 'invalid_scope', asked.invalid)
    return asked.scopes
  }

  async function refresh(client: OAuthClient, form: Map<string, string>) {
    const raw = required(form, 'refresh_token')
    // A request refused for its own parameters leaves the token unused, so the client can retry without them (taken
    // first, the token would be rotated with nothing issued, and the retry would count as reuse and revoke the sign-in).
    const live = await o.grants.peekRefresh(raw, o.clock())
    if (live && live.clientId === client.clientId) {
      refreshRequest(live, form)
      await checkClientForUser(client, live.userId)
    }
    const t = await o.grants.takeRefresh(raw, o.clock())
    if (!t.ok) {
      if (t.reused) o.onRevoke({ family: t.family })
      throw new OAuthError(400, 'invalid_grant', t.reused ? 'The refresh token was already used; every token of this sign-in is revoked.' : 'Unknown, expired or revoked refresh token.')
    }
    if (t.clientId !== client.clientId) {
      await o.grants.revokeFamily(t.family, o.clock())
      o.onRevoke({ family: t.family })
      throw new OAuthError(400, 'invalid_grant', 'The refresh token was issued to another client.')
    }
    const scopes = refreshRequest(t, form)
    await checkClientForUser(client, t.userId)
    return tokens(client, { userId: t.userId, scopes, refreshScopes: t.scopes, resource: t.resource, family: t.family, refresh: true })
  }

  async function exchange(client: OAuthClient, form: Map<string, string>) {
    if (!client.confidential || !client.tokenExchange) throw new OAuthError(400, 'unauthorized_client', 'This client may not exchange tokens.')
    const subject = required(form, 'subject_token')
    const type = required(form, 'subject_token_type')
    let userId: string | undefined
    // An access token's exchange stays inside its sign-in: the same family (revoking the sign-in ends what was
    // exchanged from it) and at most the scopes it grants. An ID token starts a sign-in of its own.
    let family: string = randomUUID()
    let within: readonly string[] = client.scopes
    if (type === ACCESS_TOKEN_TYPE) {
      const urls = o.urls()
      const claims = await o.tokens.claims(subject, urls.mcpResource).catch(() => o.tokens.claims(subject, urls.restResource)).catch(noToken)
      const principal = claims && (await o.tokens.authenticate(subject, claims.aud === urls.mcpResource ? urls.mcpResource : urls.restResource).catch(noToken))
      userId = principal?.userId ?? undefined
      if (claims && principal) {
        // Exchanging its own token again and again would be a refresh token by another name, which exchange does not give.
        if (claims.client_id === client.clientId) throw new OAuthError(400, 'invalid_grant', 'A client cannot exchange a token issued to itself; it exchanges a token another client got for the user.')
        family = claims.sid
        within = client.scopes.filter((s) => (principal.scopes ?? []).includes(s))
      }
    } else if (type === ID_TOKEN_TYPE) {
      if (!o.upstream) throw new OAuthError(400, 'invalid_request', 'No identity provider is configured for ID tokens.')
      const who = await o.upstream.verifyIdToken(subject).catch(() => undefined)
      const [u] = who ? await o.sql`SELECT id::text AS id FROM users WHERE lower(email) = lower(${who.email})` : []
      userId = u?.id as string | undefined
    } else {
      throw new OAuthError(400, 'invalid_request', `subject_token_type must be ${ACCESS_TOKEN_TYPE} or ${ID_TOKEN_TYPE}.`)
    }
    if (!userId) throw new OAuthError(400, 'invalid_grant', 'The subject token is invalid, expired, revoked or names no user.')
    const resource = resolveResource(form.get('resource') ?? form.get('audience'), o.urls())
    if (!resource) throw new OAuthError(400, 'invalid_target', 'Unknown resource.')
    const asked = requestedScopes(form.get('scope'), within)
    if ('invalid' in asked) throw new OAuthError(400, 'invalid_scope', asked.invalid)
    if (asked.scopes.length === 0) throw new OAuthError(400, 'invalid_scope', 'The subject token grants none of the scopes this client may have.')
    await checkClientForUser(client, userId)
    const body = await tokens(client, { userId, scopes: asked.scopes, resource, family, refresh: false })
    return { ...body, issued_token_type: ACCESS_TOKEN_TYPE }
  }

  return {
    async token(req, res) {
      try {
        const form = await readForm(req)
        const client = await authenticateClient(req, form)
        const grant = required(form, 'grant_type')
        const body =
          grant === 'authorization_code' ? await authorizationCode(client, form)
          : grant === 'refresh_token' ? await refresh(client, form)
          : grant === TOKEN_EXCHANGE ? await exchange(client, form)
          : undefined
        if (!body) throw new OAuthError(400, 'unsupported_grant_type', 'grant_type must be authorization_code, refresh_token or token exchange.')
        sendJson(res, 200, body)
      } catch (e) {
        if (!(e instanceof OAuthError)) throw e
        sendOAuthError(res, e)
      }
    },

    /** RFC 7009: always 200 for a token that is unknown or not the caller's (nothing is revealed). */
    async revoke(req, res) {
      try {
        const form = await readForm(req)
        const client = await authenticateClient(req, form)
        const token = required(form, 'token')
        const family = await o.grants.refreshFamily(token)
        // This process forgets what it checked of exactly what was revoked (others within ORGSCAN_AUTH_CACHE_MS); a
        // revocation that revoked nothing changes nothing.
        if (family && family.clientId === client.clientId) {
          await o.grants.revokeFamily(family.family, o.clock())
          o.onRevoke({ family: family.family })
        }
        if (!family && token.includes('.')) {
          const urls = o.urls()
          const claims = await o.tokens.claims(token, urls.mcpResource).catch(() => o.tokens.claims(token, urls.restResource)).catch(noToken)
          if (claims && claims.client_id === client.clientId) {
            await o.grants.revokeAccessToken(claims.jti, (claims.exp ?? 0) * 1000)
            o.onRevoke({ jti: claims.jti })
          }
        }
        res.writeHead(200, { 'Cache-Control': 'no-store', 'Content-Length': '0' })
        res.end()
      } catch (e) {
        if (!(e instanceof OAuthError)) throw e
        sendOAuthError(res, e)
      }
    },
  }
}
