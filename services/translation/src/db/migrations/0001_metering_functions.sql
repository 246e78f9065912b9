-- Metering: reserve before the upstream call, settle after it. Each runs as ONE statement (one round trip),
-- so the reservation is atomic: concurrent UPDATEs on the same counter row serialize on its row lock and
-- re-check the WHERE clause on the newest row version. Invariants: used + reserved <= quota, spent + reserved <= cap.
-- Lock order is always quota row, then budget row (no deadlocks).
CREATE FUNCTION meter_reserve(
  p_org text, p_period date, p_tokens bigint, p_quota bigint,
  p_scope text, p_day date, p_cost bigint, p_cap bigint
) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  IF p_org IS NOT NULL THEN
    INSERT INTO quota_usage (org_id, period_start) VALUES (p_org, p_period) ON CONFLICT DO NOTHING;
    UPDATE quota_usage SET reserved_tokens = reserved_tokens + p_tokens
      WHERE org_id = p_org AND period_start = p_period AND used_tokens + reserved_tokens + p_tokens <= p_quota;
    IF NOT FOUND THEN
      RETURN 'quota';
    END IF;
  END IF;
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
  RETURN 'ok';
END
$$;
--> statement-breakpoint
-- Settle: release the reservation and charge the actual usage, but never beyond the headroom left
-- under the cap (an upstream that reports more than was reserved cannot push spend over the cap; the
-- difference is returned as the overrun so it is counted). Settling with 0 releases the reservation.
CREATE FUNCTION meter_settle(
  p_org text, p_period date, p_reserved_tokens bigint, p_tokens bigint, p_quota bigint,
  p_scope text, p_day date, p_reserved_cost bigint, p_cost bigint, p_cap bigint
) RETURNS TABLE (charged_tokens bigint, charged_micros bigint) LANGUAGE plpgsql AS $$
DECLARE
  v_used bigint;
  v_reserved bigint;
BEGIN
  charged_tokens := 0;
  charged_micros := 0;
  IF p_org IS NOT NULL THEN
    SELECT used_tokens, reserved_tokens INTO v_used, v_reserved
      FROM quota_usage WHERE org_id = p_org AND period_start = p_period FOR UPDATE;
    IF FOUND THEN
      charged_tokens := LEAST(p_tokens, GREATEST(p_quota - v_used - (v_reserved - p_reserved_tokens), 0));
      UPDATE quota_usage
        SET reserved_tokens = reserved_tokens - p_reserved_tokens, used_tokens = used_tokens + charged_tokens
        WHERE org_id = p_org AND period_start = p_period;
    END IF;
  END IF;
  SELECT spent_micros, reserved_micros INTO v_used, v_reserved
    FROM budget_usage WHERE scope = p_scope AND day = p_day FOR UPDATE;
  IF FOUND THEN
    charged_micros := LEAST(p_cost, GREATEST(p_cap - v_used - (v_reserved - p_reserved_cost), 0));
    UPDATE budget_usage
      SET reserved_micros = reserved_micros - p_reserved_cost, spent_micros = spent_micros + charged_micros
      WHERE scope = p_scope AND day = p_day;
  END IF;
  RETURN NEXT;
END
$$;
--> statement-breakpoint
INSERT INTO plans (id, name, quota_tokens, period_days, daily_budget_micros) VALUES
  ('free', 'Free', 1000000, 30, 1000000),
  ('team', 'Team', 50000000, 30, 50000000),
  ('enterprise', 'Enterprise', 1000000000, 30, 1000000000)
ON CONFLICT (id) DO NOTHING;
