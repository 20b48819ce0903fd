import { numeric, timestamp } from 'drizzle-orm/pg-core';

/** Every timestamp is `timestamptz`, read and written as a `Date`. */
export const at = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/** micro-USDC: exact integers, read and written as `bigint`. */
export const micro = (name: string) => numeric(name, { precision: 20, scale: 0, mode: 'bigint' });
