CREATE TABLE "deploy_keys" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"listing_id" uuid NOT NULL,
	"fingerprint" text NOT NULL,
	"algorithm" text NOT NULL,
	"public_key" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "listings" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"creator_id" uuid NOT NULL,
	"owner" text NOT NULL,
	"slug" text NOT NULL,
	"source" text NOT NULL,
	"status" text DEFAULT 'draft' NOT NULL,
	"price_micro" numeric(20, 0),
	"update_price_micro" numeric(20, 0) DEFAULT 0 NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"trigger_hint" text DEFAULT '' NOT NULL,
	"licence" text,
	"created_at" timestamp with time zone NOT NULL,
	"published_at" timestamp with time zone,
	"retired_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "release_cuts" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"listing_id" uuid NOT NULL,
	"version" text NOT NULL,
	"tag" text NOT NULL,
	"commit_sha" text NOT NULL,
	"trigger" text NOT NULL,
	"state" text DEFAULT 'queued' NOT NULL,
	"failure_reason" text,
	"requested_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "releases" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"listing_id" uuid NOT NULL,
	"version" text NOT NULL,
	"major" integer NOT NULL,
	"minor" integer NOT NULL,
	"patch" integer NOT NULL,
	"tag" text NOT NULL,
	"commit_sha" text NOT NULL,
	"artifact_key" text NOT NULL,
	"artifact_sha256" text NOT NULL,
	"size_bytes" bigint NOT NULL,
	"sbom_key" text,
	"published_at" timestamp with time zone NOT NULL,
	"changelog" text NOT NULL,
	"diff_summary" jsonb,
	"computed" jsonb,
	"scan" jsonb,
	"verdict" text DEFAULT 'pending' NOT NULL,
	"analyzer_version" text,
	"scanner_version" text,
	"price_micro" numeric(20, 0),
	"update_price_micro" numeric(20, 0) NOT NULL
);
--> statement-breakpoint
ALTER TABLE "deploy_keys" ADD CONSTRAINT "deploy_keys_listing_id_listings_id_fk" FOREIGN KEY ("listing_id") REFERENCES "public"."listings"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "listings" ADD CONSTRAINT "listings_creator_id_creators_id_fk" FOREIGN KEY ("creator_id") REFERENCES "public"."creators"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "release_cuts" ADD CONSTRAINT "release_cuts_listing_id_listings_id_fk" FOREIGN KEY ("listing_id") REFERENCES "public"."listings"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "releases" ADD CONSTRAINT "releases_listing_id_listings_id_fk" FOREIGN KEY ("listing_id") REFERENCES "public"."listings"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "deploy_keys_live_listing" ON "deploy_keys" USING btree ("listing_id") WHERE "deploy_keys"."revoked_at" is null;--> statement-breakpoint
CREATE INDEX "deploy_keys_fingerprint" ON "deploy_keys" USING btree ("fingerprint");--> statement-breakpoint
CREATE UNIQUE INDEX "listings_owner_slug" ON "listings" USING btree ("owner","slug");--> statement-breakpoint
CREATE INDEX "listings_creator_created" ON "listings" USING btree ("creator_id","created_at","id");--> statement-breakpoint
CREATE UNIQUE INDEX "release_cuts_listing_version" ON "release_cuts" USING btree ("listing_id","version");--> statement-breakpoint
CREATE INDEX "release_cuts_state" ON "release_cuts" USING btree ("state");--> statement-breakpoint
CREATE UNIQUE INDEX "releases_listing_version" ON "releases" USING btree ("listing_id","version");--> statement-breakpoint
CREATE INDEX "releases_listing_order" ON "releases" USING btree ("listing_id","major","minor","patch");