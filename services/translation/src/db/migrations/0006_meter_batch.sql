-- Group commit for metering: one statement admits (rate-limit hit + reservation) or settles a whole batch of
-- concurrent requests, in array order, with the same per-request functions as the single path (meter_admit,
-- meter_reserve, meter_settle), so each request's outcome is exactly what it would be if the requests had come one
-- after the other in that order. Every row the batch touches is locked first, in ONE global order — rate-limit rows,
-- then quota rows, then budget rows, each sorted by key — so concurrent batches (other replicas) and single calls
-- (which lock at most one row per table, in the same table order) never deadlock.

-- Admission of a batch. p_bucket[i] NULL: no rate limit for that request (meter_reserve only; hits is 0).
CREATE FUNCTION meter_admit_batch(
  p_bucket text[], p_window_start bigint[], p_window_ms integer[], p_limit integer[],
  p_org text[], p_period date[], p_tokens bigint[], p_quota bigint[],
  p_scope text[], p_day date[], p_cost bigint[], p_cap bigint[]
) RETURNS TABLE (hits integer, result text) LANGUAGE plpgsql AS $$
DECLARE
  i integer;
BEGIN
  -- Lock phase: create missing rows and lock existing ones in key order (a no-op DO UPDATE locks the row).
  INSERT INTO rate_limit_windows AS w (bucket, window_start, window_ms, count)
    SELECT DISTINCT ON (b, ws) b, ws, wm, 0 FROM unnest(p_bucket, p_window_start, p_window_ms) AS u(b, ws, wm)
      WHERE b IS NOT NULL ORDER BY b, ws
    ON CONFLICT (bucket, window_start) DO UPDATE SET count = w.count;
  INSERT INTO quota_usage AS q (org_id, period_start)
    SELECT DISTINCT o, p FROM unnest(p_org, p_period) AS u(o, p) WHERE o IS NOT NULL ORDER BY o, p
    ON CONFLICT (org_id, period_start) DO UPDATE SET used_tokens = q.used_tokens;
  INSERT INTO budget_usage AS b (scope, day)
    SELECT DISTINCT s, d FROM unnest(p_scope, p_day) AS u(s, d) ORDER BY s, d
    ON CONFLICT (scope, day) DO UPDATE SET spent_micros = b.spent_micros;
  -- Each request in order, exactly as the single path.
  FOR i IN 1 .. cardinality(p_scope) LOOP
    IF p_bucket[i] IS NULL THEN
      hits := 0;
      result := meter_reserve(p_org[i], p_period[i], p_tokens[i], p_quota[i], p_scope[i], p_day[i], p_cost[i], p_cap[i]);
    ELSE
      SELECT a.hits, a.result INTO hits, result FROM meter_admit(
        p_bucket[i], p_window_start[i], p_window_ms[i], p_limit[i],
        p_org[i], p_period[i], p_tokens[i], p_quota[i], p_scope[i], p_day[i], p_cost[i], p_cap[i]) AS a;
    END IF;
    RETURN NEXT;
  END LOOP;
END
$$;
--> statement-breakpoint
-- Settlement of a batch, with one usage event per request (as the single path's statement). Returns the micro-units
-- charged per request, in order.
CREATE FUNCTION meter_settle_batch(
  p_org text[], p_period date[], p_reserved_tokens bigint[], p_tokens bigint[], p_quota bigint[],
  p_scope text[], p_day date[], p_reserved_cost bigint[], p_cost bigint[], p_cap bigint[],
  p_api_key text[], p_kind text[], p_model text[], p_items integer[], p_tokens_in integer[], p_tokens_out integer[],
  p_outcome text[]
) RETURNS TABLE (charged_micros bigint) LANGUAGE plpgsql AS $$
DECLARE
  i integer;
  v_charged bigint[] := '{}';
BEGIN
  PERFORM 1 FROM quota_usage q
    WHERE (q.org_id, q.period_start) IN (SELECT o, p FROM unnest(p_org, p_period) AS u(o, p) WHERE o IS NOT NULL)
    ORDER BY q.org_id, q.period_start FOR UPDATE;
  PERFORM 1 FROM budget_usage b
    WHERE (b.scope, b.day) IN (SELECT s, d FROM unnest(p_scope, p_day) AS u(s, d))
    ORDER BY b.scope, b.day FOR UPDATE;
  FOR i IN 1 .. cardinality(p_scope) LOOP
    SELECT s.charged_micros INTO charged_micros FROM meter_settle(
      p_org[i], p_period[i], p_reserved_tokens[i], p_tokens[i], p_quota[i],
      p_scope[i], p_day[i], p_reserved_cost[i], p_cost[i], p_cap[i]) AS s;
    v_charged := v_charged || charged_micros;
    RETURN NEXT;
  END LOOP;
  INSERT INTO usage_events (org_id, api_key_id, kind, model, items, tokens_in, tokens_out, cost_micros, outcome)
    SELECT * FROM unnest(p_org, p_api_key, p_kind, p_model, p_items, p_tokens_in, p_tokens_out, v_charged, p_outcome);
END
$$;
--> statement-breakpoint
-- meter_release_orphans, as in 0005, but locking the rows it frees in the same key order as the batches (a batch
-- holds several counter rows at once: an unordered multi-row UPDATE could deadlock with it).
CREATE OR REPLACE FUNCTION meter_release_orphans(p_older_than interval) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  v_quota integer;
  v_budget integer;
BEGIN
  UPDATE quota_usage SET reserved_tokens = 0
    WHERE (org_id, period_start) IN (
      SELECT org_id, period_start FROM quota_usage
        WHERE reserved_tokens > 0 AND (reserved_at IS NULL OR reserved_at < now() - p_older_than)
        ORDER BY org_id, period_start FOR UPDATE)
      AND reserved_tokens > 0 AND (reserved_at IS NULL OR reserved_at < now() - p_older_than);
  GET DIAGNOSTICS v_quota = ROW_COUNT;
  UPDATE budget_usage SET reserved_micros = 0
    WHERE (scope, day) IN (
      SELECT scope, day FROM budget_usage
        WHERE reserved_micros > 0 AND (reserved_at IS NULL OR reserved_at < now() - p_older_than)
        ORDER BY scope, day FOR UPDATE)
      AND reserved_micros > 0 AND (reserved_at IS NULL OR reserved_at < now() - p_older_than);
  GET DIAGNOSTICS v_budget = ROW_COUNT;
  RETURN v_quota + v_budget;
END
$$;
