import { and, eq, gt, isNull, lt } from 'drizzle-orm';
import type { Db } from '../db/connect.js';
import { challenges } from '../db/schema/index.js';

export type ChallengeRow = typeof challenges.$inferSelect;

export async function insertChallenge(db: Db, row: typeof challenges.$inferInsert): Promise<void> {
  await db.insert(challenges).values(row);
}

export async function findChallenge(db: Db, nonce: string): Promise<ChallengeRow | undefined> {
  const [row] = await db.select().from(challenges).where(eq(challenges.nonce, nonce));
  return row;
}

/** Marks an unused, unexpired challenge used, atomically: of concurrent uses at most one gets true. */
export async function markChallengeUsed(db: Db, nonce: string, at: Date): Promise<boolean> {
  const rows = await db
    .update(challenges)
    .set({ usedAt: at })
    .where(and(eq(challenges.nonce, nonce), isNull(challenges.usedAt), gt(challenges.expiresAt, at)))
    .returning({ nonce: challenges.nonce });
  return rows.length === 1;
}

/** Expired challenges can never be used again, so keeping them only costs space. */
export async function deleteChallengesExpiredBefore(db: Db, before: Date): Promise<void> {
  await db.delete(challenges).where(lt(challenges.expiresAt, before));
}
