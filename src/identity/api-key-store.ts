import { and, eq, gt, isNull, or } from 'drizzle-orm';
import type { Db } from '../db/connect.js';
import { apiKeys, creators } from '../db/schema/index.js';

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
