import { and, desc, eq, gt, isNull, lte } from 'drizzle-orm';
import type { Db } from '../db/connect.js';
import { creatorChanges, creators, payoutAddressClaims } from '../db/schema/index.js';

export type CreatorRow = typeof creators.$inferSelect;
export type ChangeRow = typeof creatorChanges.$inferSelect;
export type ChangeField = ChangeRow['field'];

/** The new creator, or undefined when the handle is taken (also by a concurrent registration). */
export async function insertCreator(
  db: Db,
  row: typeof creators.$inferInsert,
): Promise<CreatorRow | undefined> {
  const [inserted] = await db.insert(creators).values(row).onConflictDoNothing().returning();
  return inserted;
}

/** Locks the creator's row until the transaction ends (see `lockCreator` in creators.ts). */
export async function lockCreator(db: Db, creatorId: string): Promise<void> {
  await db.select({ id: creators.id }).from(creators).where(eq(creators.id, creatorId)).for('update');
}

export async function findCreatorById(db: Db, id: string): Promise<CreatorRow | undefined> {
  const [row] = await db.select().from(creators).where(eq(creators.id, id));
  return row;
}

export async function findCreatorRowByHandle(db: Db, handle: string): Promise<CreatorRow | undefined> {
  const [row] = await db.select().from(creators).where(eq(creators.handle, handle));
  return row;
}

/** Changes that were not cancelled, oldest first. */
export async function listChanges(db: Db, creatorId: string): Promise<ChangeRow[]> {
  return db
    .select()
    .from(creatorChanges)
    .where(and(eq(creatorChanges.creatorId, creatorId), isNull(creatorChanges.cancelledAt)))
    .orderBy(creatorChanges.effectiveAt, creatorChanges.requestedAt);
}

/** The newest change of `field` in force at `at`, if any. */
export async function latestChangeInForce(
  db: Db,
  creatorId: string,
  field: ChangeField,
  at: Date,
): Promise<ChangeRow | undefined> {
  const [row] = await db
    .select()
    .from(creatorChanges)
    .where(
      and(
        eq(creatorChanges.creatorId, creatorId),
        eq(creatorChanges.field, field),
        isNull(creatorChanges.cancelledAt),
        lte(creatorChanges.effectiveAt, at),
      ),
    )
    .orderBy(desc(creatorChanges.effectiveAt), desc(creatorChanges.requestedAt))
    .limit(1);
  return row;
}

export async function insertChange(db: Db, row: typeof creatorChanges.$inferInsert): Promise<void> {
  await db.insert(creatorChanges).values(row);
}

/** Cancels changes of `field` not yet in force at `at`; returns how many. */
export async function cancelPendingChanges(
  db: Db,
  creatorId: string,
  field: ChangeField,
  at: Date,
): Promise<number> {
  const rows = await db
    .update(creatorChanges)
    .set({ cancelledAt: at })
    .where(
      and(
        eq(creatorChanges.creatorId, creatorId),
        eq(creatorChanges.field, field),
        isNull(creatorChanges.cancelledAt),
        gt(creatorChanges.effectiveAt, at),
      ),
    )
    .returning({ id: creatorChanges.id });
  return rows.length;
}

/** The creator an address is bound to, if any. */
export async function findClaim(db: Db, address: string): Promise<string | undefined> {
  const [row] = await db
    .select({ creatorId: payoutAddressClaims.creatorId })
    .from(payoutAddressClaims)
    .where(eq(payoutAddressClaims.address, address.toLowerCase()));
  return row?.creatorId;
}

/** Binds `address` to `creatorId`; false when another creator holds it (also concurrently). */
export async function claimPayoutAddress(
  db: Db,
  address: string,
  creatorId: string,
  at: Date,
): Promise<boolean> {
  await db
    .insert(payoutAddressClaims)
    .values({ address: address.toLowerCase(), creatorId, claimedAt: at })
    .onConflictDoNothing();
  return (await findClaim(db, address)) === creatorId;
}
