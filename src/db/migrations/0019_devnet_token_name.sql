-- Journalled before the devnet token had its own EIP-712 name: those were signed as real USDC's.
ALTER TABLE "devnet_transactions" ADD COLUMN "token_name" text NOT NULL DEFAULT 'USD Coin';--> statement-breakpoint
ALTER TABLE "devnet_transactions" ALTER COLUMN "token_name" DROP DEFAULT;
