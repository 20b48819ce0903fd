ALTER TABLE "github_deliveries" ADD COLUMN "content_sha256" text;--> statement-breakpoint
CREATE INDEX "github_deliveries_content" ON "github_deliveries" USING btree ("content_sha256","received_at");