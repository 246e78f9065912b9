CREATE TABLE "translation_memory_files" (
	"org_id" text NOT NULL,
	"digest" "bytea" NOT NULL,
	"generation" bigint NOT NULL,
	"format" text NOT NULL,
	"source_locale" text NOT NULL,
	"target_locale" text NOT NULL,
	"answer" "bytea" NOT NULL,
	"entry_keys" "bytea" NOT NULL,
	"created_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "translation_memory_files_org_id_digest_pk" PRIMARY KEY("org_id","digest")
);
--> statement-breakpoint
ALTER TABLE "organizations" ADD COLUMN "memory_generation" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "translation_memory_files" ADD CONSTRAINT "translation_memory_files_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "translation_memory_files" ADD CONSTRAINT "translation_memory_files_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "translation_memory_files_created_by_idx" ON "translation_memory_files" USING btree ("created_by");--> statement-breakpoint
CREATE INDEX "translation_memory_files_last_used_idx" ON "translation_memory_files" USING btree ("last_used_at");