/**
 * Administrative operations behind the `orgscan accounts|keys` commands, the demo seed and the tests.
 * API key secrets are returned once, at creation, and stored only as a keyed hash.
 */
import type postgres from 'postgres'
import { hashSecret, KEY_ID, newKeyId, newSecret } from './auth/api-keys.ts'

export interface Account {
  id: string
  name: string
  dailyLimit: number
  monthlyLimit: number
  enhancedMcpSecurity: boolean
  /** Where deprecation notices about the account's own API keys go (docs/versioning.md); null: none set. */
  email: string | null
  createdAt: string
}

export interface ApiKeyInfo {
  keyId: string
  accountId: string
  userId: string | null
  name: string | null
  createdAt: string
  lastUsedAt: string | null
  revokedAt: string | null
}

export class AdminError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'AdminError'
  }
}

/** A pool, or a transaction (the demo seed of a first start creates its accounts, user and key in one). */
type Sql = postgres.Sql | postgres.TransactionSql

const iso = (d: Date | null) => (d ? d.toISOString() : null)

function accountOf(r: { id: string; name: string; daily_limit: number; monthly_limit: number; enhanced_mcp_security: boolean; contact_email: string | null; created_at: Date }): Account {
  return { id: r.id, name: r.name, dailyLimit: r.daily_limit, monthlyLimit: r.monthly_limit, enhancedMcpSecurity: r.enhanced_mcp_security, email: r.contact_email, createdAt: r.created_at.toISOString() }
}

export async function createAccount(sql: Sql, a: { name: string; dailyLimit: number; monthlyLimit: number; email?: string }): Promise<Account> {
  if (!a.name.trim()) throw new AdminError('Account name must not be empty.')
  const [r] = await sql`INSERT INTO accounts (name, daily_limit, monthly_limit, contact_email) VALUES (${a.name.trim()}, ${a.dailyLimit}, ${a.monthlyLimit}, ${a.email ?? null})
    RETURNING id::text AS id, name, daily_limit, monthly_limit, enhanced_mcp_security, contact_email, created_at`
  return accountOf(r as never)
}

export async function listAccounts(sql: postgres.Sql): Promise<Array<Account & { orgs: string[] }>> {
  const rows = await sql`SELECT a.id::text AS id, a.name, a.daily_limit, a.monthly_limit, a.enhanced_mcp_security, a.contact_email, a.created_at,
      coalesce((SELECT array_agg(o.salesforce_id ORDER BY o.name) FROM orgs o WHERE o.account_id = a.id), '{}') AS orgs
    FROM accounts a ORDER BY a.id`
  return rows.map((r) => ({ ...accountOf(r as never), orgs: r.orgs as string[] }))
}

export async function getAccount(sql: Sql, id: string): Promise<Account> {
  if (!/^[1-9][0-9]{0,17}$/.test(id)) throw new AdminError(`Account id must be a positive integer, got "${id}".`)
  const [r] = await sql`SELECT id::text AS id, name, daily_limit, monthly_limit, enhanced_mcp_security, contact_email, created_at FROM accounts WHERE id = ${id}::bigint`
  if (!r) throw new AdminError(`No account with id ${id}.`)
  return accountOf(r as never)
}

/** Changes the given settings; `email: ''` removes the contact e-mail. */
export async function updateAccount(sql: postgres.Sql, id: string, u: { name?: string; dailyLimit?: number; monthlyLimit?: number; enhancedMcpSecurity?: boolean; email?: string }): Promise<Account> {
  await getAccount(sql, id)
  const [r] = await sql`UPDATE accounts SET
      name = coalesce(${u.name ?? null}, name),
      daily_limit = coalesce(${u.dailyLimit ?? null}::integer, daily_limit),
      monthly_limit = coalesce(${u.monthlyLimit ?? null}::integer, monthly_limit),
      enhanced_mcp_security = coalesce(${u.enhancedMcpSecurity ?? null}::boolean, enhanced_mcp_security),
      contact_email = CASE WHEN ${u.email === undefined}::boolean THEN contact_email ELSE nullif(${u.email ?? ''}, '') END
    WHERE id = ${id}::bigint RETURNING id::text AS id, name, daily_limit, monthly_limit, enhanced_mcp_security, contact_email, created_at`
  return accountOf(r as never)
}

export async function createUser(sql: Sql, accountId: string, u: { email: string; name: string }): Promise<{ id: string }> {
  await getAccount(sql, accountId)
  const [r] = await sql`INSERT INTO users (account_id, email, name) VALUES (${accountId}::bigint, ${u.email}, ${u.name}) RETURNING id::text AS id`
  return { id: r.id as string }
}

export async function grantOrgAccess(sql: Sql, userId: string, orgId: string): Promise<void> {
  await sql`INSERT INTO user_org_access (user_id, org_id) VALUES (${userId}::bigint, ${orgId}) ON CONFLICT DO NOTHING`
}

export interface CreatedKey {
  keyId: string
  secret: string
  accountId: string
  userId: string | null
}

/** Creates an API key; the secret is returned here once and never stored. */
export async function createKey(sql: Sql, pepper: string, accountId: string, opts: { userId?: string | null; name?: string | null; keyId?: string; secret?: string } = {}): Promise<CreatedKey> {
  await getAccount(sql, accountId)
  const keyId = opts.keyId ?? newKeyId()
  const secret = opts.secret ?? newSecret()
  await sql`INSERT INTO api_keys (key_id, account_id, user_id, name, secret_hash)
    VALUES (${keyId}, ${accountId}::bigint, ${opts.userId ?? null}::bigint, ${opts.name ?? null}, ${hashSecret(pepper, secret)})`
  return { keyId, secret, accountId, userId: opts.userId ?? null }
}

export async function listKeys(sql: postgres.Sql, accountId: string): Promise<ApiKeyInfo[]> {
  await getAccount(sql, accountId)
  const rows = await sql`SELECT key_id, account_id::text AS account_id, user_id::text AS user_id, name, created_at, last_used_at, revoked_at
    FROM api_keys WHERE account_id = ${accountId}::bigint ORDER BY created_at, key_id`
  return rows.map((r) => ({
    keyId: r.key_id, accountId: r.account_id, userId: r.user_id, name: r.name,
    createdAt: r.created_at.toISOString(), lastUsedAt: iso(r.last_used_at), revokedAt: iso(r.revoked_at),
  }))
}

/**
 * Revokes an API key. A key revoked before is left as it was (`alreadyRevoked`, with its first revocation's time), so
 * that revoking twice is a no-op the caller can tell from a revocation.
 */
export async function revokeKey(sql: postgres.Sql, keyId: string): Promise<ApiKeyInfo & { alreadyRevoked: boolean }> {
  if (!KEY_ID.test(keyId)) throw new AdminError(`"${keyId}" is not an API key id (osk_…).`)
  const [done] = await sql`UPDATE api_keys SET revoked_at = now() WHERE key_id = ${keyId} AND revoked_at IS NULL
    RETURNING key_id, account_id::text AS account_id, user_id::text AS user_id, name, created_at, last_used_at, revoked_at`
  // Not revoked now: either no such key, or one revoked before (a revocation in progress elsewhere is waited for).
  const r = done ?? (await sql`SELECT key_id, account_id::text AS account_id, user_id::text AS user_id, name, created_at, last_used_at, revoked_at
    FROM api_keys WHERE key_id = ${keyId}`)[0]
  if (!r) throw new AdminError(`No API key ${keyId}.`)
  return {
    keyId: r.key_id, accountId: r.account_id, userId: r.user_id, name: r.name, createdAt: r.created_at.toISOString(), lastUsedAt: iso(r.last_used_at), revokedAt: iso(r.revoked_at),
    alreadyRevoked: done === undefined,
  }
}
