import { and, desc, eq, gt, inArray, isNotNull, isNull, lt, lte, or } from 'drizzle-orm';
import type { Db } from '../db/connect.js';
import {
  apiKeys,
  challenges,
  creatorChanges,
  creators,
  idempotencyRecords,
  invites,
  outboxMessages,
  payoutAddressClaims,
} from '../db/schema/index.js';

/** Identity's SQL: every query on the creators, keys, challenges, idempotency, invites and outbox tables. */

// Creators, their scheduled changes and payout-address claims.

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

// API keys: agent keys and web sessions, stored as hashes.

export type ApiKeyRow = typeof apiKeys.$inferSelect;

export async function insertApiKey(db: Db, row: typeof apiKeys.$inferInsert): Promise<ApiKeyRow> {
  const [inserted] = await db.insert(apiKeys).values(row).returning();
  return inserted!;
}

/** Not revoked, and not expired at `at`. */
function live(at: Date) {
  return and(isNull(apiKeys.revokedAt), or(isNull(apiKeys.expiresAt), gt(apiKeys.expiresAt, at)));
}

/** The live key with this hash and its creator: not revoked, not expired at `at`. */
export async function findLiveKey(db: Db, keyHash: string, at: Date) {
  const [row] = await db
    .select({
      keyId: apiKeys.id,
      kind: apiKeys.kind,
      scopes: apiKeys.scopes,
      expiresAt: apiKeys.expiresAt,
      creatorId: creators.id,
      handle: creators.handle,
    })
    .from(apiKeys)
    .innerJoin(creators, eq(creators.id, apiKeys.creatorId))
    .where(and(eq(apiKeys.keyHash, keyHash), live(at)));
  return row;
}

/** Revokes every key of the creator live at `at`; returns the kind of each key revoked. */
export async function revokeLiveKeys(db: Db, creatorId: string, at: Date): Promise<ApiKeyRow['kind'][]> {
  const rows = await db
    .update(apiKeys)
    .set({ revokedAt: at })
    .where(and(eq(apiKeys.creatorId, creatorId), live(at)))
    .returning({ kind: apiKeys.kind });
  return rows.map((row) => row.kind);
}

export async function revokeKey(db: Db, keyId: string, at: Date): Promise<void> {
  await db
    .update(apiKeys)
    .set({ revokedAt: at })
    .where(and(eq(apiKeys.id, keyId), isNull(apiKeys.revokedAt)));
}

// Single-use sign-in challenges.

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

// Recorded responses for Idempotency-Key replays (registration).

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

// Invite codes, stored as hashes.

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

// Messages to creators, written in the transaction that needs them and delivered after it commits.

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

/** Suspends (or, with `null`, reinstates) a creator unless they are so already; true when it changed. */
export async function setCreatorSuspension(
  db: Db,
  creatorId: string,
  suspension: { at: Date; reason: string } | null,
): Promise<boolean> {
  const rows = await db
    .update(creators)
    .set({ suspendedAt: suspension?.at ?? null, suspensionReason: suspension?.reason ?? null })
    .where(
      and(
        eq(creators.id, creatorId),
        suspension ? isNull(creators.suspendedAt) : isNotNull(creators.suspendedAt),
      ),
    )
    .returning({ id: creators.id });
  return rows.length > 0;
}
