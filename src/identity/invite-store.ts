import { and, eq, isNull } from 'drizzle-orm';
import type { Db } from '../db/connect.js';
import { invites } from '../db/schema/index.js';

export async function insertInvites(db: Db, codeHashes: string[]): Promise<void> {
  await db.insert(invites).values(codeHashes.map((codeHash) => ({ codeHash })));
}

/** Marks an unused invite used, atomically: of two concurrent uses exactly one gets `true`. */
export async function markInviteUsed(db: Db, codeHash: string, usedBy: string, at: Date): Promise<boolean> {
  const rows = await db
    .update(invites)
    .set({ usedAt: at, usedBy })
    .where(and(eq(invites.codeHash, codeHash), isNull(invites.usedAt)))
    .returning({ id: invites.id });
  return rows.length === 1;
}
