-- OAuth 2.0 authorization server (runtime/platform/oauth/). Every bearer value (client secrets, sign-in requests, browser
-- bindings, authorization codes, refresh tokens) is stored only as its SHA-256; access tokens are JWTs signed with
-- the keys of oauth_signing_keys and are not stored (a revoked one is listed by its jti until it expires).

-- Users sign in with a password (scrypt) or through the upstream OpenID Connect provider; an administrator can end
-- every token a user holds (tokens issued before tokens_valid_after are refused).
ALTER TABLE users ADD COLUMN tokens_valid_after timestamptz;
CREATE UNIQUE INDEX users_email_lower_idx ON users (lower(email));

-- E-mail domains whose verified users of the upstream provider join the account on first sign-in.
CREATE TABLE account_email_domains (
  domain text PRIMARY KEY CHECK (domain = lower(domain)),
  account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE
);

-- Clients: registered automatically (account_id NULL, public) or issued by an administrator for one account
-- (confidential, with a secret; the only ones accepted under Enhanced MCP Security).
CREATE TABLE oauth_clients (
  client_id text PRIMARY KEY,
  account_id bigint REFERENCES accounts(id) ON DELETE CASCADE,
  name text NOT NULL,
  redirect_uris text[] NOT NULL,
  scopes text[] NOT NULL,
  secret_hash bytea,
  token_exchange boolean NOT NULL DEFAULT false,
  registered_from text,
  created_at timestamptz NOT NULL,
  revoked_at timestamptz
);
CREATE INDEX oauth_clients_account_idx ON oauth_clients (account_id) WHERE account_id IS NOT NULL;
CREATE INDEX oauth_clients_registered_idx ON oauth_clients (registered_from, created_at) WHERE account_id IS NULL;

-- A sign-in the service started at /oauth/authorize, bound to the browser that started it (cookie hash).
CREATE TABLE oauth_requests (
  id_hash bytea PRIMARY KEY,
  browser_hash bytea NOT NULL,
  client_id text NOT NULL REFERENCES oauth_clients(client_id) ON DELETE CASCADE,
  redirect_uri text NOT NULL,
  state text,
  scopes text[] NOT NULL,
  resource text NOT NULL,
  code_challenge text NOT NULL,
  upstream_state_hash bytea UNIQUE,
  upstream_nonce text,
  upstream_verifier text,
  user_id bigint REFERENCES users(id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX oauth_requests_expires_idx ON oauth_requests (expires_at);

-- Consent a user gave a dynamically registered client, for these scopes.
CREATE TABLE oauth_consents (
  user_id bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  client_id text NOT NULL REFERENCES oauth_clients(client_id) ON DELETE CASCADE,
  scopes text[] NOT NULL,
  granted_at timestamptz NOT NULL,
  PRIMARY KEY (user_id, client_id)
);

-- Authorization codes: single use, short-lived.
CREATE TABLE oauth_codes (
  code_hash bytea PRIMARY KEY,
  client_id text NOT NULL REFERENCES oauth_clients(client_id) ON DELETE CASCADE,
  user_id bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  redirect_uri text NOT NULL,
  scopes text[] NOT NULL,
  resource text NOT NULL,
  code_challenge text NOT NULL,
  family uuid NOT NULL,
  used_at timestamptz,
  expires_at timestamptz NOT NULL
);
CREATE INDEX oauth_codes_expires_idx ON oauth_codes (expires_at);

-- Refresh tokens, rotated on every use; a family is everything issued from one sign-in. Presenting a rotated token
-- again revokes the family.
CREATE TABLE oauth_refresh_tokens (
  token_hash bytea PRIMARY KEY,
  family uuid NOT NULL,
  client_id text NOT NULL REFERENCES oauth_clients(client_id) ON DELETE CASCADE,
  user_id bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  scopes text[] NOT NULL,
  resource text NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  rotated_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX oauth_refresh_family_idx ON oauth_refresh_tokens (family);
CREATE INDEX oauth_refresh_user_idx ON oauth_refresh_tokens (user_id);

-- Families revoked (refresh reuse, code reuse, RFC 7009 revocation): their access tokens are refused too.
CREATE TABLE oauth_revoked_families (
  family uuid PRIMARY KEY,
  revoked_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);

-- Access tokens revoked one by one (RFC 7009), kept until they would have expired.
CREATE TABLE oauth_revoked_tokens (
  jti text PRIMARY KEY,
  expires_at timestamptz NOT NULL
);

-- Signing keys of access tokens (ES256). The private key is encrypted with a key derived from the pepper.
CREATE TABLE oauth_signing_keys (
  kid text PRIMARY KEY,
  public_jwk jsonb NOT NULL,
  private_jwk_enc bytea NOT NULL,
  created_at timestamptz NOT NULL,
  retired_at timestamptz
);
