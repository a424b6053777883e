/**
 * Users who sign in (`orgscan users …`). Any user of an account, administrator or not, signs in and acts with an
 * OAuth token that sees only the orgs granted to that user. E-mail addresses are unique, compared without case.
 *
 * Who may sign in through the upstream OpenID Connect provider (with a verified e-mail): a user an administrator
 * created (invited) with that e-mail, whatever its domain; otherwise, a new user is created in the account an
 * administrator linked to the e-mail's domain (`orgscan accounts update ID --email-domain D`), with no org granted
 * until an administrator grants some. Anyone else is refused.
 */
import type postgres from 'postgres'
import { AdminError, getAccount } from '../admin.ts'
import { normalizeOrgId } from '../../core/org-id.ts'
import { hashPassword, newPassword } from './crypto.ts'

export interface UserInfo {
  id: string
  accountId: string
  email: string
  name: string
  isAdmin: boolean
  canSignInWithPassword: boolean
  orgs: string[]
  createdAt: string
}

const EMAIL = /^[^\s@<>"]{1,64}@[A-Za-z0-9.-]{1,190}\.[A-Za-z]{2,63}$/
const DOMAIN = /^(?=.{3,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/
const USER_ID = /^[1-9][0-9]{0,17}$/

export function checkEmail(email: string): string {
  const e = email.trim()
  if (!EMAIL.test(e)) throw new AdminError(`${JSON.stringify(email.slice(0, 100))} is not an e-mail address.`)
  return e
}

/** The canonical 18-character org id, or undefined for a malformed or wrong one. */
function orgId18(raw: string): string | undefined {
  try {
    return normalizeOrgId(raw)
  } catch {
    return undefined
  }
}

function checkUserId(id: string): void {
  if (!USER_ID.test(id)) throw new AdminError(`User id must be a positive integer, got ${JSON.stringify(id.slice(0, 40))}.`)
}

/** Creates a user; with no password given, a one-time password is generated and returned. */
export async function createSignInUser(
  sql: postgres.Sql,
  a: { account: string; email: string; name?: string; password?: string; admin?: boolean },
): Promise<UserInfo & { password?: string }> {
  await getAccount(sql, a.account)
  const email = checkEmail(a.email)
  const generated = a.password === undefined ? newPassword() : undefined
  const password = a.password ?? generated!
  if (password.length < 12 || password.length > 200) throw new AdminError('A password needs 12 to 200 characters.')
  const [taken] = await sql`SELECT 1 FROM users WHERE lower(email) = lower(${email})`
  if (taken) throw new AdminError(`A user with e-mail ${email} already exists.`)
  const hash = await hashPassword(password)
  const [r] = await sql`INSERT INTO users (account_id, email, name, password_hash, is_admin)
    VALUES (${a.account}::bigint, ${email}, ${a.name ?? email.split('@')[0]}, ${hash}, ${a.admin ?? false}) RETURNING id::text AS id`
  const user = await getUser(sql, r.id as string)
  return generated ? { ...user, password: generated } : user
}

export async function getUser(sql: postgres.Sql, id: string): Promise<UserInfo> {
  checkUserId(id)
  const [r] = await sql`SELECT u.id::text AS id, u.account_id::text AS account_id, u.email, u.name, u.is_admin, u.password_hash IS NOT NULL AS pw, u.created_at,
      coalesce((SELECT array_agg(g.org_id ORDER BY g.org_id) FROM user_org_access g WHERE g.user_id = u.id), '{}') AS orgs
    FROM users u WHERE u.id = ${id}::bigint`
  if (!r) throw new AdminError(`No user with id ${id}.`)
  return { id: r.id, accountId: r.account_id, email: r.email, name: r.name, isAdmin: r.is_admin, canSignInWithPassword: r.pw, orgs: r.orgs, createdAt: (r.created_at as Date).toISOString() }
}

export async function listUsers(sql: postgres.Sql, account: string): Promise<UserInfo[]> {
  await getAccount(sql, account)
  const ids = await sql`SELECT id::text AS id FROM users WHERE account_id = ${account}::bigint ORDER BY id`
  return Promise.all(ids.map((r) => getUser(sql, r.id as string)))
}

/** Grants a user an org of its own account. */
export async function grantOrg(sql: postgres.Sql, userId: string, orgId: string): Promise<UserInfo> {
  const user = await getUser(sql, userId)
  const id18 = orgId18(orgId)
  const [org] = id18 ? await sql`SELECT account_id::text AS account_id FROM orgs WHERE salesforce_id = ${id18}` : []
  if (!org || org.account_id !== user.accountId) throw new AdminError(`No org ${orgId.slice(0, 20)} in account ${user.accountId}.`)
  await sql`INSERT INTO user_org_access (user_id, org_id) VALUES (${userId}::bigint, ${id18!}) ON CONFLICT DO NOTHING`
  return getUser(sql, userId)
}

/** Takes an org from a user; `alreadyRevoked`: the user had no grant of it (nothing changed). */
export async function revokeOrg(sql: postgres.Sql, userId: string, orgId: string): Promise<UserInfo & { alreadyRevoked: boolean }> {
  await getUser(sql, userId)
  const id18 = orgId18(orgId)
  const deleted = id18 === undefined ? [] : await sql`DELETE FROM user_org_access WHERE user_id = ${userId}::bigint AND org_id = ${id18} RETURNING 1`
  return { ...(await getUser(sql, userId)), alreadyRevoked: deleted.length === 0 }
}

/**
 * Ends every token the user holds: access tokens issued until now are refused, refresh tokens revoked, and codes of
 * sign-ins not yet exchanged are deleted (exchanged later, they would have issued new tokens).
 */
export async function revokeUserTokens(sql: postgres.Sql, userId: string, now: Date): Promise<UserInfo> {
  await getUser(sql, userId)
  await sql.begin(async (tx) => {
    await tx`UPDATE users SET tokens_valid_after = ${now} WHERE id = ${userId}::bigint`
    await tx`UPDATE oauth_refresh_tokens SET revoked_at = coalesce(revoked_at, ${now}) WHERE user_id = ${userId}::bigint`
    await tx`DELETE FROM oauth_codes WHERE user_id = ${userId}::bigint AND used_at IS NULL`
  })
  return getUser(sql, userId)
}

/** Links an e-mail domain to an account (upstream sign-in creates its users there); `null` unlinks it. */
export async function linkEmailDomain(sql: postgres.Sql, account: string, domain: string): Promise<{ domain: string; accountId: string }> {
  await getAccount(sql, account)
  const d = domain.trim().toLowerCase()
  if (!DOMAIN.test(d)) throw new AdminError(`${JSON.stringify(domain.slice(0, 100))} is not a domain name.`)
  const [r] = await sql`INSERT INTO account_email_domains (domain, account_id) VALUES (${d}, ${account}::bigint)
    ON CONFLICT (domain) DO NOTHING RETURNING account_id::text AS account_id`
  if (!r) throw new AdminError(`The domain ${d} is already linked to an account.`)
  return { domain: d, accountId: account }
}

/** The user an upstream sign-in with this verified e-mail becomes (found, or created by its domain), or undefined. */
export async function userForVerifiedEmail(sql: postgres.Sql, email: string, name: string | undefined): Promise<string | undefined> {
  const [found] = await sql`SELECT id::text AS id FROM users WHERE lower(email) = lower(${email})`
  if (found) return found.id as string
  const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase()
  const [link] = await sql`SELECT account_id::text AS account_id FROM account_email_domains WHERE domain = ${domain}`
  if (!link) return undefined
  const [r] = await sql`INSERT INTO users (account_id, email, name) VALUES (${link.account_id}::bigint, ${email}, ${name ?? email.split('@')[0]})
    ON CONFLICT DO NOTHING RETURNING id::text AS id`
  if (r) return r.id as string
  const [again] = await sql`SELECT id::text AS id FROM users WHERE lower(email) = lower(${email})`
  return again?.id as string | undefined
}
