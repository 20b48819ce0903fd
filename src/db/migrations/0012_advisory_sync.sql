CREATE TABLE "advisory_sync" (
	"ecosystem" text PRIMARY KEY NOT NULL,
	"url" text NOT NULL,
	"etag" text,
	"last_modified" text,
	"imported_at" timestamp with time zone,
	"dataset_stamp" text,
	"checked_at" timestamp with time zone NOT NULL,
	"error" text
);
--> statement-breakpoint
ALTER TABLE "releases" ADD COLUMN "advisory_flag" jsonb;--> statement-breakpoint
ALTER TABLE "releases" ADD COLUMN "advisory_flagged_at" timestamp with time zone;