ALTER TABLE "releases" ALTER COLUMN "artifact_key" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "releases" ALTER COLUMN "artifact_sha256" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "releases" ALTER COLUMN "size_bytes" DROP NOT NULL;--> statement-breakpoint
CREATE INDEX "release_cuts_listing_requested" ON "release_cuts" USING btree ("listing_id","requested_at");--> statement-breakpoint
CREATE INDEX "releases_artifact" ON "releases" USING btree ("artifact_sha256");--> statement-breakpoint
ALTER TABLE "releases" ADD CONSTRAINT "releases_artifact_whole" CHECK (("releases"."artifact_key" is null) = ("releases"."artifact_sha256" is null) and ("releases"."artifact_key" is null) = ("releases"."size_bytes" is null) and ("releases"."artifact_key" is not null or "releases"."verdict" = 'fail'));