-- Quota engine (issue 3, docs/quota.md): the only code that writes quota_usage.
--
-- A process LEASES a block of units for one account, for BOTH windows at once, with one call of
-- orgscan_quota_lease; it then serves requests from that block without touching the database and gives
-- unused units back with orgscan_quota_return. Exactness across processes comes from here alone: the two
-- counter rows are locked (always day row first, then month row, by every writer: no deadlocks), the
-- grant never exceeds either window's remaining allowance, and it is added to both rows in the same
-- transaction. Limits are read from `accounts` in the same call, so a limit change applies to the next
-- lease.

-- granted = least(remaining, need + least(prefetch, floor((remaining - need) * fraction))) where
-- remaining = least(daily_limit - day_used, monthly_limit - month_used): the units for the requests
-- waiting now (`need`) are granted in full while they fit, extra units for the coming requests
-- (`prefetch`) only up to `fraction` of what would remain, so near the limit grants shrink to exactly what
-- is needed (`need` 0 with a prefetch is a refill ahead of demand). `p_return` unused units of the same
-- windows are given back first, in the same transaction (a process returning units and leasing again must
-- not see its own units as still taken).
-- No row (zero rows returned) when the account does not exist.
CREATE FUNCTION orgscan_quota_lease(
  p_account bigint, p_day timestamptz, p_month timestamptz,
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
BEGIN
  SELECT a.daily_limit, a.monthly_limit INTO v_dl, v_ml FROM accounts a WHERE a.id = p_account;
  IF NOT FOUND THEN
    RETURN;
  END IF;

  -- Fast path without row locks (so no WAL and no commit flush): nothing would be granted — a window is
  -- exhausted, or prefetch alone would be trimmed to 0. A concurrent change makes this answer as stale as
  -- arriving a moment earlier would; it never grants anything, so it cannot over-admit.
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

  IF p_async THEN
    -- Asynchronous commit for this transaction only (opt-in, see docs/quota.md for what a server crash can lose).
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

  IF v_g > 0 OR p_return > 0 THEN
    v_du := v_du + v_g;
    v_mu := v_mu + v_g;
    -- Both rows are locked by this transaction: the values computed above are current.
    UPDATE quota_usage q SET used = v_du
     WHERE q.account_id = p_account AND q.window_kind = 'day' AND q.window_start = p_day;
    UPDATE quota_usage q SET used = v_mu
     WHERE q.account_id = p_account AND q.window_kind = 'month' AND q.window_start = p_month;
  END IF;
  RETURN QUERY SELECT v_g::integer, v_du, v_mu, v_dl, v_ml;
END
$$;

-- Gives `p_units` unused leased units back to the windows they were leased for. Asynchronous commit: a
-- return lost in a database crash only leaves units counted that were never used (over-count, never
-- over-admission). Same lock order as orgscan_quota_lease.
CREATE FUNCTION orgscan_quota_return(p_account bigint, p_day timestamptz, p_month timestamptz, p_units integer)
RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  IF p_units <= 0 THEN
    RETURN;
  END IF;
  PERFORM set_config('synchronous_commit', 'off', true);
  UPDATE quota_usage q SET used = greatest(q.used - p_units, 0)
   WHERE q.account_id = p_account AND q.window_kind = 'day' AND q.window_start = p_day;
  UPDATE quota_usage q SET used = greatest(q.used - p_units, 0)
   WHERE q.account_id = p_account AND q.window_kind = 'month' AND q.window_start = p_month;
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
