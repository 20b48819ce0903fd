ALTER TABLE "payments" ADD COLUMN "duplicate" boolean DEFAULT false NOT NULL;--> statement-breakpoint
-- Payments made before this rule may already double a purchase: the earliest of each group keeps
-- the slot, the others are flagged as duplicates (refund candidates) so the index can be built.
UPDATE "payments" AS "p" SET "duplicate" = true
WHERE "p"."state" in ('settling', 'settled') AND EXISTS (
  SELECT 1 FROM "payments" AS "q"
  WHERE "q"."listing_id" = "p"."listing_id" AND "q"."payer" = "p"."payer" AND "q"."version" = "p"."version"
    AND "q"."state" in ('settling', 'settled') AND ("q"."created_at", "q"."id") < ("p"."created_at", "p"."id")
);--> statement-breakpoint
CREATE UNIQUE INDEX "payments_one_per_version" ON "payments" USING btree ("listing_id","payer","version") WHERE "payments"."state" in ('settling', 'settled') and not "payments"."duplicate";
