CREATE TABLE "devnet_faucet_grants" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"address" text NOT NULL,
	"amount_micro" numeric(20, 0) NOT NULL,
	"transaction" text,
	"granted_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "devnet_faucet_grants_address" ON "devnet_faucet_grants" USING btree ("address","granted_at");--> statement-breakpoint
CREATE INDEX "devnet_faucet_grants_time" ON "devnet_faucet_grants" USING btree ("granted_at");