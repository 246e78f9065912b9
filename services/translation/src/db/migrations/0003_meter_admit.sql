-- meter_admit: the translate route's rate-limit hit and its reservation in ONE round trip. Counts the hit in the
-- fixed window; over the limit it reserves nothing and answers 'rate_limited', else it answers meter_reserve's result.
-- Lock order: rate-limit row (per key), then quota row, then budget row — the same order everywhere, no deadlocks.
CREATE FUNCTION meter_admit(
  p_bucket text, p_window_start bigint, p_window_ms integer, p_limit integer,
  p_org text, p_period date, p_tokens bigint, p_quota bigint,
  p_scope text, p_day date, p_cost bigint, p_cap bigint
) RETURNS TABLE (hits integer, result text) LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO rate_limit_windows (bucket, window_start, window_ms, count) VALUES (p_bucket, p_window_start, p_window_ms, 1)
    ON CONFLICT (bucket, window_start) DO UPDATE SET count = rate_limit_windows.count + 1
    RETURNING count INTO hits;
  IF hits > p_limit THEN
    result := 'rate_limited';
  ELSE
    result := meter_reserve(p_org, p_period, p_tokens, p_quota, p_scope, p_day, p_cost, p_cap);
  END IF;
  RETURN NEXT;
END
$$;
