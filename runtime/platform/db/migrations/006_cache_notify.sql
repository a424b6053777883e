-- Hot reads (runtime/core/cache/org-state.ts): every process caches each org's account and latest completed scan, and
-- users' grants. These triggers announce every change to them on the `orgscan_cache` channel, delivered when the
-- changing transaction commits: `org:<salesforce_id>` when an org is added, changed (an import flipping its latest
-- scan) or removed, `grant:<user_id>` when a grant is added or removed, `key:<key_id>` when an API key is revoked,
-- moved or removed (not when only its last use is recorded). Listening processes drop the entry.
CREATE FUNCTION orgscan_cache_notify() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  r record;
BEGIN
  IF TG_OP = 'DELETE' THEN r := OLD; ELSE r := NEW; END IF;
  IF TG_TABLE_NAME = 'orgs' THEN
    PERFORM pg_notify('orgscan_cache', 'org:' || r.salesforce_id);
    IF TG_OP = 'UPDATE' THEN
      IF OLD.salesforce_id <> NEW.salesforce_id THEN
        PERFORM pg_notify('orgscan_cache', 'org:' || OLD.salesforce_id);
      END IF;
    END IF;
  ELSIF TG_TABLE_NAME = 'api_keys' THEN
    PERFORM pg_notify('orgscan_cache', 'key:' || r.key_id);
  ELSE
    PERFORM pg_notify('orgscan_cache', 'grant:' || r.user_id::text);
    IF TG_OP = 'UPDATE' THEN
      IF OLD.user_id <> NEW.user_id THEN
        PERFORM pg_notify('orgscan_cache', 'grant:' || OLD.user_id::text);
      END IF;
    END IF;
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER orgs_cache_notify AFTER INSERT OR UPDATE OR DELETE ON orgs
  FOR EACH ROW EXECUTE FUNCTION orgscan_cache_notify();
CREATE TRIGGER user_org_access_cache_notify AFTER INSERT OR UPDATE OR DELETE ON user_org_access
  FOR EACH ROW EXECUTE FUNCTION orgscan_cache_notify();
CREATE TRIGGER api_keys_cache_notify AFTER UPDATE OF revoked_at, account_id, user_id, secret_hash OR DELETE ON api_keys
  FOR EACH ROW EXECUTE FUNCTION orgscan_cache_notify();
