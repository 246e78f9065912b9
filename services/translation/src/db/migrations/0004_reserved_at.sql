ALTER TABLE "budget_usage" ADD COLUMN "reserved_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "quota_usage" ADD COLUMN "reserved_at" timestamp with time zone;