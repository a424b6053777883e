-- Tenancy, credentials, orgs and scans.
CREATE TABLE accounts (
  id bigserial PRIMARY KEY,
  name text NOT NULL,
  daily_limit integer NOT NULL CHECK (daily_limit >= 0),
  monthly_limit integer NOT NULL CHECK (monthly_limit >= 0),
  enhanced_mcp_security boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
  id bigserial PRIMARY KEY,
  account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  email text NOT NULL UNIQUE,
  name text NOT NULL,
  password_hash text,
  is_admin boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
  key_id text PRIMARY KEY,
  account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  user_id bigint REFERENCES users(id) ON DELETE CASCADE,
  name text,
  secret_hash bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX api_keys_account_idx ON api_keys (account_id);

CREATE TABLE orgs (
  salesforce_id text PRIMARY KEY CHECK (length(salesforce_id) = 18),
  account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  name text NOT NULL,
  edition text NOT NULL,
  instance_url text NOT NULL,
  is_sandbox boolean NOT NULL DEFAULT false,
  organization_type text NOT NULL,
  instance_name text NOT NULL,
  namespace_prefix text,
  country text,
  locale text NOT NULL,
  time_zone text NOT NULL,
  created_date timestamptz NOT NULL,
  latest_scan_id bigint,
  last_scan_date timestamptz,
  last_scan_status text,
  scan_count bigint NOT NULL DEFAULT 0,
  score bigint,
  -- Counts contributed by resources' `orgSummary` declarations at import, e.g. {"issueCounts": {...}}.
  summary jsonb,
  resource_counts jsonb
);
CREATE INDEX orgs_account_name_idx ON orgs (account_id, name, salesforce_id);

CREATE TABLE user_org_access (
  user_id bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  org_id text NOT NULL REFERENCES orgs(salesforce_id) ON DELETE CASCADE,
  PRIMARY KEY (user_id, org_id)
);

CREATE TABLE scans (
  id bigserial PRIMARY KEY,
  org_id text NOT NULL REFERENCES orgs(salesforce_id) ON DELETE CASCADE,
  status text NOT NULL CHECK (status IN ('completed', 'failed', 'running', 'queued')),
  started_at timestamptz NOT NULL,
  completed_at timestamptz,
  score integer
);
CREATE INDEX scans_org_idx ON scans (org_id, id);
ALTER TABLE orgs ADD CONSTRAINT orgs_latest_scan_fk FOREIGN KEY (latest_scan_id) REFERENCES scans(id) DEFERRABLE INITIALLY DEFERRED;

-- Quota counters: one row per account and window.
CREATE TABLE quota_usage (
  account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  window_kind text NOT NULL CHECK (window_kind IN ('day', 'month')),
  window_start timestamptz NOT NULL,
  used bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (account_id, window_kind, window_start)
);

-- Server-side settings (e.g. the API key pepper when ORGSCAN_PEPPER is not configured).
CREATE TABLE server_settings (
  name text PRIMARY KEY,
  value text NOT NULL
);
