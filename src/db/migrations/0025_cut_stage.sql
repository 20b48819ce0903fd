ALTER TABLE "release_cuts" ADD COLUMN "stage" text;--> statement-breakpoint
ALTER TABLE "release_cuts" ADD COLUMN "stage_at" timestamp with time zone;