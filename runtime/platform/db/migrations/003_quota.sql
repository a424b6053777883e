-- Quota engine (docs/quota.md): the only code that writes quota_usage.
--
-- A process LEASES a block of units for one account, for BOTH windows at once, with one call of
-- orgscan_quota_lease; it then serves requests from that block without touching the database and gives
-- unused units back with orgscan_quota_return. Exactness across processes comes from here alone: the two
-- counter rows are locked (always day row first, then month row, by every writer: no deadlocks), the
-- grant never exceeds either window's remaining allowance, and it is added to both rows in the same
-- transaction. Limits are read from `accounts` in the same call, so a limit change applies to the next
-- lease.

-- Quota engine, in-doubt calls (docs/quota.md "Faults"): every lease and every return carries an id chosen
-- by the process (a uuid), so a call whose connection died mid-flight can be settled afterwards instead of
-- leaving its units counted:
--   * a return is retried with the same id: orgscan_quota_return(id, …) applies each id at most once;
--   * a lease whose answer was lost is cancelled by its id: orgscan_quota_lease_cancel(id, …) gives back
--     what that lease granted if it was applied (the process never used those units), or records a
--     tombstone so the lease, should it still arrive, grants nothing and changes nothing.
-- Rows are kept for an hour (database clock): far longer than a process retries (docs/quota.md), so an id
-- is never forgotten while a retry or a cancel for it can still come.

-- One row per lease that took the locked path (granted may be 0), or a tombstone written by a cancel that
-- arrived first. `returned` = units of this lease given back by a cancel.
CREATE TABLE quota_leases (
  id uuid PRIMARY KEY,
  account_id bigint NOT NULL,
  day_start timestamptz NOT NULL,
  month_start timestamptz NOT NULL,
  granted integer NOT NULL,
  returned integer NOT NULL DEFAULT 0,
  tombstone boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX quota_leases_created_at ON quota_leases (created_at);

-- One row per applied return (its id).
CREATE TABLE quota_returns (
  id uuid PRIMARY KEY,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX quota_returns_created_at ON quota_returns (created_at);

-- Occasional cleanup, called by the functions below before they lock any counter row.
CREATE FUNCTION orgscan_quota_forget(p_probability double precision) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  IF random() < p_probability THEN
    DELETE FROM quota_leases WHERE created_at < now() - interval '1 hour';
    DELETE FROM quota_returns WHERE created_at < now() - interval '1 hour';
  END IF;
END
$$;

-- granted = least(remaining, need + least(prefetch, floor((remaining - need) * fraction))) where
-- remaining = least(daily_limit - day_used, monthly_limit - month_used): the units for the requests
-- waiting now (`need`) are granted in full while they fit, extra units for the coming requests
-- (`prefetch`) only up to `fraction` of what would remain, so near the limit grants shrink to exactly what
-- is needed (`need` 0 with a prefetch is a refill ahead of demand). `p_return` unused units of the same
-- windows are given back first, in the same transaction (a process returning units and leasing again must
-- not see its own units as still taken).
-- No row (zero rows returned) when the account does not exist.
--
-- The lease. `p_lease`: the locked path records the lease under that id
-- (after locking the day and month rows, the order of every writer). If the id is already there — a cancel
-- came first — nothing is granted and nothing (not even `p_return`) is applied.
CREATE FUNCTION orgscan_quota_lease(
  p_lease uuid, p_account bigint, p_day timestamptz, p_month timestamptz,
  p_need integer, p_prefetch integer, p_fraction double precision, p_async boolean, p_return integer)
RETURNS TABLE (granted integer, day_used bigint, month_used bigint, daily_limit integer, monthly_limit integer)
LANGUAGE plpgsql AS $$
DECLARE
  v_dl integer;
  v_ml integer;
  v_du bigint;
  v_mu bigint;
  v_rem bigint;
  v_need bigint;
  v_g bigint;
  v_rows integer;
BEGIN
  SELECT a.daily_limit, a.monthly_limit INTO v_dl, v_ml FROM accounts a WHERE a.id = p_account;
  IF NOT FOUND THEN
    RETURN;
  END IF;

  -- Fast path without row locks and without a lease row: it changes nothing.
  IF p_return <= 0 THEN
    SELECT coalesce(max(q.used) FILTER (WHERE q.window_kind = 'day'), 0),
           coalesce(max(q.used) FILTER (WHERE q.window_kind = 'month'), 0)
      INTO v_du, v_mu
      FROM quota_usage q
     WHERE q.account_id = p_account
       AND ((q.window_kind = 'day' AND q.window_start = p_day) OR (q.window_kind = 'month' AND q.window_start = p_month));
    v_rem := least(v_dl::bigint - v_du, v_ml::bigint - v_mu);
    v_need := least(greatest(p_need, 0)::bigint, greatest(v_rem, 0));
    IF v_rem <= 0 OR v_need + least(greatest(p_prefetch, 0)::bigint, floor((v_rem - v_need) * greatest(p_fraction, 0))::bigint) <= 0 THEN
      RETURN QUERY SELECT 0, v_du, v_mu, v_dl, v_ml;
      RETURN;
    END IF;
  END IF;

  PERFORM orgscan_quota_forget(0.01);

  IF p_async THEN
    PERFORM set_config('synchronous_commit', 'off', true);
  END IF;

  -- Lock the day row, then the month row (creating them at the start of a window).
  SELECT q.used INTO v_du FROM quota_usage q
   WHERE q.account_id = p_account AND q.window_kind = 'day' AND q.window_start = p_day FOR NO KEY UPDATE;
  IF NOT FOUND THEN
    INSERT INTO quota_usage (account_id, window_kind, window_start, used) VALUES (p_account, 'day', p_day, 0)
      ON CONFLICT DO NOTHING;
    SELECT q.used INTO v_du FROM quota_usage q
     WHERE q.account_id = p_account AND q.window_kind = 'day' AND q.window_start = p_day FOR NO KEY UPDATE;
  END IF;
  SELECT q.used INTO v_mu FROM quota_usage q
   WHERE q.account_id = p_account AND q.window_kind = 'month' AND q.window_start = p_month FOR NO KEY UPDATE;
  IF NOT FOUND THEN
    INSERT INTO quota_usage (account_id, window_kind, window_start, used) VALUES (p_account, 'month', p_month, 0)
      ON CONFLICT DO NOTHING;
    SELECT q.used INTO v_mu FROM quota_usage q
     WHERE q.account_id = p_account AND q.window_kind = 'month' AND q.window_start = p_month FOR NO KEY UPDATE;
  END IF;

  IF p_return > 0 THEN
    v_du := greatest(v_du - p_return, 0);
    v_mu := greatest(v_mu - p_return, 0);
  END IF;
  v_rem := least(v_dl::bigint - v_du, v_ml::bigint - v_mu);
  IF v_rem <= 0 THEN
    v_g := 0;
  ELSE
    v_need := least(greatest(p_need, 0)::bigint, v_rem);
    v_g := v_need + least(greatest(p_prefetch, 0)::bigint, floor((v_rem - v_need) * greatest(p_fraction, 0))::bigint);
  END IF;

  INSERT INTO quota_leases (id, account_id, day_start, month_start, granted)
    VALUES (p_lease, p_account, p_day, p_month, v_g::integer)
    ON CONFLICT (id) DO NOTHING;
  GET DIAGNOSTICS v_rows = ROW_COUNT;
  IF v_rows = 0 THEN
    -- Cancelled before it arrived (or the same id twice): no effect at all.
    SELECT q.used INTO v_du FROM quota_usage q WHERE q.account_id = p_account AND q.window_kind = 'day' AND q.window_start = p_day;
    SELECT q.used INTO v_mu FROM quota_usage q WHERE q.account_id = p_account AND q.window_kind = 'month' AND q.window_start = p_month;
    RETURN QUERY SELECT 0, v_du, v_mu, v_dl, v_ml;
    RETURN;
  END IF;

  IF v_g > 0 OR p_return > 0 THEN
    v_du := v_du + v_g;
    v_mu := v_mu + v_g;
    UPDATE quota_usage q SET used = v_du
     WHERE q.account_id = p_account AND q.window_kind = 'day' AND q.window_start = p_day;
    UPDATE quota_usage q SET used = v_mu
     WHERE q.account_id = p_account AND q.window_kind = 'month' AND q.window_start = p_month;
  END IF;
  RETURN QUERY SELECT v_g::integer, v_du, v_mu, v_dl, v_ml;
END
$$;

-- Settles a lease whose answer was lost. Returns `applied`: true when the lease had been applied — its
-- granted units (not yet given back) are returned now, and its `p_return` had been applied with it; false
-- when it had not — a tombstone makes sure it never will be, so the caller may send its `p_return` again
-- as an ordinary return. Idempotent: calling it again gives the same `applied` and returns nothing more.
-- Holds no counter row while waiting for the lease row (no lock-order cycle with orgscan_quota_lease).
CREATE FUNCTION orgscan_quota_lease_cancel(p_lease uuid, p_account bigint, p_day timestamptz, p_month timestamptz)
RETURNS TABLE (applied boolean, returned integer)
LANGUAGE plpgsql AS $$
DECLARE
  v_rows integer;
  v_l quota_leases%ROWTYPE;
  v_units integer;
BEGIN
  INSERT INTO quota_leases (id, account_id, day_start, month_start, granted, tombstone)
    VALUES (p_lease, p_account, p_day, p_month, 0, true)
    ON CONFLICT (id) DO NOTHING;
  GET DIAGNOSTICS v_rows = ROW_COUNT;
  IF v_rows = 1 THEN
    RETURN QUERY SELECT false, 0;
    RETURN;
  END IF;
  SELECT * INTO v_l FROM quota_leases l WHERE l.id = p_lease FOR UPDATE;
  IF v_l.tombstone THEN
    RETURN QUERY SELECT false, 0;
    RETURN;
  END IF;
  v_units := v_l.granted - v_l.returned;
  IF v_units > 0 THEN
    UPDATE quota_leases l SET returned = l.granted WHERE l.id = p_lease;
    UPDATE quota_usage q SET used = greatest(q.used - v_units, 0)
     WHERE q.account_id = v_l.account_id AND q.window_kind = 'day' AND q.window_start = v_l.day_start;
    UPDATE quota_usage q SET used = greatest(q.used - v_units, 0)
     WHERE q.account_id = v_l.account_id AND q.window_kind = 'month' AND q.window_start = v_l.month_start;
  END IF;
  RETURN QUERY SELECT true, greatest(v_units, 0);
END
$$;

-- Gives `p_units` unused leased units back, applied at most once per `p_return` id: a return whose answer was
-- lost is sent again with the same id and the same units; if the first one had committed, this is a no-op.
-- Asynchronous commit (a return lost in a database crash loses its id row with it: over-count).
CREATE FUNCTION orgscan_quota_return(p_return uuid, p_account bigint, p_day timestamptz, p_month timestamptz, p_units integer)
RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  v_rows integer;
BEGIN
  IF p_units <= 0 THEN
    RETURN false;
  END IF;
  PERFORM set_config('synchronous_commit', 'off', true);
  PERFORM orgscan_quota_forget(0.02);
  INSERT INTO quota_returns (id) VALUES (p_return) ON CONFLICT (id) DO NOTHING;
  GET DIAGNOSTICS v_rows = ROW_COUNT;
  IF v_rows = 0 THEN
    RETURN false;
  END IF;
  UPDATE quota_usage q SET used = greatest(q.used - p_units, 0)
   WHERE q.account_id = p_account AND q.window_kind = 'day' AND q.window_start = p_day;
  UPDATE quota_usage q SET used = greatest(q.used - p_units, 0)
   WHERE q.account_id = p_account AND q.window_kind = 'month' AND q.window_start = p_month;
  RETURN true;
END
$$;

-- Limit changes and account deletions are announced on channel `orgscan_quota` (payload: account id), so
-- every process drops its leases for that account at once instead of at the end of the lease lifetime.
CREATE FUNCTION orgscan_quota_notify() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM pg_notify('orgscan_quota', OLD.id::text);
  ELSE
    PERFORM pg_notify('orgscan_quota', NEW.id::text);
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER accounts_quota_limits_changed
  AFTER UPDATE OF daily_limit, monthly_limit ON accounts
  FOR EACH ROW
  WHEN (OLD.daily_limit IS DISTINCT FROM NEW.daily_limit OR OLD.monthly_limit IS DISTINCT FROM NEW.monthly_limit)
  EXECUTE FUNCTION orgscan_quota_notify();

CREATE TRIGGER accounts_quota_deleted
  AFTER DELETE ON accounts
  FOR EACH ROW
  EXECUTE FUNCTION orgscan_quota_notify();
