-- MCP sessions of 2025-era clients (runtime/surfaces/mcp/sessions.ts). A session lives here, not in a process, so any
-- process serves it, a DELETE on one ends it on all, and a restart ends nobody's session. The session id is a
-- bearer value: only its SHA-256 is stored. A session belongs to the account (and user) that opened it.
CREATE TABLE mcp_sessions (
  id_hash bytea PRIMARY KEY,
  account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  user_id bigint REFERENCES users(id) ON DELETE CASCADE,
  credential_id text NOT NULL,
  protocol_version text NOT NULL,
  client_name text,
  client_version text,
  created_at timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL
);
CREATE INDEX mcp_sessions_account_idx ON mcp_sessions (account_id, last_seen_at);
CREATE INDEX mcp_sessions_last_seen_idx ON mcp_sessions (last_seen_at);
