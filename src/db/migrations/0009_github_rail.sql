CREATE TABLE "github_deliveries" (
	"delivery_id" text PRIMARY KEY NOT NULL,
	"event" text NOT NULL,
	"received_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "tag_changes" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"listing_id" uuid NOT NULL,
	"tag" text NOT NULL,
	"released_commit_sha" text NOT NULL,
	"commit_sha" text,
	"seen_at" timestamp with time zone NOT NULL,
	CONSTRAINT "tag_changes_listing_tag_commit" UNIQUE NULLS NOT DISTINCT("listing_id","tag","commit_sha")
);
--> statement-breakpoint
ALTER TABLE "listings" ADD COLUMN "github_installation_id" bigint;--> statement-breakpoint
ALTER TABLE "listings" ADD COLUMN "github_repo_id" bigint;--> statement-breakpoint
ALTER TABLE "listings" ADD COLUMN "github_repo" text;--> statement-breakpoint
ALTER TABLE "listings" ADD COLUMN "source_state" text DEFAULT 'ok' NOT NULL;--> statement-breakpoint
ALTER TABLE "listings" ADD COLUMN "source_state_reason" text;--> statement-breakpoint
ALTER TABLE "listings" ADD COLUMN "source_state_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "tag_changes" ADD CONSTRAINT "tag_changes_listing_id_listings_id_fk" FOREIGN KEY ("listing_id") REFERENCES "public"."listings"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "listings_github_repo_live" ON "listings" USING btree ("github_repo_id") WHERE "listings"."github_repo_id" is not null and "listings"."status" <> 'retired';--> statement-breakpoint
CREATE INDEX "listings_github_installation" ON "listings" USING btree ("github_installation_id");--> statement-breakpoint
ALTER TABLE "listings" ADD CONSTRAINT "listings_github_source" CHECK (("listings"."source" = 'github') = ("listings"."github_repo_id" is not null and "listings"."github_installation_id" is not null));