CREATE TABLE "api_key_generation" (
	"id" integer PRIMARY KEY NOT NULL,
	"generation" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" text PRIMARY KEY DEFAULT gen_random_uuid()::text NOT NULL,
	"hash" "bytea" NOT NULL,
	"prefix" text NOT NULL,
	"name" text,
	"user_id" text NOT NULL,
	"org_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "api_keys_hash_unique" UNIQUE("hash")
);
--> statement-breakpoint
CREATE TABLE "audit_log" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"actor_user_id" text,
	"actor_kind" text NOT NULL,
	"org_id" text,
	"action" text NOT NULL,
	"target" text,
	"request_id" text,
	"meta" jsonb DEFAULT '{}'::jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "billing_events" (
	"id" text PRIMARY KEY NOT NULL,
	"type" text NOT NULL,
	"org_id" text,
	"customer_ref" text,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "budget_usage" (
	"scope" text NOT NULL,
	"day" date NOT NULL,
	"spent_micros" bigint DEFAULT 0 NOT NULL,
	"reserved_micros" bigint DEFAULT 0 NOT NULL,
	"reserved_at" timestamp with time zone,
	CONSTRAINT "budget_usage_scope_day_pk" PRIMARY KEY("scope","day")
);
--> statement-breakpoint
CREATE TABLE "fine_tuned_models" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"upstream_model" text NOT NULL,
	"price_in_micros" bigint NOT NULL,
	"price_out_micros" bigint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "invites" (
	"id" text PRIMARY KEY DEFAULT gen_random_uuid()::text NOT NULL,
	"org_id" text NOT NULL,
	"email" text NOT NULL,
	"role" text DEFAULT 'member' NOT NULL,
	"invited_by" text,
	"token_hash" "bytea" NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"accepted_at" timestamp with time zone,
	CONSTRAINT "invites_token_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
CREATE TABLE "jobs" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"payload" jsonb NOT NULL,
	"status" text DEFAULT 'queued' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"max_attempts" integer DEFAULT 5 NOT NULL,
	"run_at" timestamp with time zone DEFAULT now() NOT NULL,
	"locked_until" timestamp with time zone,
	"last_error" text,
	"dedupe_key" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone,
	CONSTRAINT "jobs_dedupe_key_unique" UNIQUE("dedupe_key")
);
--> statement-breakpoint
CREATE TABLE "memberships" (
	"org_id" text NOT NULL,
	"user_id" text NOT NULL,
	"role" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "memberships_org_id_user_id_pk" PRIMARY KEY("org_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "organizations" (
	"id" text PRIMARY KEY DEFAULT gen_random_uuid()::text NOT NULL,
	"name" text NOT NULL,
	"personal" boolean DEFAULT false NOT NULL,
	"plan_id" text NOT NULL,
	"daily_budget_micros" bigint,
	"judge_sample_rate" real DEFAULT 0 NOT NULL,
	"review_threshold" real DEFAULT 3 NOT NULL,
	"memory_enabled" boolean DEFAULT false NOT NULL,
	"external_customer_id" text,
	"subscription_status" text,
	"current_period_end" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "organizations_external_customer_id_unique" UNIQUE("external_customer_id")
);
--> statement-breakpoint
CREATE TABLE "plans" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"quota_tokens" bigint NOT NULL,
	"period_days" integer DEFAULT 30 NOT NULL,
	"daily_budget_micros" bigint NOT NULL,
	"external_price_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "plans_external_price_id_unique" UNIQUE("external_price_id")
);
--> statement-breakpoint
CREATE TABLE "quota_usage" (
	"org_id" text NOT NULL,
	"period_start" date NOT NULL,
	"used_tokens" bigint DEFAULT 0 NOT NULL,
	"reserved_tokens" bigint DEFAULT 0 NOT NULL,
	"reserved_at" timestamp with time zone,
	CONSTRAINT "quota_usage_org_id_period_start_pk" PRIMARY KEY("org_id","period_start")
);
--> statement-breakpoint
CREATE TABLE "rate_limit_windows" (
	"bucket" text NOT NULL,
	"window_start" bigint NOT NULL,
	"window_ms" integer NOT NULL,
	"count" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "rate_limit_windows_bucket_window_start_pk" PRIMARY KEY("bucket","window_start")
);
--> statement-breakpoint
CREATE TABLE "review_items" (
	"id" text PRIMARY KEY DEFAULT gen_random_uuid()::text NOT NULL,
	"org_id" text NOT NULL,
	"source_locale" text NOT NULL,
	"target_locale" text NOT NULL,
	"item_id" text NOT NULL,
	"source_text" text NOT NULL,
	"target_text" text NOT NULL,
	"is_icu" boolean DEFAULT false NOT NULL,
	"glossary" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"model" text NOT NULL,
	"scores" jsonb NOT NULL,
	"overall" real NOT NULL,
	"issues" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"status" text DEFAULT 'open' NOT NULL,
	"final_target" text,
	"reject_reason" text,
	"decided_by" text,
	"decided_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sessions" (
	"token_hash" "bytea" PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"last_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	"mfa_verified_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "translation_memory" (
	"org_id" text NOT NULL,
	"source_locale" text NOT NULL,
	"target_locale" text NOT NULL,
	"key_hash" "bytea" NOT NULL,
	"source_text" text NOT NULL,
	"context" text,
	"is_icu" boolean DEFAULT false NOT NULL,
	"target_text" text NOT NULL,
	"origin" text NOT NULL,
	"created_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "translation_memory_org_id_source_locale_target_locale_key_hash_pk" PRIMARY KEY("org_id","source_locale","target_locale","key_hash")
);
--> statement-breakpoint
CREATE TABLE "usage_daily" (
	"org_id" text NOT NULL,
	"day" date NOT NULL,
	"kind" text NOT NULL,
	"model" text NOT NULL,
	"requests" integer NOT NULL,
	"tokens_in" bigint NOT NULL,
	"tokens_out" bigint NOT NULL,
	"cost_micros" bigint NOT NULL,
	CONSTRAINT "usage_daily_org_id_day_kind_model_pk" PRIMARY KEY("org_id","day","kind","model")
);
--> statement-breakpoint
CREATE TABLE "usage_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"org_id" text,
	"api_key_id" text,
	"kind" text NOT NULL,
	"model" text NOT NULL,
	"items" integer NOT NULL,
	"tokens_in" integer NOT NULL,
	"tokens_out" integer NOT NULL,
	"cost_micros" bigint NOT NULL,
	"outcome" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" text PRIMARY KEY DEFAULT gen_random_uuid()::text NOT NULL,
	"email" text NOT NULL,
	"name" text,
	"github_id" text,
	"mfa_secret_enc" text,
	"mfa_enabled" boolean DEFAULT false NOT NULL,
	"mfa_last_step" bigint,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp with time zone,
	CONSTRAINT "users_github_id_unique" UNIQUE("github_id")
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "fine_tuned_models" ADD CONSTRAINT "fine_tuned_models_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "invites" ADD CONSTRAINT "invites_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "invites" ADD CONSTRAINT "invites_invited_by_users_id_fk" FOREIGN KEY ("invited_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "memberships" ADD CONSTRAINT "memberships_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "memberships" ADD CONSTRAINT "memberships_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "organizations" ADD CONSTRAINT "organizations_plan_id_plans_id_fk" FOREIGN KEY ("plan_id") REFERENCES "public"."plans"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "quota_usage" ADD CONSTRAINT "quota_usage_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "review_items" ADD CONSTRAINT "review_items_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "review_items" ADD CONSTRAINT "review_items_decided_by_users_id_fk" FOREIGN KEY ("decided_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "translation_memory" ADD CONSTRAINT "translation_memory_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "translation_memory" ADD CONSTRAINT "translation_memory_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "api_keys_org_idx" ON "api_keys" USING btree ("org_id");--> statement-breakpoint
CREATE INDEX "api_keys_user_idx" ON "api_keys" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "audit_log_at_idx" ON "audit_log" USING btree ("at");--> statement-breakpoint
CREATE INDEX "audit_log_org_idx" ON "audit_log" USING btree ("org_id");--> statement-breakpoint
CREATE INDEX "audit_log_actor_idx" ON "audit_log" USING btree ("actor_user_id");--> statement-breakpoint
CREATE INDEX "billing_events_org_idx" ON "billing_events" USING btree ("org_id");--> statement-breakpoint
CREATE INDEX "fine_tuned_models_org_idx" ON "fine_tuned_models" USING btree ("org_id");--> statement-breakpoint
CREATE INDEX "invites_org_idx" ON "invites" USING btree ("org_id");--> statement-breakpoint
CREATE INDEX "jobs_ready_idx" ON "jobs" USING btree ("run_at") WHERE status in ('queued', 'running');--> statement-breakpoint
CREATE INDEX "jobs_finished_idx" ON "jobs" USING btree ("finished_at");--> statement-breakpoint
CREATE INDEX "memberships_user_idx" ON "memberships" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "rate_limit_windows_start_idx" ON "rate_limit_windows" USING btree ("window_start");--> statement-breakpoint
CREATE INDEX "review_items_org_idx" ON "review_items" USING btree ("org_id","status");--> statement-breakpoint
CREATE INDEX "review_items_created_idx" ON "review_items" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "sessions_user_idx" ON "sessions" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "sessions_expires_idx" ON "sessions" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "translation_memory_created_by_idx" ON "translation_memory" USING btree ("created_by");--> statement-breakpoint
CREATE INDEX "translation_memory_last_used_idx" ON "translation_memory" USING btree ("last_used_at");--> statement-breakpoint
CREATE INDEX "usage_events_created_idx" ON "usage_events" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "usage_events_org_idx" ON "usage_events" USING btree ("org_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "users_email_key" ON "users" USING btree (lower("email"));--> statement-breakpoint
-- Metering: ONE function decides every admission and settlement, alone or in a batch (group commit). The calls are
-- named JSON objects (the fields of domain/metering.ts's Admission and Settlement), not positional arguments.
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
-- Every admission stamps `reserved_at` on the rows it reserves on. Every live reservation is settled within one
-- upstream timeout of being made, so on a row whose last reservation is older than that (with a margin), anything
-- still reserved belongs to a process that died between admission and settlement: `meter_release_orphans` frees it.
CREATE FUNCTION meter(p_admissions json, p_settlements json)
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
--> statement-breakpoint
-- meter_release_orphans: frees reservations orphaned longer than p_older_than; returns how many counter rows were
-- released. It locks the rows it frees in the same key order as meter (a batch holds several counter rows at
-- once: an unordered multi-row UPDATE could deadlock with it).
CREATE FUNCTION meter_release_orphans(p_older_than interval) RETURNS integer LANGUAGE plpgsql AS $$
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
--> statement-breakpoint
-- The built-in plans (PLANS, upserted at serve/migrate, overrides or adds to them).
INSERT INTO plans (id, name, quota_tokens, period_days, daily_budget_micros) VALUES
  ('free', 'Free', 1000000, 30, 1000000),
  ('team', 'Team', 50000000, 30, 50000000),
  ('enterprise', 'Enterprise', 1000000000, 30, 1000000000)
ON CONFLICT (id) DO NOTHING;
--> statement-breakpoint
-- The API keys' revocation generation (one row).
INSERT INTO "api_key_generation" ("id", "generation") VALUES (1, 0) ON CONFLICT DO NOTHING;
