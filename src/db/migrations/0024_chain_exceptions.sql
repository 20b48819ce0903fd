CREATE TABLE "chain_checkpoint" (
	"id" integer PRIMARY KEY DEFAULT 1 NOT NULL,
	"block" bigint NOT NULL,
	"at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "chain_checkpoint_one_row" CHECK ("chain_checkpoint"."id" = 1)
);
--> statement-breakpoint
CREATE TABLE "unattributed_sales" (
	"transaction" text PRIMARY KEY NOT NULL,
	"payer" text NOT NULL,
	"nonce" text NOT NULL,
	"amount_micro" numeric(20, 0) NOT NULL,
	"valid_after" timestamp with time zone NOT NULL,
	"valid_before" timestamp with time zone NOT NULL,
	"at" timestamp with time zone NOT NULL,
	"reason" text NOT NULL,
	"found_at" timestamp with time zone NOT NULL,
	"resolution" text,
	"payment_id" uuid,
	"note" text,
	"resolved_at" timestamp with time zone,
	CONSTRAINT "unattributed_sales_resolution" CHECK (("unattributed_sales"."resolution" is null and "unattributed_sales"."resolved_at" is null)
        or ("unattributed_sales"."resolution" = 'granted' and "unattributed_sales"."resolved_at" is not null and "unattributed_sales"."payment_id" is not null)
        or ("unattributed_sales"."resolution" = 'refunded' and "unattributed_sales"."resolved_at" is not null and "unattributed_sales"."note" is not null))
);
--> statement-breakpoint
CREATE TABLE "unresolved_transfers_out" (
	"transaction" text PRIMARY KEY NOT NULL,
	"to_address" text NOT NULL,
	"amount_micro" numeric(20, 0) NOT NULL,
	"at" timestamp with time zone NOT NULL,
	"found_at" timestamp with time zone NOT NULL,
	"resolution" text,
	"creator_id" uuid,
	"sweep_id" uuid,
	"reason" text,
	"resolved_at" timestamp with time zone,
	CONSTRAINT "unresolved_transfers_out_resolution" CHECK (("unresolved_transfers_out"."resolution" is null and "unresolved_transfers_out"."resolved_at" is null)
        or ("unresolved_transfers_out"."resolution" = 'payout' and "unresolved_transfers_out"."resolved_at" is not null and "unresolved_transfers_out"."creator_id" is not null and "unresolved_transfers_out"."sweep_id" is not null)
        or ("unresolved_transfers_out"."resolution" = 'not_a_payout' and "unresolved_transfers_out"."resolved_at" is not null and "unresolved_transfers_out"."reason" is not null))
);
--> statement-breakpoint
ALTER TABLE "unattributed_sales" ADD CONSTRAINT "unattributed_sales_payment_id_payments_id_fk" FOREIGN KEY ("payment_id") REFERENCES "public"."payments"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "unresolved_transfers_out" ADD CONSTRAINT "unresolved_transfers_out_creator_id_creators_id_fk" FOREIGN KEY ("creator_id") REFERENCES "public"."creators"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "unresolved_transfers_out" ADD CONSTRAINT "unresolved_transfers_out_sweep_id_payout_sweeps_id_fk" FOREIGN KEY ("sweep_id") REFERENCES "public"."payout_sweeps"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "unattributed_sales_open" ON "unattributed_sales" USING btree ("at") WHERE "unattributed_sales"."resolution" is null;--> statement-breakpoint
CREATE INDEX "unresolved_transfers_out_open" ON "unresolved_transfers_out" USING btree ("at") WHERE "unresolved_transfers_out"."resolution" is null;