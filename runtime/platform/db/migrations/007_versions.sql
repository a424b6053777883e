-- The version lifecycle (docs/contract.md §3, §9; docs/versioning.md): one table per surface of released majors,
-- read by every process at start and kept fresh by the `orgscan_versions` notification below, so every process
-- agrees. REST and MCP share the policy but keep independent version numbers.
--   current    → deprecated (a sunset date at least 3 months away; `orgscan versions deprecate` or `add`)
--   deprecated → removed    (on its sunset date at 00:00 UTC, or at once with `orgscan versions sunset`)
CREATE TABLE api_versions (
  surface text NOT NULL CHECK (surface IN ('rest', 'mcp')),
  name text NOT NULL CHECK (name ~ '^v[1-9][0-9]{0,3}$'),
  status text NOT NULL CHECK (status IN ('current', 'deprecated', 'removed')),
  sunset_date date,
  released_at timestamptz NOT NULL DEFAULT now(),
  deprecated_at timestamptz,
  removed_at timestamptz,
  PRIMARY KEY (surface, name),
  CHECK ((status = 'current') = (sunset_date IS NULL))
);
INSERT INTO api_versions (surface, name, status) VALUES ('rest', 'v1', 'current'), ('mcp', 'v1', 'current');

-- Every change is announced when its transaction commits; listening processes re-read the (tiny) table.
CREATE FUNCTION orgscan_versions_notify() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('orgscan_versions', 'changed');
  RETURN NULL;
END
$$;
CREATE TRIGGER api_versions_notify AFTER INSERT OR UPDATE OR DELETE ON api_versions
  FOR EACH STATEMENT EXECUTE FUNCTION orgscan_versions_notify();

-- Who called each version in the last 90 days (runtime/platform/versions/usage.ts): one row per surface, version and caller
-- (`key:<key_id>` for an API key, `user:<user_id>` for a user signed in with OAuth), written in batches by every
-- serving process and pruned past 90 days. `user_id` of a key is the user it belongs to, if any.
CREATE TABLE version_callers (
  surface text NOT NULL CHECK (surface IN ('rest', 'mcp')),
  version text NOT NULL,
  caller text NOT NULL,
  account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  key_id text REFERENCES api_keys(key_id) ON DELETE CASCADE,
  user_id bigint REFERENCES users(id) ON DELETE CASCADE,
  last_called_at timestamptz NOT NULL,
  PRIMARY KEY (surface, version, caller),
  CHECK (key_id IS NOT NULL OR user_id IS NOT NULL)
);
CREATE INDEX version_callers_last_called_idx ON version_callers (last_called_at);

-- Deprecation notices (`orgscan versions notify`): one row per notice (surface, version, sunset date) and recipient
-- address, claimed ('sending') before the e-mail is handed to the SMTP server and marked 'sent' after it accepted it,
-- so a re-run never sends a notice twice. A row left 'sending' (a run interrupted mid-send) is not resent unless the
-- operator asks (`--retry-unconfirmed`).
CREATE TABLE version_notices (
  surface text NOT NULL CHECK (surface IN ('rest', 'mcp')),
  version text NOT NULL,
  sunset_date date NOT NULL,
  recipient text NOT NULL CHECK (recipient = lower(recipient)),
  state text NOT NULL CHECK (state IN ('sending', 'sent')),
  claimed_at timestamptz NOT NULL,
  sent_at timestamptz,
  message_id text,
  PRIMARY KEY (surface, version, sunset_date, recipient)
);

-- The address deprecation notices about an account's own API keys go to (keys of a user go to that user).
ALTER TABLE accounts ADD COLUMN contact_email text CHECK (contact_email IS NULL OR length(contact_email) <= 320);
