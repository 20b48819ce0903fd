import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  boolean,
  check,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { at, micro } from './columns.js';
import { creators } from './identity.js';
import { listings } from './listings.js';

/**
 * One EIP-3009 authorization we were asked to settle (DESIGN.md item 8). The row is written
 * before `settle` is called; its unique key (asset, payer, nonce) is the replay guard, so one
 * authorization can never become two purchases. `settling` rows are driven to `settled` by a
 * retry with the same authorization or by the reconciler; `failed` ones may be retried.
 * Addresses are stored lower case.
 */
export const payments = pgTable(
  'payments',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    asset: text('asset').notNull(),
    payer: text('payer').notNull(),
    nonce: text('nonce').notNull(),
    network: text('network').notNull(),
    payTo: text('pay_to').notNull(),
    amountMicro: micro('amount_micro').notNull(),
    listingId: uuid('listing_id')
      .notNull()
      .references(() => listings.id),
    /** Whose ledger the settled amount is credited to. */
    creatorId: uuid('creator_id')
      .notNull()
      .references(() => creators.id),
    version: text('version').notNull(),
    kind: text('kind', { enum: ['new', 'update'] }).notNull(),
    fromVersion: text('from_version'),
    /** The update price in force when quoted: `0` stamps the purchase `all_versions`. */
    updatePriceMicro: micro('update_price_micro').notNull(),
    source: text('source', { enum: ['http', 'mcp'] }).notNull(),
    /** The x402 PaymentPayload and PaymentRequirements, replayed verbatim to the facilitator. */
    payload: jsonb('payload').notNull(),
    requirements: jsonb('requirements').notNull(),
    validBefore: at('valid_before').notNull(),
    state: text('state', { enum: ['settling', 'settled', 'failed'] }).notNull(),
    /** While in the future, one request or job is driving this row; others wait or answer pending. */
    leaseUntil: at('lease_until'),
    attempts: integer('attempts').notNull().default(0),
    transaction: text('transaction'),
    errorReason: text('error_reason'),
    createdAt: at('created_at').notNull(),
    updatedAt: at('updated_at').notNull(),
    settledAt: at('settled_at'),
    /**
     * A payment for a version its payer had already paid for that reached the chain anyway: made
     * before the one-payment-per-version rule existed (marked by migration 0007), or executed by
     * the payer itself after we had refused it. Recorded and credited like any payment, flagged
     * for a refund, and outside the rule's index.
     */
    duplicate: boolean('duplicate').notNull().default(false),
  },
  (table) => [
    uniqueIndex('payments_authorization').on(table.asset, table.payer, table.nonce),
    /**
     * One buyer pays at most once for one version of one listing: while a payment for it is
     * settling or settled, a second authorization (another nonce, another process) cannot get a
     * row, so it is never sent to the facilitator. A failed payment frees the slot.
     */
    uniqueIndex('payments_one_per_version')
      .on(table.listingId, table.payer, table.version)
      .where(sql`${table.state} in ('settling', 'settled') and not ${table.duplicate}`),
    index('payments_state').on(table.state, table.updatedAt),
    /** A creator's sales (GET /api/creators/me/sales) start from the payments credited to them. */
    index('payments_creator').on(table.creatorId),
    /**
     * One transfer on chain pays one payment: a sale recovered from the chain after a restore
     * (`repo402 reconcile`) can be recorded once only, however many processes find it.
     */
    uniqueIndex('payments_transaction').on(table.transaction).where(sql`${table.transaction} is not null`),
  ],
);

/** A grant of one version to one wallet: paid (with its payment) or free. */
export const purchases = pgTable(
  'purchases',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    listingId: uuid('listing_id')
      .notNull()
      .references(() => listings.id),
    wallet: text('wallet').notNull(),
    version: text('version').notNull(),
    kind: text('kind', { enum: ['new', 'update'] }).notNull(),
    fromVersion: text('from_version'),
    amountMicro: micro('amount_micro').notNull(),
    /** Made while the update price was 0: every later version is the holder's too. */
    allVersions: boolean('all_versions').notNull(),
    source: text('source', { enum: ['http', 'mcp'] }).notNull(),
    paymentId: uuid('payment_id').references(() => payments.id),
    transaction: text('transaction'),
    createdAt: at('created_at').notNull(),
  },
  (table) => [
    uniqueIndex('purchases_payment').on(table.paymentId),
    index('purchases_wallet_listing').on(table.wallet, table.listingId),
    /** One listing's sales, newest first (`?listing_id=`). */
    index('purchases_listing_page').on(table.listingId, table.createdAt, table.id),
    /** A listing's buyers (a wallet's first purchase of a listing is its one `new`), counted from the index alone. */
    index('purchases_listing_buyers').on(table.listingId).where(sql`${table.kind} = 'new'`),
  ],
);

/** Versions a wallet holds. `all_versions` purchases also entitle later versions (see entitlements.ts). */
export const entitlements = pgTable(
  'entitlements',
  {
    wallet: text('wallet').notNull(),
    listingId: uuid('listing_id')
      .notNull()
      .references(() => listings.id),
    version: text('version').notNull(),
    purchaseId: uuid('purchase_id')
      .notNull()
      .references(() => purchases.id),
    createdAt: at('created_at').notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.wallet, table.listingId, table.version] }),
    index('entitlements_wallet_page').on(table.wallet, table.createdAt, table.listingId, table.version),
  ],
);

/**
 * The creators' ledger: a `credit` per settled purchase (net of the platform fee) and a `sweep`
 * per payout, with `sweep_reversal` when a payout transfer definitively failed. A creator's
 * balance is credits − sweeps + reversals; amounts are always positive.
 */
export const ledgerEntries = pgTable(
  'ledger_entries',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    creatorId: uuid('creator_id')
      .notNull()
      .references(() => creators.id),
    kind: text('kind', { enum: ['credit', 'sweep', 'sweep_reversal'] }).notNull(),
    amountMicro: micro('amount_micro').notNull(),
    feeMicro: micro('fee_micro').notNull().default(sql`0`),
    purchaseId: uuid('purchase_id').references(() => purchases.id),
    sweepId: uuid('sweep_id'),
    createdAt: at('created_at').notNull(),
  },
  (table) => [
    /** A creator's balance, and its entries newest first (GET /api/creators/me/ledger). */
    index('ledger_entries_creator_page').on(table.creatorId, table.createdAt, table.id),
    uniqueIndex('ledger_entries_purchase').on(table.purchaseId),
    check('ledger_entries_positive', sql`${table.amountMicro} > 0`),
  ],
);

/**
 * A payout of a creator's balance to the payout address in force when it was made. `transaction`
 * and `raw_transaction` are written when the transfer is signed, before it is sent, so a sweep
 * whose outcome was lost is settled from the chain (or the same bytes sent again), never paid twice.
 */
export const payoutSweeps = pgTable(
  'payout_sweeps',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    creatorId: uuid('creator_id')
      .notNull()
      .references(() => creators.id),
    address: text('address').notNull(),
    amountMicro: micro('amount_micro').notNull(),
    state: text('state', { enum: ['sending', 'sent', 'failed'] }).notNull(),
    transaction: text('transaction'),
    rawTransaction: text('raw_transaction'),
    error: text('error'),
    createdAt: at('created_at').notNull(),
    finishedAt: at('finished_at'),
  },
  (table) => [
    index('payout_sweeps_state').on(table.state),
    /** A creator's payouts, newest first (GET /api/creators/me/payouts). */
    index('payout_sweeps_creator_page').on(table.creatorId, table.createdAt, table.id),
    /**
     * One transfer on chain is one payout: a payout recovered from the chain after a restore is
     * recorded (and debited) once only, and the balance it paid is never swept again.
     */
    uniqueIndex('payout_sweeps_transaction')
      .on(table.transaction)
      .where(sql`${table.transaction} is not null`),
  ],
);

/**
 * The devnet chain's write-ahead journal: every raw transaction, in order, with the block
 * timestamp it was mined at. Replaying it at start rebuilds the chain exactly, so a restart never
 * forgets who paid.
 */
export const devnetTransactions = pgTable('devnet_transactions', {
  seq: bigserial('seq', { mode: 'number' }).primaryKey(),
  blockTimestamp: bigint('block_timestamp', { mode: 'number' }).notNull(),
  raw: text('raw').notNull(),
  /**
   * The token's EIP-712 domain name when the transaction was sent: replayed under the same name, so
   * authorizations signed before the devnet had its own name (real USDC's) replay as they mined.
   */
  tokenName: text('token_name').notNull(),
  createdAt: at('created_at').notNull(),
});

/**
 * Test USDC handed out by the devnet faucet, one row per grant: the caps per address and per day
 * are counted here, under a lock, so they hold across processes.
 */
export const devnetFaucetGrants = pgTable(
  'devnet_faucet_grants',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    /** Lower case. */
    address: text('address').notNull(),
    amountMicro: micro('amount_micro').notNull(),
    /** Null while the grant is being sent: the row reserves its place under the caps first. */
    transaction: text('transaction'),
    grantedAt: at('granted_at').notNull(),
  },
  (table) => [
    index('devnet_faucet_grants_address').on(table.address, table.grantedAt),
    index('devnet_faucet_grants_time').on(table.grantedAt),
  ],
);

/**
 * A transfer out of `payTo` that the chain shows and the database could not attribute: not a
 * known sweep, and not to a payout address any creator had in force then (a payout address
 * changed after the backup the database was restored from, or the operator moving funds). While
 * one is unresolved the payout sweep sends nothing: it may be a payout the database forgot, and
 * sweeping that balance again would pay it twice. The operator resolves it as a creator's payout
 * (a `sent` sweep with its debit) or as no payout (`repo402 payouts resolve`).
 */
export const unresolvedTransfersOut = pgTable(
  'unresolved_transfers_out',
  {
    transaction: text('transaction').primaryKey(),
    /** Lower case. */
    toAddress: text('to_address').notNull(),
    amountMicro: micro('amount_micro').notNull(),
    /** The block's time. */
    at: at('at').notNull(),
    foundAt: at('found_at').notNull(),
    resolution: text('resolution', { enum: ['payout', 'not_a_payout'] }),
    creatorId: uuid('creator_id').references(() => creators.id),
    sweepId: uuid('sweep_id').references(() => payoutSweeps.id),
    reason: text('reason'),
    resolvedAt: at('resolved_at'),
  },
  (table) => [
    index('unresolved_transfers_out_open').on(table.at).where(sql`${table.resolution} is null`),
    check(
      'unresolved_transfers_out_resolution',
      sql`(${table.resolution} is null and ${table.resolvedAt} is null)
        or (${table.resolution} = 'payout' and ${table.resolvedAt} is not null and ${table.creatorId} is not null and ${table.sweepId} is not null)
        or (${table.resolution} = 'not_a_payout' and ${table.resolvedAt} is not null and ${table.reason} is not null)`,
    ),
  ],
);

/**
 * A sale the chain shows (an authorization's transfer to `payTo`) that the reconciliation after a
 * restore could not tie to exactly one listing and version (D-154): kept until the operator grants
 * it (a payment row settled through the one settlement statement) or records a refund made by hand.
 */
export const unattributedSales = pgTable(
  'unattributed_sales',
  {
    transaction: text('transaction').primaryKey(),
    /** Lower case. */
    payer: text('payer').notNull(),
    nonce: text('nonce').notNull(),
    amountMicro: micro('amount_micro').notNull(),
    validAfter: at('valid_after').notNull(),
    validBefore: at('valid_before').notNull(),
    /** The block's time. */
    at: at('at').notNull(),
    /** Why the reconciliation could not attribute it. */
    reason: text('reason').notNull(),
    foundAt: at('found_at').notNull(),
    resolution: text('resolution', { enum: ['granted', 'refunded'] }),
    paymentId: uuid('payment_id').references(() => payments.id),
    note: text('note'),
    resolvedAt: at('resolved_at'),
  },
  (table) => [
    index('unattributed_sales_open').on(table.at).where(sql`${table.resolution} is null`),
    check(
      'unattributed_sales_resolution',
      sql`(${table.resolution} is null and ${table.resolvedAt} is null)
        or (${table.resolution} = 'granted' and ${table.resolvedAt} is not null and ${table.paymentId} is not null)
        or (${table.resolution} = 'refunded' and ${table.resolvedAt} is not null and ${table.note} is not null)`,
    ),
  ],
);

/**
 * How far this database is known to agree with the chain: the newest block a start-up check or a
 * reconciliation read the token's transfers to. One row. A database restored from a backup brings
 * the backup's row back with it, so the next start reads the chain from there.
 */
export const chainCheckpoint = pgTable(
  'chain_checkpoint',
  {
    id: integer('id').primaryKey().default(1),
    block: bigint('block', { mode: 'bigint' }).notNull(),
    at: at('at').notNull(),
    updatedAt: at('updated_at').notNull(),
  },
  (table) => [check('chain_checkpoint_one_row', sql`${table.id} = 1`)],
);
