import { and, eq, inArray, lt, or } from 'drizzle-orm';
import type { Db } from '../db/connect.js';
import { outboxMessages } from '../db/schema/index.js';

export type OutboxRow = typeof outboxMessages.$inferSelect;

export async function insertMessage(db: Db, row: typeof outboxMessages.$inferInsert): Promise<string> {
  const [inserted] = await db.insert(outboxMessages).values(row).returning({ id: outboxMessages.id });
  return inserted!.id;
}

/**
 * Takes a message for delivery: pending or failed ones, or ones left `sending` before `staleBefore`
 * by a process that died. Only one deliverer gets it, so a message is not sent twice concurrently.
 */
export async function claimMessage(
  db: Db,
  id: string,
  at: Date,
  staleBefore: Date,
): Promise<OutboxRow | undefined> {
  const [row] = await db
    .update(outboxMessages)
    .set({ status: 'sending', lastAttemptAt: at })
    .where(
      and(
        eq(outboxMessages.id, id),
        or(
          inArray(outboxMessages.status, ['pending', 'failed']),
          and(eq(outboxMessages.status, 'sending'), lt(outboxMessages.lastAttemptAt, staleBefore)),
        ),
      ),
    )
    .returning();
  return row;
}

export async function finishMessage(
  db: Db,
  id: string,
  outcome: { status: 'sent' | 'logged' | 'failed'; attempts: number; error?: string; at: Date },
): Promise<void> {
  await db
    .update(outboxMessages)
    .set({
      status: outcome.status,
      attempts: outcome.attempts,
      lastError: outcome.error ?? null,
      deliveredAt: outcome.status === 'failed' ? null : outcome.at,
    })
    .where(eq(outboxMessages.id, id));
}

/** Messages still to deliver: pending, failed fewer than `maxAttempts` times, or stuck in `sending`. */
export async function listUndelivered(db: Db, maxAttempts: number, staleBefore: Date): Promise<string[]> {
  const rows = await db
    .select({ id: outboxMessages.id })
    .from(outboxMessages)
    .where(
      or(
        eq(outboxMessages.status, 'pending'),
        and(eq(outboxMessages.status, 'failed'), lt(outboxMessages.attempts, maxAttempts)),
        and(eq(outboxMessages.status, 'sending'), lt(outboxMessages.lastAttemptAt, staleBefore)),
      ),
    )
    .orderBy(outboxMessages.createdAt)
    .limit(100);
  return rows.map((row) => row.id);
}
