CREATE TABLE "api_key_generation" (
	"id" integer PRIMARY KEY NOT NULL,
	"generation" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
INSERT INTO "api_key_generation" ("id", "generation") VALUES (1, 0) ON CONFLICT DO NOTHING;
