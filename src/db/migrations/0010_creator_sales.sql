DROP INDEX "ledger_entries_creator";--> statement-breakpoint
CREATE INDEX "ledger_entries_creator_page" ON "ledger_entries" USING btree ("creator_id","created_at","id");--> statement-breakpoint
CREATE INDEX "payments_creator" ON "payments" USING btree ("creator_id");--> statement-breakpoint
CREATE INDEX "payout_sweeps_creator_page" ON "payout_sweeps" USING btree ("creator_id","created_at","id");--> statement-breakpoint
CREATE INDEX "purchases_listing_page" ON "purchases" USING btree ("listing_id","created_at","id");