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
ALTER TABLE "organizations" ADD COLUMN "memory_enabled" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "translation_memory" ADD CONSTRAINT "translation_memory_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "translation_memory" ADD CONSTRAINT "translation_memory_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "translation_memory_created_by_idx" ON "translation_memory" USING btree ("created_by");--> statement-breakpoint
CREATE INDEX "translation_memory_last_used_idx" ON "translation_memory" USING btree ("last_used_at");