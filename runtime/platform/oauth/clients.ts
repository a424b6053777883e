/**
 * OAuth clients. Two kinds:
 * - registered automatically (RFC 7591) by anyone: public (no secret, PKCE only), bound to no account, at most
 *   `perSourcePerHour` registrations per client address;
 * - issued by an administrator for one account (`orgscan clients create`): confidential, with a secret shown once
 *   and stored as HMAC-SHA-256(pepper); the only clients accepted under the account's Enhanced MCP Security;
 * - the service's own client of its reference page (`GET /docs`), kept at every start: public, bound to no account,
 *   its one redirect URI the page's `/docs/oauth2-redirect.html` at the service's public URL, read scope and the
 *   REST API only, no consent page (docs/adr/0165-reference-page-on-phones-and-its-oauth-client.md).
 *
 * Redirect URIs are https, or http on a loopback host. A redirect URI matches a registered one exactly, except
 * that a registered loopback URI (`localhost`, `127.0.0.1`, `[::1]`) matches any port on any of those three names,
 * with the same scheme, path and query: native apps listen on a port the system chooses, and an administrator who
 * registered `http://localhost/callback` for a client that sends `http://127.0.0.1:53123/callback` means the same
 * machine (every name sends the code to the user's own computer).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto'
import type postgres from 'postgres'
import { hashSecret } from '../auth/api-keys.ts'
import { AdminError } from '../admin.ts'

export const SCOPES = ['mcp:read', 'mcp:write'] as const
export type Scope = (typeof SCOPES)[number]

export interface OAuthClient {
  clientId: string
  accountId: string | null
  name: string
  redirectUris: string[]
  scopes: string[]
  confidential: boolean
  tokenExchange: boolean
  revoked: boolean
  createdAt: string
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]'])
export const CLIENT_ID = /^(mcp|osc|doc)_[A-Za-z0-9_-]{22}$/

/** The client id of the reference page (the same in every installation: a public client's id is no secret). */
export const REFERENCE_PAGE_CLIENT_ID = 'doc_orgscan-reference-page'
/** The one scope the reference page's client has: every REST read needs it, and no more. */
const REFERENCE_PAGE_SCOPES = ['mcp:read']

/** Why a redirect URI cannot be registered, or undefined when it can. */
export function redirectUriProblem(uri: string): string | undefined {
  if (typeof uri !== 'string' || uri.length === 0 || uri.length > 2000) return 'must be a URL of at most 2,000 characters'
  let u: URL
  try {
    u = new URL(uri)
  } catch {
    return 'is not an absolute URL'
  }
  if (u.hash || uri.includes('#')) return 'must not have a fragment'
  if (u.username || u.password) return 'must not carry credentials'
  if (u.protocol === 'https:') return undefined
  if (u.protocol === 'http:' && LOOPBACK.has(u.hostname)) return undefined
  return 'must be https, or http on localhost, 127.0.0.1 or [::1]'
}

/** Whether `given` matches one of the client's registered redirect URIs (loopback: any port, any loopback name). */
export function redirectUriMatches(registered: readonly string[], given: string): boolean {
  if (registered.includes(given)) return true
  let g: URL
  try {
    g = new URL(given)
  } catch {
    return false
  }
  if (!LOOPBACK.has(g.hostname) || g.protocol !== 'http:' || g.hash || g.username || g.password) return false
  return registered.some((r) => {
    const u = new URL(r)
    return LOOPBACK.has(u.hostname) && u.protocol === g.protocol && u.pathname === g.pathname && u.search === g.search
  })
}

type Row = {
  client_id: string
  account_id: string | null
  name: string
  redirect_uris: string[]
  scopes: string[]
  secret_hash: Buffer | null
  token_exchange: boolean
  revoked_at: Date | null
  created_at: Date
}

const toClient = (r: Row): OAuthClient => ({
  clientId: r.client_id,
  accountId: r.account_id,
  name: r.name,
  redirectUris: r.redirect_uris,
  scopes: r.scopes,
  confidential: r.secret_hash !== null,
  tokenExchange: r.token_exchange,
  revoked: r.revoked_at !== null,
  createdAt: r.created_at.toISOString(),
})

const COLUMNS = 'client_id, account_id::text AS account_id, name, redirect_uris, scopes, secret_hash, token_exchange, revoked_at, created_at'

function newClientId(prefix: 'mcp' | 'osc'): string {
  return `${prefix}_${randomBytes(16).toString('base64url').slice(0, 22)}`
}

export async function findClient(sql: postgres.Sql, clientId: string): Promise<(OAuthClient & { secretHash: Buffer | null }) | undefined> {
  if (!CLIENT_ID.test(clientId)) return undefined
  const [r] = await sql.unsafe<Row[]>(`SELECT ${COLUMNS} FROM oauth_clients WHERE client_id = $1`, [clientId])
  return r ? { ...toClient(r), secretHash: r.secret_hash ? Buffer.from(r.secret_hash) : null } : undefined
}

/** Whether `secret` is the client's secret (constant time; false for a public client). */
export function secretMatches(pepper: string, client: { secretHash: Buffer | null }, secret: string): boolean {
  const h = hashSecret(pepper, secret)
  return timingSafeEqual(h, client.secretHash ?? Buffer.alloc(32)) && client.secretHash !== null
}

export interface Registration {
  name: string
  redirectUris: string[]
  scopes: string[]
  source: string
  now: Date
}

/** Registers a public client, unless `source` registered `perHour` already in the last hour (undefined then). */
export async function registerClient(sql: postgres.Sql, r: Registration, perHour: number): Promise<OAuthClient | undefined> {
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(hashtextextended(${r.source}, 7211004554))`
    const [{ n }] = await tx<{ n: number }[]>`SELECT count(*)::int AS n FROM oauth_clients
      WHERE account_id IS NULL AND registered_from = ${r.source} AND created_at > ${new Date(r.now.getTime() - 3_600_000)}`
    if (n >= perHour) return undefined
    const [row] = await tx.unsafe<Row[]>(
      `INSERT INTO oauth_clients (client_id, name, redirect_uris, scopes, registered_from, created_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${COLUMNS}`,
      [newClientId('mcp'), r.name, r.redirectUris as never, r.scopes as never, r.source, r.now],
    )
    return toClient(row)
  })
}

/** The longest client name, in characters (a registered name is cut to it; an issued one is refused beyond it). */
export const MAX_CLIENT_NAME = 100
/** Control characters, bidirectional-text controls, zero-width and line-separator characters, unpaired surrogates. */
const UNSAFE_IN_NAME = /[\p{Cc}\p{Bidi_Control}\p{Cs}\u200B\u2028\u2029\uFEFF]/u

/**
 * Why a client name cannot be shown on the consent page, or undefined. Escaping keeps markup out; these characters
 * would still let a name render as another one (a right-to-left override reverses what follows it).
 */
export function clientNameProblem(name: string): string | undefined {
  if (UNSAFE_IN_NAME.test(name)) return 'may not contain control characters, bidirectional-text controls, zero-width characters or unpaired surrogates'
  return undefined
}

function checkIssued(redirectUris: readonly string[], scopes: readonly string[], name?: string): void {
  if (name !== undefined) {
    if (name.trim() === '') throw new AdminError('A client needs a --name.')
    if ([...name].length > MAX_CLIENT_NAME) throw new AdminError(`A client name has at most ${MAX_CLIENT_NAME} characters.`)
    const p = clientNameProblem(name)
    if (p) throw new AdminError(`The client name ${p}.`)
  }
  if (redirectUris.length === 0) throw new AdminError('A client needs at least one --redirect-uri.')
  for (const u of redirectUris) {
    const p = redirectUriProblem(u)
    if (p) throw new AdminError(`Redirect URI ${JSON.stringify(u.slice(0, 200))} ${p}.`)
  }
  if (scopes.length === 0) throw new AdminError(`A client needs at least one --scope (${SCOPES.join(', ')}).`)
  for (const s of scopes) if (!(SCOPES as readonly string[]).includes(s)) throw new AdminError(`Unknown scope ${JSON.stringify(s.slice(0, 50))}; scopes: ${SCOPES.join(', ')}.`)
}

/** An administrator issues a confidential client for an account; the secret is returned once. */
export async function issueClient(
  sql: postgres.Sql,
  pepper: string,
  a: { account: string; name: string; redirectUris: string[]; scopes: string[]; tokenExchange?: boolean },
): Promise<OAuthClient & { clientSecret: string }> {
  checkIssued(a.redirectUris, a.scopes, a.name)
  const [acct] = await sql`SELECT 1 FROM accounts WHERE id = ${a.account}::bigint`
  if (!acct) throw new AdminError(`No account with id ${a.account}.`)
  const secret = randomBytes(32).toString('base64url')
  const [row] = await sql.unsafe<Row[]>(
    `INSERT INTO oauth_clients (client_id, account_id, name, redirect_uris, scopes, secret_hash, token_exchange, created_at)
     VALUES ($1, $2::bigint, $3, $4, $5, $6, $7, now()) RETURNING ${COLUMNS}`,
    [newClientId('osc'), a.account, a.name, [...new Set(a.redirectUris)] as never, [...new Set(a.scopes)] as never, hashSecret(pepper, secret), a.tokenExchange ?? false],
  )
  return { ...toClient(row), clientSecret: secret }
}

/**
 * The reference page's client, created or brought up to date at start: its redirect URI follows the service's
 * public URL (none when that URL could not be one, e.g. plain http on a host that is not loopback). Revoked by an
 * administrator (`orgscan clients revoke`), it stays revoked.
 */
export async function keepReferencePageClient(sql: postgres.Sql, publicUrl: string, now: Date): Promise<void> {
  const uri = `${publicUrl}/docs/oauth2-redirect.html`
  const uris = redirectUriProblem(uri) === undefined ? [uri] : []
  await sql.unsafe(
    `INSERT INTO oauth_clients (client_id, name, redirect_uris, scopes, created_at) VALUES ($1, 'orgscan API reference', $2::text[], $3::text[], $4)
     ON CONFLICT (client_id) DO UPDATE SET redirect_uris = EXCLUDED.redirect_uris, scopes = EXCLUDED.scopes
     WHERE oauth_clients.redirect_uris IS DISTINCT FROM EXCLUDED.redirect_uris OR oauth_clients.scopes IS DISTINCT FROM EXCLUDED.scopes`,
    [REFERENCE_PAGE_CLIENT_ID, uris as never, REFERENCE_PAGE_SCOPES as never, now],
  )
}

export async function listClients(sql: postgres.Sql, account: string): Promise<OAuthClient[]> {
  const rows = await sql.unsafe<Row[]>(`SELECT ${COLUMNS} FROM oauth_clients WHERE account_id = $1::bigint ORDER BY created_at, client_id`, [account])
  return rows.map(toClient)
}

export async function updateClient(sql: postgres.Sql, clientId: string, a: { name?: string; redirectUris?: string[]; scopes?: string[] }): Promise<OAuthClient> {
  const current = await findClient(sql, clientId)
  if (!current || current.accountId === null) throw new AdminError(`No issued client with id ${clientId.slice(0, 64)}.`)
  const redirectUris = a.redirectUris ?? current.redirectUris
  const scopes = a.scopes ?? current.scopes
  checkIssued(redirectUris, scopes, a.name)
  const [row] = await sql.unsafe<Row[]>(
    `UPDATE oauth_clients SET name = $2, redirect_uris = $3, scopes = $4 WHERE client_id = $1 RETURNING ${COLUMNS}`,
    [clientId, a.name ?? current.name, [...new Set(redirectUris)] as never, [...new Set(scopes)] as never],
  )
  return toClient(row)
}

/**
 * Revokes a client: its tokens stop at once (the access-token check reads it), its refresh tokens with them. A client
 * revoked before is left as it was (`alreadyRevoked`, with the time of its first revocation).
 */
export async function revokeClient(sql: postgres.Sql, clientId: string): Promise<OAuthClient & { revokedAt: string; alreadyRevoked: boolean }> {
  if (!CLIENT_ID.test(clientId)) throw new AdminError(`No client with id ${clientId.slice(0, 64)}.`)
  const [done] = await sql.unsafe<Row[]>(`UPDATE oauth_clients SET revoked_at = now() WHERE client_id = $1 AND revoked_at IS NULL RETURNING ${COLUMNS}`, [clientId])
  const row = done ?? (await sql.unsafe<Row[]>(`SELECT ${COLUMNS} FROM oauth_clients WHERE client_id = $1`, [clientId]))[0]
  if (!row) throw new AdminError(`No client with id ${clientId.slice(0, 64)}.`)
  await sql`UPDATE oauth_refresh_tokens SET revoked_at = coalesce(revoked_at, now()) WHERE client_id = ${clientId}`
  return { ...toClient(row), revokedAt: row.revoked_at!.toISOString(), alreadyRevoked: done === undefined }
}
