import { and, eq, lte } from 'drizzle-orm';
import type { Db } from '../db/connect.js';
import { idempotencyRecords } from '../db/schema/index.js';

export type IdempotencyRow = typeof idempotencyRecords.$inferSelect;

export async function findIdempotencyRecord(db: Db, keyHash: string): Promise<IdempotencyRow | undefined> {
  const [row] = await db.select().from(idempotencyRecords).where(eq(idempotencyRecords.keyHash, keyHash));
  return row;
}

/** False when a record with this key exists already (also one a concurrent transaction just wrote). */
export async function insertIdempotencyRecord(db: Db, row: IdempotencyRow): Promise<boolean> {
  const inserted = await db
    .insert(idempotencyRecords)
    .values(row)
    .onConflictDoNothing()
    .returning({ keyHash: idempotencyRecords.keyHash });
  return inserted.length === 1;
}

export async function deleteExpiredIdempotencyRecord(db: Db, keyHash: string, at: Date): Promise<void> {
  await db
    .delete(idempotencyRecords)
    .where(and(eq(idempotencyRecords.keyHash, keyHash), lte(idempotencyRecords.expiresAt, at)));
}

export async function deleteIdempotencyRecordsExpiredBy(db: Db, at: Date): Promise<void> {
  await db.delete(idempotencyRecords).where(lte(idempotencyRecords.expiresAt, at));
}
