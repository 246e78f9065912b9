-- The batch functions of 0006, with the same results, but each counter row is read once (as it is locked) and
-- written once per batch: the requests are decided in order on the row values held in memory, with the same
-- arithmetic as meter_admit / meter_reserve / meter_settle, instead of one UPDATE per request on the same hot rows.
-- Lock order is unchanged: rate-limit windows, then quota rows, then budget rows, each sorted by key.
CREATE OR REPLACE FUNCTION meter_admit_batch(
  p_bucket text[], p_window_start bigint[], p_window_ms integer[], p_limit integer[],
  p_org text[], p_period date[], p_tokens bigint[], p_quota bigint[],
  p_scope text[], p_day date[], p_cost bigint[], p_cap bigint[]
) RETURNS TABLE (hits integer, result text) LANGUAGE plpgsql AS $$
DECLARE
  i integer;
  k integer;
  qk integer;
  bk integer;
  r_bucket text[]; r_start bigint[]; r_count integer[];
  q_org text[]; q_period date[]; q_used bigint[]; q_reserved bigint[]; q_touched boolean[];
  b_scope text[]; b_day date[]; b_spent bigint[]; b_reserved bigint[]; b_touched boolean[];
BEGIN
  -- Lock phase: create missing rows and lock existing ones in key order, reading their values.
  WITH up AS (
    INSERT INTO rate_limit_windows AS w (bucket, window_start, window_ms, count)
      SELECT DISTINCT ON (b, ws) b, ws, wm, 0 FROM unnest(p_bucket, p_window_start, p_window_ms) AS u(b, ws, wm)
        WHERE b IS NOT NULL ORDER BY b, ws
      ON CONFLICT (bucket, window_start) DO UPDATE SET count = w.count
      RETURNING w.bucket, w.window_start, w.count)
  SELECT array_agg(up.bucket), array_agg(up.window_start), array_agg(up.count) INTO r_bucket, r_start, r_count FROM up;
  WITH up AS (
    INSERT INTO quota_usage AS q (org_id, period_start)
      SELECT DISTINCT o, p FROM unnest(p_org, p_period) AS u(o, p) WHERE o IS NOT NULL ORDER BY o, p
      ON CONFLICT (org_id, period_start) DO UPDATE SET used_tokens = q.used_tokens
      RETURNING q.org_id, q.period_start, q.used_tokens, q.reserved_tokens)
  SELECT array_agg(up.org_id), array_agg(up.period_start), array_agg(up.used_tokens), array_agg(up.reserved_tokens)
    INTO q_org, q_period, q_used, q_reserved FROM up;
  WITH up AS (
    INSERT INTO budget_usage AS b (scope, day)
      SELECT DISTINCT s, d FROM unnest(p_scope, p_day) AS u(s, d) ORDER BY s, d
      ON CONFLICT (scope, day) DO UPDATE SET spent_micros = b.spent_micros
      RETURNING b.scope, b.day, b.spent_micros, b.reserved_micros)
  SELECT array_agg(up.scope), array_agg(up.day), array_agg(up.spent_micros), array_agg(up.reserved_micros)
    INTO b_scope, b_day, b_spent, b_reserved FROM up;
  q_touched := array_fill(false, ARRAY[coalesce(cardinality(q_org), 0)]);
  b_touched := array_fill(false, ARRAY[coalesce(cardinality(b_scope), 0)]);

  FOR i IN 1 .. cardinality(p_scope) LOOP
    hits := 0;
    result := NULL;
    bk := NULL;
    -- meter_admit: count the hit; over the limit, reserve nothing.
    IF p_bucket[i] IS NOT NULL THEN
      FOR k IN 1 .. cardinality(r_bucket) LOOP
        IF r_bucket[k] = p_bucket[i] AND r_start[k] = p_window_start[i] THEN
          r_count[k] := r_count[k] + 1;
          hits := r_count[k];
          EXIT;
        END IF;
      END LOOP;
      IF hits > p_limit[i] THEN
        result := 'rate_limited';
      END IF;
    END IF;
    IF result IS NULL THEN
      -- meter_reserve: quota row, then budget row (undoing the quota reservation when the budget refuses).
      qk := NULL;
      IF p_org[i] IS NOT NULL THEN
        FOR k IN 1 .. cardinality(q_org) LOOP
          IF q_org[k] = p_org[i] AND q_period[k] = p_period[i] THEN
            qk := k;
            EXIT;
          END IF;
        END LOOP;
        IF q_used[qk] + q_reserved[qk] + p_tokens[i] <= p_quota[i] THEN
          q_reserved[qk] := q_reserved[qk] + p_tokens[i];
          q_touched[qk] := true;
        ELSE
          result := 'quota';
        END IF;
      END IF;
      IF result IS NULL THEN
        FOR k IN 1 .. cardinality(b_scope) LOOP
          IF b_scope[k] = p_scope[i] AND b_day[k] = p_day[i] THEN
            bk := k;
            EXIT;
          END IF;
        END LOOP;
        IF b_spent[bk] + b_reserved[bk] + p_cost[i] <= p_cap[i] THEN
          b_reserved[bk] := b_reserved[bk] + p_cost[i];
          b_touched[bk] := true;
          result := 'ok';
        ELSE
          IF qk IS NOT NULL THEN
            q_reserved[qk] := q_reserved[qk] - p_tokens[i];
          END IF;
          result := 'budget';
        END IF;
      END IF;
    END IF;
    RETURN NEXT;
  END LOOP;

  -- Write each row once (reserved_at stamped where a reservation was added, as meter_reserve does).
  UPDATE rate_limit_windows w SET count = u.c
    FROM unnest(r_bucket, r_start, r_count) AS u(b, ws, c)
    WHERE w.bucket = u.b AND w.window_start = u.ws;
  UPDATE quota_usage q SET reserved_tokens = u.r, reserved_at = CASE WHEN u.t THEN now() ELSE q.reserved_at END
    FROM unnest(q_org, q_period, q_reserved, q_touched) AS u(o, p, r, t)
    WHERE q.org_id = u.o AND q.period_start = u.p;
  UPDATE budget_usage b SET reserved_micros = u.r, reserved_at = CASE WHEN u.t THEN now() ELSE b.reserved_at END
    FROM unnest(b_scope, b_day, b_reserved, b_touched) AS u(s, d, r, t)
    WHERE b.scope = u.s AND b.day = u.d;
END
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION meter_settle_batch(
  p_org text[], p_period date[], p_reserved_tokens bigint[], p_tokens bigint[], p_quota bigint[],
  p_scope text[], p_day date[], p_reserved_cost bigint[], p_cost bigint[], p_cap bigint[],
  p_api_key text[], p_kind text[], p_model text[], p_items integer[], p_tokens_in integer[], p_tokens_out integer[],
  p_outcome text[]
) RETURNS TABLE (charged_micros bigint) LANGUAGE plpgsql AS $$
DECLARE
  i integer;
  k integer;
  v_charged bigint[] := '{}';
  v_tokens bigint;
  q_org text[]; q_period date[]; q_used bigint[]; q_reserved bigint[];
  b_scope text[]; b_day date[]; b_spent bigint[]; b_reserved bigint[];
BEGIN
  -- Lock and read the rows in key order (settlement never creates one: a missing row charges nothing, as meter_settle).
  SELECT array_agg(l.org_id), array_agg(l.period_start), array_agg(l.used_tokens), array_agg(l.reserved_tokens)
    INTO q_org, q_period, q_used, q_reserved
    FROM (SELECT q.org_id, q.period_start, q.used_tokens, q.reserved_tokens FROM quota_usage q
      WHERE (q.org_id, q.period_start) IN (SELECT o, p FROM unnest(p_org, p_period) AS u(o, p) WHERE o IS NOT NULL)
      ORDER BY q.org_id, q.period_start FOR UPDATE) AS l;
  SELECT array_agg(l.scope), array_agg(l.day), array_agg(l.spent_micros), array_agg(l.reserved_micros)
    INTO b_scope, b_day, b_spent, b_reserved
    FROM (SELECT b.scope, b.day, b.spent_micros, b.reserved_micros FROM budget_usage b
      WHERE (b.scope, b.day) IN (SELECT s, d FROM unnest(p_scope, p_day) AS u(s, d))
      ORDER BY b.scope, b.day FOR UPDATE) AS l;

  FOR i IN 1 .. cardinality(p_scope) LOOP
    -- meter_settle's arithmetic: release the reservation, charge at most the headroom left under the limit.
    IF p_org[i] IS NOT NULL THEN
      FOR k IN 1 .. coalesce(cardinality(q_org), 0) LOOP
        IF q_org[k] = p_org[i] AND q_period[k] = p_period[i] THEN
          q_reserved[k] := GREATEST(q_reserved[k] - p_reserved_tokens[i], 0);
          v_tokens := LEAST(p_tokens[i], GREATEST(p_quota[i] - q_used[k] - q_reserved[k], 0));
          q_used[k] := q_used[k] + v_tokens;
          EXIT;
        END IF;
      END LOOP;
    END IF;
    charged_micros := 0;
    FOR k IN 1 .. coalesce(cardinality(b_scope), 0) LOOP
      IF b_scope[k] = p_scope[i] AND b_day[k] = p_day[i] THEN
        b_reserved[k] := GREATEST(b_reserved[k] - p_reserved_cost[i], 0);
        charged_micros := LEAST(p_cost[i], GREATEST(p_cap[i] - b_spent[k] - b_reserved[k], 0));
        b_spent[k] := b_spent[k] + charged_micros;
        EXIT;
      END IF;
    END LOOP;
    v_charged := v_charged || charged_micros;
    RETURN NEXT;
  END LOOP;

  UPDATE quota_usage q SET used_tokens = u.used, reserved_tokens = u.r
    FROM unnest(q_org, q_period, q_used, q_reserved) AS u(o, p, used, r)
    WHERE q.org_id = u.o AND q.period_start = u.p;
  UPDATE budget_usage b SET spent_micros = u.spent, reserved_micros = u.r
    FROM unnest(b_scope, b_day, b_spent, b_reserved) AS u(s, d, spent, r)
    WHERE b.scope = u.s AND b.day = u.d;
  INSERT INTO usage_events (org_id, api_key_id, kind, model, items, tokens_in, tokens_out, cost_micros, outcome)
    SELECT * FROM unnest(p_org, p_api_key, p_kind, p_model, p_items, p_tokens_in, p_tokens_out, v_charged, p_outcome);
END
$$;
