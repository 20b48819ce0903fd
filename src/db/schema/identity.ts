import { pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/** Single-use invite codes for API registration. Only the SHA-256 of a code is kept. */
export const invites = pgTable('invites', {
  id: uuid('id').primaryKey().defaultRandom(),
  codeHash: text('code_hash').notNull().unique(),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  usedAt: timestamp('used_at', { withTimezone: true, mode: 'date' }),
  usedBy: text('used_by'),
});
