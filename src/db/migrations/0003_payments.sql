CREATE TABLE "devnet_transactions" (
	"seq" bigserial PRIMARY KEY NOT NULL,
	"block_timestamp" bigint NOT NULL,
	"raw" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "entitlements" (
	"wallet" text NOT NULL,
	"listing_id" uuid NOT NULL,
	"version" text NOT NULL,
	"purchase_id" uuid NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "entitlements_wallet_listing_id_version_pk" PRIMARY KEY("wallet","listing_id","version")
);
--> statement-breakpoint
CREATE TABLE "ledger_entries" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"creator_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"amount_micro" numeric(20, 0) NOT NULL,
	"fee_micro" numeric(20, 0) DEFAULT 0 NOT NULL,
	"purchase_id" uuid,
	"sweep_id" uuid,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "ledger_entries_positive" CHECK ("ledger_entries"."amount_micro" > 0)
);
--> statement-breakpoint
CREATE TABLE "payments" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"asset" text NOT NULL,
	"payer" text NOT NULL,
	"nonce" text NOT NULL,
	"network" text NOT NULL,
	"pay_to" text NOT NULL,
	"amount_micro" numeric(20, 0) NOT NULL,
	"listing_id" uuid NOT NULL,
	"creator_id" uuid NOT NULL,
	"version" text NOT NULL,
	"kind" text NOT NULL,
	"from_version" text,
	"update_price_micro" numeric(20, 0) NOT NULL,
	"source" text NOT NULL,
	"payload" jsonb NOT NULL,
	"requirements" jsonb NOT NULL,
	"valid_before" timestamp with time zone NOT NULL,
	"state" text NOT NULL,
	"lease_until" timestamp with time zone,
	"attempts" integer DEFAULT 0 NOT NULL,
	"transaction" text,
	"error_reason" text,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	"settled_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "payout_sweeps" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"creator_id" uuid NOT NULL,
	"address" text NOT NULL,
	"amount_micro" numeric(20, 0) NOT NULL,
	"state" text NOT NULL,
	"transaction" text,
	"error" text,
	"created_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "purchases" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"listing_id" uuid NOT NULL,
	"wallet" text NOT NULL,
	"version" text NOT NULL,
	"kind" text NOT NULL,
	"from_version" text,
	"amount_micro" numeric(20, 0) NOT NULL,
	"all_versions" boolean NOT NULL,
	"source" text NOT NULL,
	"payment_id" uuid,
	"transaction" text,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "entitlements" ADD CONSTRAINT "entitlements_listing_id_listings_id_fk" FOREIGN KEY ("listing_id") REFERENCES "public"."listings"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "entitlements" ADD CONSTRAINT "entitlements_purchase_id_purchases_id_fk" FOREIGN KEY ("purchase_id") REFERENCES "public"."purchases"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_creator_id_creators_id_fk" FOREIGN KEY ("creator_id") REFERENCES "public"."creators"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_purchase_id_purchases_id_fk" FOREIGN KEY ("purchase_id") REFERENCES "public"."purchases"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payments" ADD CONSTRAINT "payments_listing_id_listings_id_fk" FOREIGN KEY ("listing_id") REFERENCES "public"."listings"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payments" ADD CONSTRAINT "payments_creator_id_creators_id_fk" FOREIGN KEY ("creator_id") REFERENCES "public"."creators"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payout_sweeps" ADD CONSTRAINT "payout_sweeps_creator_id_creators_id_fk" FOREIGN KEY ("creator_id") REFERENCES "public"."creators"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "purchases" ADD CONSTRAINT "purchases_listing_id_listings_id_fk" FOREIGN KEY ("listing_id") REFERENCES "public"."listings"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "purchases" ADD CONSTRAINT "purchases_payment_id_payments_id_fk" FOREIGN KEY ("payment_id") REFERENCES "public"."payments"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "entitlements_wallet_page" ON "entitlements" USING btree ("wallet","created_at","listing_id","version");--> statement-breakpoint
CREATE INDEX "ledger_entries_creator" ON "ledger_entries" USING btree ("creator_id");--> statement-breakpoint
CREATE UNIQUE INDEX "ledger_entries_purchase" ON "ledger_entries" USING btree ("purchase_id");--> statement-breakpoint
CREATE UNIQUE INDEX "payments_authorization" ON "payments" USING btree ("asset","payer","nonce");--> statement-breakpoint
CREATE INDEX "payments_state" ON "payments" USING btree ("state","updated_at");--> statement-breakpoint
CREATE INDEX "payout_sweeps_state" ON "payout_sweeps" USING btree ("state");--> statement-breakpoint
CREATE UNIQUE INDEX "purchases_payment" ON "purchases" USING btree ("payment_id");--> statement-breakpoint
CREATE INDEX "purchases_wallet_listing" ON "purchases" USING btree ("wallet","listing_id");