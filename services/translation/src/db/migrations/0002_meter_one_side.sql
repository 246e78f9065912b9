-- meter (0000_init.sql, where its arithmetic, order and locks are documented), the same decisions with less work for
-- a statement that carries one kind of call, as a lone request's admission or settlement does (issue #28: two such
-- statements are on every request's path when the service is not busy): a side with no calls is not parsed from
-- JSON, the rate-limit windows are not upserted or written without a hit to count, and no usage event is inserted
-- without a settlement. Everything else is unchanged, word for word.
CREATE OR REPLACE FUNCTION meter(p_admissions json, p_settlements json)
  RETURNS TABLE (kind text, hits integer, result text, charged_micros bigint) LANGUAGE plpgsql AS $$
DECLARE
  i integer;
  k integer;
  qk integer;
  bk integer;
  v_tokens bigint;
  v_charged bigint[] := '{}';
  a_bucket text[] := '{}'; a_window_start bigint[] := '{}'; a_window_ms integer[] := '{}'; a_limit integer[] := '{}';
  a_org text[] := '{}'; a_period date[] := '{}'; a_tokens bigint[] := '{}'; a_quota bigint[] := '{}';
  a_scope text[] := '{}'; a_day date[] := '{}'; a_cost bigint[] := '{}'; a_cap bigint[] := '{}';
  s_org text[] := '{}'; s_period date[] := '{}'; s_reserved_tokens bigint[] := '{}'; s_tokens bigint[] := '{}';
  s_quota bigint[] := '{}'; s_scope text[] := '{}'; s_day date[] := '{}'; s_reserved_cost bigint[] := '{}';
  s_cost bigint[] := '{}'; s_cap bigint[] := '{}'; s_api_key text[] := '{}'; s_kind text[] := '{}';
  s_model text[] := '{}'; s_items integer[] := '{}'; s_tokens_in integer[] := '{}'; s_tokens_out integer[] := '{}';
  s_outcome text[] := '{}';
  r_bucket text[]; r_start bigint[]; r_count integer[];
  q_org text[]; q_period date[]; q_used bigint[]; q_reserved bigint[]; q_created boolean[]; q_touched boolean[];
  b_scope text[]; b_day date[]; b_spent bigint[]; b_reserved bigint[]; b_created boolean[]; b_touched boolean[];
BEGIN
  -- The calls arrive as JSON arrays of objects whose keys are the metering module's field names (services/meter.ts):
  -- one array per field below, in call order. A side with no calls is not parsed (a call alone is one side).
  IF json_array_length(p_admissions) > 0 THEN
  SELECT coalesce(array_agg(x."bucket" ORDER BY n), '{}'), coalesce(array_agg(x."windowStart" ORDER BY n), '{}'),
      coalesce(array_agg(x."windowMs" ORDER BY n), '{}'), coalesce(array_agg(x."limit" ORDER BY n), '{}'),
      coalesce(array_agg(x."orgId" ORDER BY n), '{}'), coalesce(array_agg(x."period" ORDER BY n), '{}'),
      coalesce(array_agg(x."tokens" ORDER BY n), '{}'), coalesce(array_agg(x."quotaTokens" ORDER BY n), '{}'),
      coalesce(array_agg(x."scope" ORDER BY n), '{}'), coalesce(array_agg(x."day" ORDER BY n), '{}'),
      coalesce(array_agg(x."costMicros" ORDER BY n), '{}'), coalesce(array_agg(x."capMicros" ORDER BY n), '{}')
    INTO a_bucket, a_window_start, a_window_ms, a_limit, a_org, a_period, a_tokens, a_quota, a_scope, a_day, a_cost, a_cap
    FROM ROWS FROM (json_to_recordset(p_admissions) AS (
      "bucket" text, "windowStart" bigint, "windowMs" integer, "limit" integer, "orgId" text, "period" date,
      "tokens" bigint, "quotaTokens" bigint, "scope" text, "day" date, "costMicros" bigint, "capMicros" bigint))
      WITH ORDINALITY AS x("bucket", "windowStart", "windowMs", "limit", "orgId", "period", "tokens", "quotaTokens",
        "scope", "day", "costMicros", "capMicros", n);
  END IF;
  IF json_array_length(p_settlements) > 0 THEN
  SELECT coalesce(array_agg(x."orgId" ORDER BY n), '{}'), coalesce(array_agg(x."period" ORDER BY n), '{}'),
      coalesce(array_agg(x."reservedTokens" ORDER BY n), '{}'), coalesce(array_agg(x."tokens" ORDER BY n), '{}'),
      coalesce(array_agg(x."quotaTokens" ORDER BY n), '{}'), coalesce(array_agg(x."scope" ORDER BY n), '{}'),
      coalesce(array_agg(x."day" ORDER BY n), '{}'), coalesce(array_agg(x."reservedCostMicros" ORDER BY n), '{}'),
      coalesce(array_agg(x."costMicros" ORDER BY n), '{}'), coalesce(array_agg(x."capMicros" ORDER BY n), '{}'),
      coalesce(array_agg(x."apiKeyId" ORDER BY n), '{}'), coalesce(array_agg(x."kind" ORDER BY n), '{}'),
      coalesce(array_agg(x."model" ORDER BY n), '{}'), coalesce(array_agg(x."items" ORDER BY n), '{}'),
      coalesce(array_agg(x."tokensIn" ORDER BY n), '{}'), coalesce(array_agg(x."tokensOut" ORDER BY n), '{}'),
      coalesce(array_agg(x."outcome" ORDER BY n), '{}')
    INTO s_org, s_period, s_reserved_tokens, s_tokens, s_quota, s_scope, s_day, s_reserved_cost, s_cost, s_cap,
      s_api_key, s_kind, s_model, s_items, s_tokens_in, s_tokens_out, s_outcome
    FROM ROWS FROM (json_to_recordset(p_settlements) AS (
      "orgId" text, "period" date, "reservedTokens" bigint, "tokens" bigint, "quotaTokens" bigint, "scope" text,
      "day" date, "reservedCostMicros" bigint, "costMicros" bigint, "capMicros" bigint, "apiKeyId" text, "kind" text,
      "model" text, "items" integer, "tokensIn" integer, "tokensOut" integer, "outcome" text))
      WITH ORDINALITY AS x("orgId", "period", "reservedTokens", "tokens", "quotaTokens", "scope", "day",
        "reservedCostMicros", "costMicros", "capMicros", "apiKeyId", "kind", "model", "items", "tokensIn", "tokensOut",
        "outcome", n);
  END IF;
  -- Rate-limit windows only when an admission counts a hit (a settlement alone has none).
  IF cardinality(array_remove(a_bucket, NULL)) > 0 THEN
  WITH up AS (
    INSERT INTO rate_limit_windows AS w (bucket, window_start, window_ms, count)
      SELECT DISTINCT ON (b, ws) b, ws, wm, 0 FROM unnest(a_bucket, a_window_start, a_window_ms) AS u(b, ws, wm)
        WHERE b IS NOT NULL ORDER BY b, ws
      ON CONFLICT (bucket, window_start) DO UPDATE SET count = w.count
      RETURNING w.bucket, w.window_start, w.count)
  SELECT array_agg(up.bucket), array_agg(up.window_start), array_agg(up.count) INTO r_bucket, r_start, r_count FROM up;
  END IF;
  WITH up AS (
    INSERT INTO quota_usage AS q (org_id, period_start)
      SELECT DISTINCT o, p FROM (
        SELECT * FROM unnest(a_org, a_period) UNION ALL SELECT * FROM unnest(s_org, s_period)
      ) AS u(o, p) WHERE o IS NOT NULL ORDER BY o, p
      ON CONFLICT (org_id, period_start) DO UPDATE SET used_tokens = q.used_tokens
      RETURNING q.org_id, q.period_start, q.used_tokens, q.reserved_tokens, q.xmax = 0 AS created)
  SELECT array_agg(up.org_id), array_agg(up.period_start), array_agg(up.used_tokens), array_agg(up.reserved_tokens),
      array_agg(up.created)
    INTO q_org, q_period, q_used, q_reserved, q_created FROM up;
  WITH up AS (
    INSERT INTO budget_usage AS b (scope, day)
      SELECT DISTINCT s, d FROM (
        SELECT * FROM unnest(a_scope, a_day) UNION ALL SELECT * FROM unnest(s_scope, s_day)
      ) AS u(s, d) ORDER BY s, d
      ON CONFLICT (scope, day) DO UPDATE SET spent_micros = b.spent_micros
      RETURNING b.scope, b.day, b.spent_micros, b.reserved_micros, b.xmax = 0 AS created)
  SELECT array_agg(up.scope), array_agg(up.day), array_agg(up.spent_micros), array_agg(up.reserved_micros),
      array_agg(up.created)
    INTO b_scope, b_day, b_spent, b_reserved, b_created FROM up;
  q_touched := array_fill(false, ARRAY[coalesce(cardinality(q_org), 0)]);
  b_touched := array_fill(false, ARRAY[coalesce(cardinality(b_scope), 0)]);

  -- Settlements: release the reservation, charge at most the headroom left under the limit .
  FOR i IN 1 .. coalesce(cardinality(s_scope), 0) LOOP
    kind := 'settle';
    hits := NULL;
    result := NULL;
    IF s_org[i] IS NOT NULL THEN
      FOR k IN 1 .. coalesce(cardinality(q_org), 0) LOOP
        IF q_org[k] = s_org[i] AND q_period[k] = s_period[i] THEN
          IF NOT q_created[k] THEN
            q_reserved[k] := GREATEST(q_reserved[k] - s_reserved_tokens[i], 0);
            v_tokens := LEAST(s_tokens[i], GREATEST(s_quota[i] - q_used[k] - q_reserved[k], 0));
            q_used[k] := q_used[k] + v_tokens;
          END IF;
          EXIT;
        END IF;
      END LOOP;
    END IF;
    charged_micros := 0;
    FOR k IN 1 .. coalesce(cardinality(b_scope), 0) LOOP
      IF b_scope[k] = s_scope[i] AND b_day[k] = s_day[i] THEN
        IF NOT b_created[k] THEN
          b_reserved[k] := GREATEST(b_reserved[k] - s_reserved_cost[i], 0);
          charged_micros := LEAST(s_cost[i], GREATEST(s_cap[i] - b_spent[k] - b_reserved[k], 0));
          b_spent[k] := b_spent[k] + charged_micros;
        END IF;
        EXIT;
      END IF;
    END LOOP;
    v_charged := v_charged || charged_micros;
    RETURN NEXT;
  END LOOP;

  -- Admissions: count the rate-limit hit, then reserve quota, then budget.
  FOR i IN 1 .. coalesce(cardinality(a_scope), 0) LOOP
    kind := 'admit';
    hits := 0;
    result := NULL;
    charged_micros := NULL;
    qk := NULL;
    bk := NULL;
    IF a_bucket[i] IS NOT NULL THEN
      FOR k IN 1 .. coalesce(cardinality(r_bucket), 0) LOOP
        IF r_bucket[k] = a_bucket[i] AND r_start[k] = a_window_start[i] THEN
          r_count[k] := r_count[k] + 1;
          hits := r_count[k];
          EXIT;
        END IF;
      END LOOP;
      IF hits > a_limit[i] THEN
        result := 'rate_limited';
      END IF;
    END IF;
    IF result IS NULL AND a_org[i] IS NOT NULL THEN
      FOR k IN 1 .. coalesce(cardinality(q_org), 0) LOOP
        IF q_org[k] = a_org[i] AND q_period[k] = a_period[i] THEN
          qk := k;
          EXIT;
        END IF;
      END LOOP;
      IF q_used[qk] + q_reserved[qk] + a_tokens[i] <= a_quota[i] THEN
        q_reserved[qk] := q_reserved[qk] + a_tokens[i];
        q_touched[qk] := true;
      ELSE
        result := 'quota';
      END IF;
    END IF;
    IF result IS NULL THEN
      FOR k IN 1 .. coalesce(cardinality(b_scope), 0) LOOP
        IF b_scope[k] = a_scope[i] AND b_day[k] = a_day[i] THEN
          bk := k;
          EXIT;
        END IF;
      END LOOP;
      IF b_spent[bk] + b_reserved[bk] + a_cost[i] <= a_cap[i] THEN
        b_reserved[bk] := b_reserved[bk] + a_cost[i];
        b_touched[bk] := true;
        result := 'ok';
      ELSE
        IF qk IS NOT NULL THEN
          q_reserved[qk] := q_reserved[qk] - a_tokens[i];
        END IF;
        result := 'budget';
      END IF;
    END IF;
    RETURN NEXT;
  END LOOP;

  -- Write each row once (reserved_at stamped where a reservation was added: see meter_release_orphans).
  IF r_bucket IS NOT NULL THEN
  UPDATE rate_limit_windows w SET count = u.c
    FROM unnest(r_bucket, r_start, r_count) AS u(b, ws, c)
    WHERE w.bucket = u.b AND w.window_start = u.ws;
  END IF;
  UPDATE quota_usage q SET used_tokens = u.used, reserved_tokens = u.r,
      reserved_at = CASE WHEN u.t THEN now() ELSE q.reserved_at END
    FROM unnest(q_org, q_period, q_used, q_reserved, q_touched) AS u(o, p, used, r, t)
    WHERE q.org_id = u.o AND q.period_start = u.p;
  UPDATE budget_usage b SET spent_micros = u.spent, reserved_micros = u.r,
      reserved_at = CASE WHEN u.t THEN now() ELSE b.reserved_at END
    FROM unnest(b_scope, b_day, b_spent, b_reserved, b_touched) AS u(s, d, spent, r, t)
    WHERE b.scope = u.s AND b.day = u.d;
  IF cardinality(s_scope) > 0 THEN
  INSERT INTO usage_events (org_id, api_key_id, kind, model, items, tokens_in, tokens_out, cost_micros, outcome)
    SELECT * FROM unnest(s_org, s_api_key, s_kind, s_model, s_items, s_tokens_in, s_tokens_out, v_charged, s_outcome);
  END IF;
END
$$;
