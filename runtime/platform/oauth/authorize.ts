/**
 * The browser side of sign-in: `/oauth/authorize`, the sign-in page, the consent page, the upstream round trip and
 * its `/oauth/callback`.
 *
 * `/oauth/authorize` never redirects to an unverified place: an unknown or revoked client, a `redirect_uri` that is
 * not one of the client's (a callback URL mismatch), a missing `code_challenge` or a `code_challenge_method` other
 * than `S256` are answered 400 with an OAuth error body (`invalid_request`, `invalid_client`). Errors found after
 * that (response type, scope, resource) go back to the client's redirect URI with `error`, `state` and `iss`.
 *
 * A sign-in is bound to the browser that started it (an HttpOnly cookie whose hash the request stores): the pages,
 * their forms (each with a CSRF token derived from the request and the cookie) and the upstream callback only
 * continue a sign-in this service started in that browser; anything else is 400. Before the first sign-in of a user
 * to an automatically registered client, the user approves it on a consent page naming the client, the host it
 * will be sent to and the scopes. The reference page's own client asks no consent (its code only ever comes back
 * to the service's own page) and gets tokens for the REST API only.
 */
import { randomBytes } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { findClient, redirectUriMatches, REFERENCE_PAGE_CLIENT_ID, type OAuthClient } from './clients.ts'
import { BROWSER_COOKIE, csrfToken, requestedScopes, resolveResource, type OAuthContext } from './context.ts'
import { randomToken, s256, safeEqual, verifyPassword } from './crypto.ts'
import { REQUEST_TTL_MS, type AuthRequest } from './grants.ts'
import { cookie, OAuthError, queryOf, readForm, redirect, sendOAuthError, setCookie, withParams } from './http-util.ts'
import { consentPage, errorPage, sendPage, signInPage } from './pages.ts'
import { userForVerifiedEmail } from './users.ts'
import { isUnavailable } from '../../core/db/errors.ts'

const CHALLENGE = /^[A-Za-z0-9._~-]{43,128}$/
const REQUEST_ID = /^[A-Za-z0-9_-]{43}$/

type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void>

/** Clients anyone registered need the user's consent; an administrator's, and the reference page's, do not. */
const asksConsent = (client: OAuthClient): boolean => client.accountId === null && client.clientId !== REFERENCE_PAGE_CLIENT_ID

export function authorizeHandlers(o: OAuthContext): Record<'authorize' | 'signInPage' | 'signIn' | 'consent' | 'upstream' | 'callback', Handler> {
  const secure = () => o.urls().issuer.startsWith('https:')

  const badRequest = (res: ServerResponse, message: string) => sendPage(res, 400, 'Sign-in cannot continue', errorPage(message))

  /** The request of a page or form, in the browser that started it. */
  async function current(req: IncomingMessage, requestId: string | undefined): Promise<{ r: AuthRequest; id: string; browser: string } | undefined> {
    const browser = cookie(req, BROWSER_COOKIE)
    if (!requestId || !REQUEST_ID.test(requestId) || !browser) return undefined
    const r = await o.grants.request(requestId, browser, o.clock())
    return r ? { r, id: requestId, browser } : undefined
  }

  type Current = { r: AuthRequest; id: string; browser: string }
  const NOT_STARTED = 'This sign-in was not started in this browser, has expired or is already complete.'

  /** The sign-in a page's `?request=` names, in this browser; otherwise answers 400 and gives undefined. */
  async function currentOfQuery(req: IncomingMessage, res: ServerResponse): Promise<Current | undefined> {
    let q: Map<string, string>
    try {
      q = queryOf(req)
    } catch {
      badRequest(res, 'Malformed request.')
      return undefined
    }
    const c = await current(req, q.get('request'))
    if (!c) badRequest(res, NOT_STARTED)
    return c
  }

  /** The sign-in a posted form names, in this browser and with its CSRF token; otherwise answers 400. */
  async function currentOfForm(req: IncomingMessage, res: ServerResponse): Promise<{ c: Current; form: Map<string, string> } | undefined> {
    const form = await readForm(req).catch(() => undefined)
    const c = form && (await current(req, form.get('request')))
    if (!form || !c || !safeEqual(form.get('csrf') ?? '', csrfToken(o.pepper, c.id, c.browser))) {
      badRequest(res, NOT_STARTED)
      return undefined
    }
    return { c, form }
  }

  /** The sign-in page of a request, with what the user typed and what went wrong when it is shown again. */
  async function showSignIn(res: ServerResponse, c: Current, status: number, again?: { email: string; error: string }): Promise<void> {
    const client = await findClient(o.sql, c.r.clientId)
    sendPage(res, status, 'Sign in', signInPage({
      requestId: c.id,
      csrf: csrfToken(o.pepper, c.id, c.browser),
      clientName: client?.name ?? 'An application',
      password: again ? true : o.config.passwordSignIn,
      upstreamName: o.upstream?.cfg.name,
      ...again,
    }))
  }

  /** Back to the client with the code (or an error), `state` and `iss`. */
  function toClient(res: ServerResponse, r: Pick<AuthRequest, 'redirectUri' | 'state'>, params: Record<string, string>): void {
    redirect(res, withParams(r.redirectUri, { ...params, state: r.state, iss: o.urls().issuer }))
  }

  /** A user is known for the request: consent first if needed, then the code. */
  async function proceed(res: ServerResponse, c: { r: AuthRequest; id: string; browser: string }, userId: string): Promise<void> {
    const client = await findClient(o.sql, c.r.clientId)
    if (!client || client.revoked) return badRequest(res, 'The application is no longer registered.')
    if (asksConsent(client) && !(await o.grants.hasConsent(userId, client.clientId, c.r.scopes))) {
      await o.grants.setUser(c.r.idHash, userId)
      const [u] = await o.sql`SELECT email FROM users WHERE id = ${userId}::bigint`
      return sendPage(res, 200, 'Allow access?', consentPage({
        requestId: c.id,
        csrf: csrfToken(o.pepper, c.id, c.browser),
        clientName: client.name,
        redirectHost: new URL(c.r.redirectUri).host,
        scopes: c.r.scopes,
        email: String(u?.email ?? ''),
      }))
    }
    const code = await o.grants.issueCode(c.r, userId, o.clock())
    toClient(res, c.r, { code })
  }

  return {
    async authorize(req, res) {
      let q: Map<string, string>
      try {
        q = queryOf(req)
      } catch (e) {
        return sendOAuthError(res, e as OAuthError)
      }
      // PKCE first: a request without it is refused with invalid_request whatever else is wrong with it.
      const challenge = q.get('code_challenge')
      if (!challenge) return sendOAuthError(res, new OAuthError(400, 'invalid_request', 'PKCE is required: code_challenge is missing.'))
      if (q.get('code_challenge_method') !== 'S256') return sendOAuthError(res, new OAuthError(400, 'invalid_request', 'PKCE is required with code_challenge_method S256.'))
      if (!CHALLENGE.test(challenge)) return sendOAuthError(res, new OAuthError(400, 'invalid_request', 'code_challenge must be 43 to 128 characters of [A-Za-z0-9._~-].'))
      const clientId = q.get('client_id') ?? ''
      const client = await findClient(o.sql, clientId)
      // Not redirected: an unknown client has no redirect URI to trust (invalid_client is a token-endpoint code).
      if (!client || client.revoked) return sendOAuthError(res, new OAuthError(400, 'invalid_request', 'Unknown client_id.'))
      const redirectUri = q.get('redirect_uri')
      if (!redirectUri) return sendOAuthError(res, new OAuthError(400, 'invalid_request', 'redirect_uri is required.'))
      if (!redirectUriMatches(client.redirectUris, redirectUri)) {
        return sendOAuthError(res, new OAuthError(400, 'invalid_request', 'Callback URL mismatch: redirect_uri is not one of the client\'s registered redirect URIs.'))
      }
      const state = q.get('state') ?? null
      if (state !== null && state.length > 1024) return sendOAuthError(res, new OAuthError(400, 'invalid_request', 'state is longer than 1,024 characters.'))
      const back = { redirectUri, state }
      const responseType = q.get('response_type')
      if (responseType === undefined) return toClient(res, back, { error: 'invalid_request', error_description: 'response_type is required (code).' })
      if (responseType !== 'code') return toClient(res, back, { error: 'unsupported_response_type', error_description: 'Only response_type=code is supported.' })
      const scopes = requestedScopes(q.get('scope'), client.scopes)
      if ('invalid' in scopes) return toClient(res, back, { error: 'invalid_scope', error_description: scopes.invalid })
      const resource = resolveResource(q.get('resource'), o.urls())
      if (!resource) return toClient(res, back, { error: 'invalid_target', error_description: `resource must be ${o.urls().mcpResource} or ${o.urls().restResource}.` })
      if (client.clientId === REFERENCE_PAGE_CLIENT_ID && resource !== o.urls().restResource) {
        return toClient(res, back, { error: 'invalid_target', error_description: `The reference page's client is for the REST API only (${o.urls().restResource}).` })
      }
      const known = cookie(req, BROWSER_COOKIE)
      const browser = known && /^[A-Za-z0-9_-]{43}$/.test(known) ? known : randomToken()
      const id = await o.grants.createRequest({ browser, clientId: client.clientId, redirectUri, state, scopes: scopes.scopes, resource, codeChallenge: challenge, now: o.clock() })
      redirect(res, `/oauth/sign-in?request=${id}`, { 'Set-Cookie': setCookie(BROWSER_COOKIE, browser, secure(), REQUEST_TTL_MS / 1000 * 6) })
    },

    async signInPage(req, res) {
      const c = await currentOfQuery(req, res)
      if (c) await showSignIn(res, c, 200)
    },

    async signIn(req, res) {
      const posted = await currentOfForm(req, res)
      if (!posted) return
      const { c, form } = posted
      if (!o.config.passwordSignIn) return badRequest(res, 'Password sign-in is turned off.')
      const email = (form.get('email') ?? '').trim().slice(0, 320)
      const password = (form.get('password') ?? '').slice(0, 200)
      const again = (status: number, error: string) => showSignIn(res, c, status, { email, error })
      // The attempt takes its token before the password is checked and gives it back when it succeeds: attempts sent at
      // once can check at most as many passwords as the address has tokens.
      const address = req.socket.remoteAddress
      if (!o.signInFailures.allow(address)) {
        return again(429, `Too many failed sign-ins from this address; try again in ${Math.max(1, o.signInFailures.waitSeconds(address))} seconds.`)
      }
      let u: { id: string; password_hash: string | null } | undefined
      let ok = false
      try {
        ;[u] = await o.sql<{ id: string; password_hash: string | null }[]>`SELECT id::text AS id, password_hash FROM users WHERE lower(email) = lower(${email})`
        ok = await verifyPassword(password, u?.password_hash)
      } catch (e) {
        o.signInFailures.giveBack(address)
        throw e
      }
      if (!ok || !u) return again(400, 'Wrong e-mail or password.')
      o.signInFailures.giveBack(address)
      await proceed(res, c, u.id)
    },

    async consent(req, res) {
      const posted = await currentOfForm(req, res)
      if (!posted) return
      const { c, form } = posted
      if (!c.r.userId) return badRequest(res, NOT_STARTED)
      if (form.get('decision') !== 'approve') {
        await o.grants.endRequest(c.r.idHash)
        return toClient(res, c.r, { error: 'access_denied', error_description: 'The user denied access.' })
      }
      await o.grants.recordConsent(c.r.userId, c.r.clientId, c.r.scopes, o.clock())
      const code = await o.grants.issueCode(c.r, c.r.userId, o.clock())
      toClient(res, c.r, { code })
    },

    async upstream(req, res) {
      const c = await currentOfQuery(req, res)
      if (!c) return
      if (!o.upstream) return badRequest(res, 'No identity provider is configured.')
      const nonce = randomBytes(16).toString('base64url')
      const verifier = randomToken()
      const state = await o.grants.startUpstream(c.r.idHash, nonce, verifier)
      redirect(res, await o.upstream.authorizationUrl({ state, nonce, challenge: s256(verifier), redirectUri: `${o.urls().issuer}/oauth/callback` }))
    },

    async callback(req, res) {
      let q: Map<string, string>
      try {
        q = queryOf(req)
      } catch {
        return badRequest(res, 'Malformed callback.')
      }
      const browser = cookie(req, BROWSER_COOKIE)
      const r = o.upstream ? await o.grants.takeUpstream(q.get('state') ?? '', browser, o.clock()) : undefined
      if (!r || !browser) return badRequest(res, 'This callback does not match a sign-in started here: unknown, expired or already used, or started in another browser.')
      if (q.has('error') || !q.get('code')) {
        await o.grants.endRequest(r.idHash)
        return toClient(res, r, { error: 'access_denied', error_description: 'The identity provider did not sign the user in.' })
      }
      let userId: string | undefined
      try {
        const who = await o.upstream!.exchange({ code: q.get('code')!, verifier: r.upstreamVerifier ?? '', redirectUri: `${o.urls().issuer}/oauth/callback`, nonce: r.upstreamNonce ?? '' })
        userId = await userForVerifiedEmail(o.sql, who.email, who.name)
        if (!userId) {
          await o.grants.endRequest(r.idHash)
          return sendPage(res, 403, 'No access', errorPage(`${who.email} has no orgscan account, and its domain is linked to none. Ask your administrator to invite you.`))
        }
      } catch (e) {
        // The database failing is not the identity provider's doing: answered as any such failure (503, retried).
        if (isUnavailable(e)) throw e
        o.log.warn({ msg: 'oauth: upstream sign-in failed', err: (e as Error).message })
        await o.grants.endRequest(r.idHash)
        return sendPage(res, 502, 'Sign-in failed', errorPage('The identity provider could not confirm the sign-in. Try again.'))
      }
      // The request id is not known here (only its hash): proceed with a page-less continuation.
      await proceedFromCallback(res, r, userId, browser)
    },
  }

  async function proceedFromCallback(res: ServerResponse, r: AuthRequest, userId: string, browser: string): Promise<void> {
    const client = await findClient(o.sql, r.clientId)
    if (client && asksConsent(client) && !(await o.grants.hasConsent(userId, client.clientId, r.scopes))) {
      // The consent page needs a request id the browser can post back: issue a fresh one for the same sign-in.
      const id = await o.grants.createRequest({ browser, clientId: r.clientId, redirectUri: r.redirectUri, state: r.state, scopes: r.scopes, resource: r.resource, codeChallenge: r.codeChallenge, now: o.clock() })
      await o.grants.endRequest(r.idHash)
      const fresh = await o.grants.request(id, browser, o.clock())
      return proceed(res, { r: fresh!, id, browser }, userId)
    }
    const code = await o.grants.issueCode(r, userId, o.clock())
    toClient(res, r, { code })
  }
}
