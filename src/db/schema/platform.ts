import { jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/** Operator switches that every API process must see, such as `paused`. */
export const platformSettings = pgTable('platform_settings', {
  key: text('key').primaryKey(),
  value: jsonb('value').notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
});
