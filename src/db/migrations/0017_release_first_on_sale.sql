ALTER TABLE "releases" ADD COLUMN "on_sale_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "releases" ADD COLUMN "on_sale_price_micro" numeric(20, 0);--> statement-breakpoint
ALTER TABLE "releases" ADD COLUMN "on_sale_update_price_micro" numeric(20, 0);--> statement-breakpoint
-- What went on sale before this column existed: the newest passing release at publish, and every
-- passing release cut after it, at the prices the release recorded (those in force when it was cut,
-- or at publish for one cut before).
UPDATE "releases" AS "r"
SET "on_sale_at" = greatest("r"."published_at", "l"."published_at"),
  "on_sale_price_micro" = "r"."price_micro",
  "on_sale_update_price_micro" = "r"."update_price_micro"
FROM "listings" AS "l"
WHERE "l"."id" = "r"."listing_id"
  AND "l"."published_at" IS NOT NULL
  AND "r"."verdict" = 'pass'
  AND "r"."price_micro" IS NOT NULL
  AND ("r"."published_at" >= "l"."published_at"
    OR "r"."id" = (SELECT "before"."id" FROM "releases" AS "before"
      WHERE "before"."listing_id" = "l"."id" AND "before"."verdict" = 'pass'
        AND "before"."published_at" < "l"."published_at"
      ORDER BY "before"."major" DESC, "before"."minor" DESC, "before"."patch" DESC LIMIT 1));
