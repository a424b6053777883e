/**
 * The authenticated caller, whatever the credential (API key now, OAuth token later). Every later stage
 * (quota, org access, scopes) reads only this.
 */
export interface Principal {
  /** Account whose quota is charged and whose orgs are visible (decimal string of a bigint). */
  accountId: string
  /** Set for a user-scoped principal: only orgs granted in user_org_access are visible. */
  userId: string | null
  /** How the caller authenticated. */
  method: 'api_key' | 'oauth'
  /** API key id or OAuth client id, for logs. Never a secret. */
  credentialId: string
  /**
   * Verified service agent (docs/contract.md §5 item 6): usage is logged but not counted. Only ever set from a
   * verified token claim, never from a request header.
   */
  quotaExempt: boolean
  /** OAuth scopes (the token's, limited to its client's current ones); undefined for API keys. */
  scopes?: readonly string[]
  /** The account's Enhanced MCP Security setting when the credential was checked. */
  enhancedMcpSecurity?: boolean
  /** OAuth: the client, and the account it was issued for (null: registered automatically). */
  client?: { id: string; issuedFor: string | null }
}
