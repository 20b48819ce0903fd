import { sql } from 'drizzle-orm';
import { bigserial, index, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { at } from './columns.js';
import { creators } from './identity.js';
import { listings } from './listings.js';

/**
 * Every operator action on a release, a listing, a creator or a report (yank, suspend, their
 * reversal, a report resolved): what, on what, why, when and from which host. Append-only: a
 * trigger (in the migration) refuses UPDATE and DELETE, so not even a bug of ours rewrites it.
 */
export const auditLog = pgTable(
  'audit_log',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    at: at('at').notNull(),
    /** `release.yank`, `release.unyank`, `listing.suspend`, `listing.unsuspend`, `creator.suspend`, … */
    action: text('action').notNull(),
    /** What it was done to, as the operator named it: `owner/slug@1.2.0`, `owner/slug`, `handle`, a report id. */
    subject: text('subject').notNull(),
    reason: text('reason').notNull(),
    /** The host name of the process that carried the action out. */
    host: text('host').notNull(),
  },
  (table) => [index('audit_log_at').on(table.at, table.id)],
);

/**
 * What happened that the people it touches should hear of (`release.yanked`, `listing.suspended`,
 * `report.received`, …), written in the transaction of the change itself, so a notice is never
 * lost nor sent for a change that rolled back. The creator's app shows them; webhook delivery reads
 * them in `id` order. Append-only, as the audit log.
 */
export const domainEvents = pgTable(
  'domain_events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    at: at('at').notNull(),
    type: text('type').notNull(),
    creatorId: uuid('creator_id')
      .notNull()
      .references(() => creators.id),
    listingId: uuid('listing_id').references(() => listings.id),
    /** The event's body as a subscriber receives it. */
    data: jsonb('data').notNull(),
  },
  (table) => [index('domain_events_creator').on(table.creatorId, table.id)],
);

/**
 * A report about a listing, from anyone (no account): what and why. The operator resolves it with
 * a note; the creator is told through a domain event. Only a hash of the reporter's address is
 * kept, enough to see one source flooding.
 */
export const reports = pgTable(
  'reports',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    listingId: uuid('listing_id')
      .notNull()
      .references(() => listings.id),
    version: text('version'),
    category: text('category', { enum: ['malware', 'secret_exposed', 'copyright', 'other'] }).notNull(),
    text: text('text').notNull(),
    createdAt: at('created_at').notNull(),
    resolvedAt: at('resolved_at'),
    resolutionNote: text('resolution_note'),
  },
  (table) => [index('reports_open').on(table.createdAt).where(sql`${table.resolvedAt} is null`)],
);
