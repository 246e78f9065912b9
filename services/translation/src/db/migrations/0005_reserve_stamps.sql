-- meter_reserve stamps `reserved_at` on every reservation it adds. Every live reservation is settled within one
-- upstream timeout of being made, so on a row whose last reservation is older than that (with a margin), anything
-- still reserved belongs to a process that died between reserve and settle: `meter_release_orphans` frees it.
CREATE OR REPLACE FUNCTION meter_reserve(
  p_org text, p_period date, p_tokens bigint, p_quota bigint,
  p_scope text, p_day date, p_cost bigint, p_cap bigint
) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  IF p_org IS NOT NULL THEN
    UPDATE quota_usage SET reserved_tokens = reserved_tokens + p_tokens, reserved_at = now()
      WHERE org_id = p_org AND period_start = p_period AND used_tokens + reserved_tokens + p_tokens <= p_quota;
    IF NOT FOUND THEN
      INSERT INTO quota_usage (org_id, period_start) VALUES (p_org, p_period) ON CONFLICT DO NOTHING;
      UPDATE quota_usage SET reserved_tokens = reserved_tokens + p_tokens, reserved_at = now()
        WHERE org_id = p_org AND period_start = p_period AND used_tokens + reserved_tokens + p_tokens <= p_quota;
      IF NOT FOUND THEN
        RETURN 'quota';
      END IF;
    END IF;
  END IF;
  UPDATE budget_usage SET reserved_micros = reserved_micros + p_cost, reserved_at = now()
    WHERE scope = p_scope AND day = p_day AND spent_micros + reserved_micros + p_cost <= p_cap;
  IF NOT FOUND THEN
    INSERT INTO budget_usage (scope, day) VALUES (p_scope, p_day) ON CONFLICT DO NOTHING;
    UPDATE budget_usage SET reserved_micros = reserved_micros + p_cost, reserved_at = now()
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
--> statement-breakpoint
-- Frees reservations orphaned longer than p_older_than; returns how many counter rows were released.
CREATE FUNCTION meter_release_orphans(p_older_than interval) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  v_quota integer;
  v_budget integer;
BEGIN
  UPDATE quota_usage SET reserved_tokens = 0
    WHERE reserved_tokens > 0 AND (reserved_at IS NULL OR reserved_at < now() - p_older_than);
  GET DIAGNOSTICS v_quota = ROW_COUNT;
  UPDATE budget_usage SET reserved_micros = 0
    WHERE reserved_micros > 0 AND (reserved_at IS NULL OR reserved_at < now() - p_older_than);
  GET DIAGNOSTICS v_budget = ROW_COUNT;
  RETURN v_quota + v_budget;
END
$$;
--> statement-breakpoint
-- meter_settle, as in 0001, but never drives a reserved counter below zero (a settlement arriving after its
-- reservation was released as orphaned).
CREATE OR REPLACE FUNCTION meter_settle(
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
    SELECT used_tokens, GREATEST(reserved_tokens - p_reserved_tokens, 0) INTO v_used, v_reserved
      FROM quota_usage WHERE org_id = p_org AND period_start = p_period FOR UPDATE;
    IF FOUND THEN
      charged_tokens := LEAST(p_tokens, GREATEST(p_quota - v_used - v_reserved, 0));
      UPDATE quota_usage SET reserved_tokens = v_reserved, used_tokens = used_tokens + charged_tokens
        WHERE org_id = p_org AND period_start = p_period;
    END IF;
  END IF;
  SELECT spent_micros, GREATEST(reserved_micros - p_reserved_cost, 0) INTO v_used, v_reserved
    FROM budget_usage WHERE scope = p_scope AND day = p_day FOR UPDATE;
  IF FOUND THEN
    charged_micros := LEAST(p_cost, GREATEST(p_cap - v_used - v_reserved, 0));
    UPDATE budget_usage SET reserved_micros = v_reserved, spent_micros = spent_micros + charged_micros
      WHERE scope = p_scope AND day = p_day;
  END IF;
  RETURN NEXT;
END
$$;
