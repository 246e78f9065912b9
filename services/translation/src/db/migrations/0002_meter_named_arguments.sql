-- Metering: ONE function decides every admission and settlement, alone or in a batch (group commit). The calls are
-- named JSON objects (the fields of services/meter.ts's Admission and Settlement), not positional arguments.
-- It replaces meter_reserve, meter_settle, meter_admit and meter_batch, whose arithmetic it keeps unchanged.
--
-- The arithmetic (the one place it is written; the TypeScript side only prices calls and picks the period and day):
--   quota row (org, period):  used + reserved <= quota   — an admission reserves its tokens only if they still fit;
--   budget row (scope, day):  spent + reserved <= cap    — an admission reserves its cost only if it still fits, and a
--                              budget refusal undoes the quota reservation it had just made;
--   rate-limit window (bucket, window start): an admission with a bucket counts one hit; over the limit it is
--                              'rate_limited' and reserves nothing;
--   settlement: releases what its admission reserved (never below zero: a reservation released as orphaned stays
--               released) and charges min(actual, headroom under the limit after the release) — an upstream reporting
--               more than was reserved cannot push usage past the quota or spend past the cap; settling with 0
--               releases everything. A settlement whose counter row is gone (retention) charges nothing. Each
--               settlement writes one usage event with what was charged.
-- Order: settlements first (each settles a reservation an earlier statement made), then admissions, each in array
-- order, so each call's outcome is exactly what it would be had the calls come one after the other.
-- Rows: one (kind 'settle', charged_micros) per settlement, then one (kind 'admit', hits, result) per admission;
-- result is 'ok', 'quota', 'budget' or 'rate_limited'.
-- Locks: rate-limit windows, then quota rows, then budget rows, each sorted by key, each row locked once for both
-- kinds (created when missing, by a no-op upsert): the same global order in every statement, so concurrent batches of
-- several replicas never deadlock; meter_release_orphans locks in the same order.
DROP FUNCTION meter_batch(text[], bigint[], integer[], integer[], text[], date[], bigint[], bigint[], text[], date[],
  bigint[], bigint[], text[], date[], bigint[], bigint[], bigint[], text[], date[], bigint[], bigint[], bigint[], text[],
  text[], text[], integer[], integer[], integer[], text[]);
--> statement-breakpoint
DROP FUNCTION meter_admit(text, bigint, integer, integer, text, date, bigint, bigint, text, date, bigint, bigint);
--> statement-breakpoint
DROP FUNCTION meter_reserve(text, date, bigint, bigint, text, date, bigint, bigint);
--> statement-breakpoint
DROP FUNCTION meter_settle(text, date, bigint, bigint, bigint, text, date, bigint, bigint, bigint);
--> statement-breakpoint
CREATE FUNCTION meter(p_admissions json, p_settlements json)
  RETURNS TABLE (kind text, hits integer, result text, charged_micros bigint) LANGUAGE plpgsql AS $$
DECLARE
  i integer;
  k integer;
  qk integer;
  bk integer;
  v_tokens bigint;
  v_charged bigint[] := '{}';
  a_bucket text[]; a_window_start bigint[]; a_window_ms integer[]; a_limit integer[];
  a_org text[]; a_period date[]; a_tokens bigint[]; a_quota bigint[];
  a_scope text[]; a_day date[]; a_cost bigint[]; a_cap bigint[];
  s_org text[]; s_period date[]; s_reserved_tokens bigint[]; s_tokens bigint[]; s_quota bigint[];
  s_scope text[]; s_day date[]; s_reserved_cost bigint[]; s_cost bigint[]; s_cap bigint[];
  s_api_key text[]; s_kind text[]; s_model text[]; s_items integer[]; s_tokens_in integer[]; s_tokens_out integer[];
  s_outcome text[];
  r_bucket text[]; r_start bigint[]; r_count integer[];
  q_org text[]; q_period date[]; q_used bigint[]; q_reserved bigint[]; q_created boolean[]; q_touched boolean[];
  b_scope text[]; b_day date[]; b_spent bigint[]; b_reserved bigint[]; b_created boolean[]; b_touched boolean[];
BEGIN
  -- The calls arrive as JSON arrays of objects whose keys are the metering module's field names (services/meter.ts):
  -- one array per field below, in call order.
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
  WITH up AS (
    INSERT INTO rate_limit_windows AS w (bucket, window_start, window_ms, count)
      SELECT DISTINCT ON (b, ws) b, ws, wm, 0 FROM unnest(a_bucket, a_window_start, a_window_ms) AS u(b, ws, wm)
        WHERE b IS NOT NULL ORDER BY b, ws
      ON CONFLICT (bucket, window_start) DO UPDATE SET count = w.count
      RETURNING w.bucket, w.window_start, w.count)
  SELECT array_agg(up.bucket), array_agg(up.window_start), array_agg(up.count) INTO r_bucket, r_start, r_count FROM up;
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
  UPDATE rate_limit_windows w SET count = u.c
    FROM unnest(r_bucket, r_start, r_count) AS u(b, ws, c)
    WHERE w.bucket = u.b AND w.window_start = u.ws;
  UPDATE quota_usage q SET used_tokens = u.used, reserved_tokens = u.r,
      reserved_at = CASE WHEN u.t THEN now() ELSE q.reserved_at END
    FROM unnest(q_org, q_period, q_used, q_reserved, q_touched) AS u(o, p, used, r, t)
    WHERE q.org_id = u.o AND q.period_start = u.p;
  UPDATE budget_usage b SET spent_micros = u.spent, reserved_micros = u.r,
      reserved_at = CASE WHEN u.t THEN now() ELSE b.reserved_at END
    FROM unnest(b_scope, b_day, b_spent, b_reserved, b_touched) AS u(s, d, spent, r, t)
    WHERE b.scope = u.s AND b.day = u.d;
  INSERT INTO usage_events (org_id, api_key_id, kind, model, items, tokens_in, tokens_out, cost_micros, outcome)
    SELECT * FROM unnest(s_org, s_api_key, s_kind, s_model, s_items, s_tokens_in, s_tokens_out, v_charged, s_outcome);
END
$$;
