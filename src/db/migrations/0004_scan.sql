CREATE TABLE "advisories" (
	"id" text PRIMARY KEY NOT NULL,
	"modified" timestamp with time zone NOT NULL,
	"withdrawn" timestamp with time zone,
	"summary" text NOT NULL,
	"severity" text,
	"cvss_score" double precision,
	"malicious" boolean NOT NULL,
	"aliases" jsonb NOT NULL,
	"record" jsonb NOT NULL,
	"imported_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "advisory_packages" (
	"advisory_id" text NOT NULL,
	"position" integer NOT NULL,
	"ecosystem" text NOT NULL,
	"name" text NOT NULL,
	"ranges" jsonb NOT NULL,
	"versions" jsonb NOT NULL,
	CONSTRAINT "advisory_packages_advisory_id_position_pk" PRIMARY KEY("advisory_id","position")
);
--> statement-breakpoint
CREATE TABLE "release_blob_sets" (
	"listing_id" text NOT NULL,
	"version" text NOT NULL,
	"channel" text NOT NULL,
	"blobs_total" integer NOT NULL,
	"recorded_at" timestamp with time zone NOT NULL,
	CONSTRAINT "release_blob_sets_listing_id_version_pk" PRIMARY KEY("listing_id","version")
);
--> statement-breakpoint
CREATE TABLE "release_blobs" (
	"listing_id" text NOT NULL,
	"version" text NOT NULL,
	"blob_sha" text NOT NULL,
	CONSTRAINT "release_blobs_listing_id_version_blob_sha_pk" PRIMARY KEY("listing_id","version","blob_sha")
);
--> statement-breakpoint
ALTER TABLE "advisory_packages" ADD CONSTRAINT "advisory_packages_advisory_id_advisories_id_fk" FOREIGN KEY ("advisory_id") REFERENCES "public"."advisories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "advisory_packages_lookup" ON "advisory_packages" USING btree ("ecosystem","name");--> statement-breakpoint
CREATE INDEX "release_blobs_sha" ON "release_blobs" USING btree ("blob_sha");