import { and, eq, gt, isNull, or } from 'drizzle-orm';
import type { Db } from '../db/connect.js';
import { apiKeys, creators } from '../db/schema/index.js';

export type ApiKeyRow = typeof apiKeys.$inferSelect;

export async function insertApiKey(db: Db, row: typeof apiKeys.$inferInsert): Promise<ApiKeyRow> {
  const [inserted] = await db.insert(apiKeys).values(row).returning();
  return inserted!;
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
    .where(
      and(
        eq(apiKeys.keyHash, keyHash),
        isNull(apiKeys.revokedAt),
        or(isNull(apiKeys.expiresAt), gt(apiKeys.expiresAt, at)),
      ),
    );
  return row;
}

export async function revokeKeysOfKind(db: Db, creatorId: string, kind: ApiKeyRow['kind'], at: Date) {
  await db
    .update(apiKeys)
    .set({ revokedAt: at })
    .where(and(eq(apiKeys.creatorId, creatorId), eq(apiKeys.kind, kind), isNull(apiKeys.revokedAt)));
}

export async function revokeKey(db: Db, keyId: string, at: Date): Promise<void> {
  await db
    .update(apiKeys)
    .set({ revokedAt: at })
    .where(and(eq(apiKeys.id, keyId), isNull(apiKeys.revokedAt)));
}
