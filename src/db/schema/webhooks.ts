import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { at } from './columns.js';
import { creators } from './identity.js';
import { listings } from './listings.js';

/**
 * Signed webhooks (docs/WEBHOOKS.md). A subscription belongs to a creator (API key) or to a
 * holder's wallet; its signing secret is kept sealed under a key derived from the app secret,
 * because it must be read to sign (it cannot be stored hashed).
 */
export const webhookSubscriptions = pgTable(
  'webhook_subscriptions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    kind: text('kind', { enum: ['creator', 'holder'] }).notNull(),
    creatorId: uuid('creator_id').references(() => creators.id),
    /** A holder's wallet, lower case. */
    wallet: text('wallet'),
    /** A holder's subscription may be limited to one listing it holds; null means every listing it holds. */
    listingId: uuid('listing_id').references(() => listings.id),
    url: text('url').notNull(),
    events: jsonb('events').$type<string[]>().notNull(),
    sealedSecret: text('sealed_secret').notNull(),
    createdAt: at('created_at').notNull(),
    /** Failed deliveries in a row; a success resets it. */
    consecutiveFailures: integer('consecutive_failures').notNull().default(0),
    disabledAt: at('disabled_at'),
    disabledReason: text('disabled_reason'),
  },
  (table) => [
    index('webhook_subscriptions_creator').on(table.creatorId),
    index('webhook_subscriptions_wallet').on(table.wallet),
  ],
);

/**
 * An event, written in the transaction that causes it (`enqueueWebhookEvent`), fanned out to the
 * matching subscriptions after commit. Its id is the Standard Webhooks `webhook-id`.
 */
export const webhookEvents = pgTable(
  'webhook_events',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    type: text('type').notNull(),
    /** `creator`: the listing's creator hears it; `holders`: wallets holding the listing (or `version`). */
    audience: text('audience', { enum: ['creator', 'holders'] }).notNull(),
    creatorId: uuid('creator_id').references(() => creators.id),
    listingId: uuid('listing_id').references(() => listings.id),
    /** For holders: only wallets entitled to this version hear it (an advisory, a yank). */
    version: text('version'),
    data: jsonb('data').notNull(),
    /** At most one event per key (a sale per purchase, a cut per release and verdict). */
    dedupeKey: text('dedupe_key'),
    createdAt: at('created_at').notNull(),
    fannedOutAt: at('fanned_out_at'),
  },
  (table) => [
    uniqueIndex('webhook_events_dedupe_key').on(table.dedupeKey),
    index('webhook_events_pending').on(table.createdAt).where(sql`${table.fannedOutAt} is null`),
  ],
);

/** One event for one subscription: its attempts and their last outcome (the subscriber's delivery log). */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    eventId: uuid('event_id')
      .notNull()
      .references(() => webhookEvents.id),
    subscriptionId: uuid('subscription_id')
      .notNull()
      .references(() => webhookSubscriptions.id, { onDelete: 'cascade' }),
    /** `pending` (to try, at `next_attempt_at`), `delivered`, or `failed` (gave up). */
    state: text('state', { enum: ['pending', 'delivered', 'failed'] }).notNull(),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: at('next_attempt_at'),
    lastAttemptAt: at('last_attempt_at'),
    lastStatus: integer('last_status'),
    lastError: text('last_error'),
    createdAt: at('created_at').notNull(),
    deliveredAt: at('delivered_at'),
  },
  (table) => [
    uniqueIndex('webhook_deliveries_event_subscription').on(table.eventId, table.subscriptionId),
    index('webhook_deliveries_subscription').on(table.subscriptionId, table.createdAt),
    index('webhook_deliveries_due').on(table.nextAttemptAt).where(sql`${table.state} = 'pending'`),
  ],
);
