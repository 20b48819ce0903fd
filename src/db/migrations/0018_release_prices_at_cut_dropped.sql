ALTER TABLE "releases" DROP COLUMN "price_micro";--> statement-breakpoint
ALTER TABLE "releases" DROP COLUMN "update_price_micro";