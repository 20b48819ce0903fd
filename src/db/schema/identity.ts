import { index, integer, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { at } from './columns.js';

/** Single-use invite codes for API registration. Only the SHA-256 of a code is kept. */
export const invites = pgTable('invites', {
  id: uuid('id').primaryKey().defaultRandom(),
  codeHash: text('code_hash').notNull().unique(),
  createdAt: at('created_at').notNull().defaultNow(),
  usedAt: at('used_at'),
  usedBy: text('used_by'),
});

/**
 * A creator as registered. `payout_address` and `abuse_contact` are the values given at
 * registration; later values live in `creator_changes` and are in force from their `effective_at`.
 */
export const creators = pgTable('creators', {
  id: uuid('id').primaryKey().defaultRandom(),
  handle: text('handle').notNull().unique(),
  payoutAddress: text('payout_address').notNull(),
  abuseContact: text('abuse_contact').notNull(),
  acceptedTermsVersion: text('accepted_terms_version').notNull(),
  createdAt: at('created_at').notNull(),
  /** Set while the operator has suspended the creator: no push, publish or sign-in; listings suspended. */
  suspendedAt: at('suspended_at'),
  suspensionReason: text('suspension_reason'),
});

/** A requested change of a creator field; it is in force from `effective_at` unless cancelled first. */
export const creatorChanges = pgTable(
  'creator_changes',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    creatorId: uuid('creator_id')
      .notNull()
      .references(() => creators.id),
    field: text('field', { enum: ['payout_address', 'abuse_contact'] }).notNull(),
    value: text('value').notNull(),
    requestedAt: at('requested_at').notNull(),
    effectiveAt: at('effective_at').notNull(),
    cancelledAt: at('cancelled_at'),
  },
  (table) => [index('creator_changes_creator_field').on(table.creatorId, table.field, table.effectiveAt)],
);

/**
 * Every payout address a creator has registered or requested stays bound to that creator, so an
 * address names at most one creator (key rotation and web sign-in identify a creator by it).
 */
export const payoutAddressClaims = pgTable('payout_address_claims', {
  address: text('address').primaryKey(),
  creatorId: uuid('creator_id')
    .notNull()
    .references(() => creators.id),
  claimedAt: at('claimed_at').notNull(),
});

/** Agent keys and web session keys; only the SHA-256 of a key is kept. */
export const apiKeys = pgTable(
  'api_keys',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    creatorId: uuid('creator_id')
      .notNull()
      .references(() => creators.id),
    kind: text('kind', { enum: ['agent', 'session'] }).notNull(),
    keyHash: text('key_hash').notNull().unique(),
    scopes: text('scopes').array().notNull(),
    createdAt: at('created_at').notNull(),
    /** Session keys only. */
    expiresAt: at('expires_at'),
    revokedAt: at('revoked_at'),
  },
  (table) => [index('api_keys_creator').on(table.creatorId)],
);

/** Wallet challenges: the exact message handed out, bound to one purpose and address, used once. */
export const challenges = pgTable(
  'challenges',
  {
    nonce: text('nonce').primaryKey(),
    purpose: text('purpose', {
      enum: ['address_proof', 'step_up', 'rotate_key', 'wallet_ownership'],
    }).notNull(),
    address: text('address').notNull(),
    newPayoutAddress: text('new_payout_address'),
    message: text('message').notNull(),
    issuedAt: at('issued_at').notNull(),
    expiresAt: at('expires_at').notNull(),
    usedAt: at('used_at'),
  },
  (table) => [index('challenges_expires_at').on(table.expiresAt)],
);

/**
 * Replays of `POST /api/creators` by `Idempotency-Key`. The key is stored hashed and the response
 * (which holds an API key) encrypted with a key derived from the Idempotency-Key itself, so the
 * table alone reveals no credential.
 */
export const idempotencyRecords = pgTable('idempotency_records', {
  keyHash: text('key_hash').primaryKey(),
  requestHash: text('request_hash').notNull(),
  statusCode: integer('status_code').notNull(),
  responseSealed: text('response_sealed').notNull(),
  createdAt: at('created_at').notNull(),
  expiresAt: at('expires_at').notNull(),
});

/** Messages to people (e-mail), written in the transaction that causes them, delivered after commit. */
export const outboxMessages = pgTable(
  'outbox_messages',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    kind: text('kind').notNull(),
    creatorId: uuid('creator_id').references(() => creators.id),
    recipient: text('recipient').notNull(),
    subject: text('subject').notNull(),
    body: text('body').notNull(),
    createdAt: at('created_at').notNull(),
    /** `pending`, `sending`, then `sent` (SMTP accepted it), `logged` (no SMTP configured) or `failed`. */
    status: text('status', { enum: ['pending', 'sending', 'sent', 'logged', 'failed'] })
      .notNull()
      .default('pending'),
    attempts: integer('attempts').notNull().default(0),
    lastAttemptAt: at('last_attempt_at'),
    lastError: text('last_error'),
    deliveredAt: at('delivered_at'),
  },
  (table) => [index('outbox_messages_status').on(table.status)],
);
