-- meter_reserve, cheaper in the common case: UPDATE the counter row first and create it only when it is missing
-- (same semantics as 0001: one statement per row, the row lock serializes, the WHERE clause re-checks the limit).
CREATE OR REPLACE FUNCTION meter_reserve(
  p_org text, p_period date, p_tokens bigint, p_quota bigint,
  p_scope text, p_day date, p_cost bigint, p_cap bigint
) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  IF p_org IS NOT NULL THEN
    UPDATE quota_usage SET reserved_tokens = reserved_tokens + p_tokens
      WHERE org_id = p_org AND period_start = p_period AND used_tokens + reserved_tokens + p_tokens <= p_quota;
    IF NOT FOUND THEN
      INSERT INTO quota_usage (org_id, period_start) VALUES (p_org, p_period) ON CONFLICT DO NOTHING;
      UPDATE quota_usage SET reserved_tokens = reserved_tokens + p_tokens
        WHERE org_id = p_org AND period_start = p_period AND used_tokens + reserved_tokens + p_tokens <= p_quota;
      IF NOT FOUND THEN
        RETURN 'quota';
      END IF;
    END IF;
  END IF;
  UPDATE budget_usage SET reserved_micros = reserved_micros + p_cost
    WHERE scope = p_scope AND day = p_day AND spent_micros + reserved_micros + p_cost <= p_cap;
  IF NOT FOUND THEN
    INSERT INTO budget_usage (scope, day) VALUES (p_scope, p_day) ON CONFLICT DO NOTHING;
    UPDATE budget_usage SET reserved_micros = reserved_micros + p_cost
      WHERE scope = p_scope AND day = p_day AND spent_micros + reserved_micros + p_cost <= p_cap;
    IF NOT FOUND THEN
      IF p_org IS NOT NULL THEN
        UPDATE quota_usage SET reserved_tokens = reserved_tokens - p_tokens
          WHERE org_id = p_org AND period_start = p_period;
      END IF;
      RETURN 'budget';
    END IF;
  END IF;
  RETURN 'ok';
END
$$;
