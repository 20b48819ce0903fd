import { and, count, desc, eq, inArray, isNull, lt, ne, or, sql } from 'drizzle-orm';
import type { Db } from '../db/connect.js';
import { deployKeys, listings } from '../db/schema/index.js';

export type ListingRow = typeof listings.$inferSelect;
export type DeployKeyRow = typeof deployKeys.$inferSelect;
export type ListingStatus = ListingRow['status'];

/** The new listing, or undefined when the owner already has that slug (also concurrently). */
export async function insertListing(
  db: Db,
  row: typeof listings.$inferInsert,
): Promise<ListingRow | undefined> {
  const [inserted] = await db.insert(listings).values(row).onConflictDoNothing().returning();
  return inserted;
}

export async function findListingById(db: Db, id: string): Promise<ListingRow | undefined> {
  const [row] = await db.select().from(listings).where(eq(listings.id, id));
  return row;
}

/** The names of the listings with these ids (any status), for pages that hold listing ids. */
export async function findListingNames(db: Db, ids: string[]) {
  if (ids.length === 0) return [];
  return db
    .select({ id: listings.id, owner: listings.owner, slug: listings.slug })
    .from(listings)
    .where(inArray(listings.id, ids));
}

/** Reads the listing and holds its row lock until the caller's transaction ends. */
export async function lockListing(db: Db, id: string): Promise<ListingRow | undefined> {
  const [row] = await db.select().from(listings).where(eq(listings.id, id)).for('update');
  return row;
}

export async function findListingByOwnerSlug(
  db: Db,
  owner: string,
  slug: string,
): Promise<ListingRow | undefined> {
  const [row] = await db
    .select()
    .from(listings)
    .where(and(eq(listings.owner, owner), eq(listings.slug, slug)));
  return row;
}

/** The listing (not retired) a GitHub repository backs, if any. */
export async function findLiveListingOfGitHubRepo(db: Db, repoId: number): Promise<ListingRow | undefined> {
  const [row] = await db
    .select()
    .from(listings)
    .where(and(eq(listings.githubRepoId, repoId), ne(listings.status, 'retired')));
  return row;
}

/** The listings (not retired) these GitHub repositories back: at most one each. */
export function liveListingsOfGitHubRepos(
  db: Db,
  repoIds: number[],
): Promise<Array<{ id: string; creatorId: string; githubRepoId: number | null }>> {
  if (repoIds.length === 0) return Promise.resolve([]);
  return db
    .select({ id: listings.id, creatorId: listings.creatorId, githubRepoId: listings.githubRepoId })
    .from(listings)
    .where(and(inArray(listings.githubRepoId, repoIds), ne(listings.status, 'retired')));
}

/** Listings not retired behind a GitHub repository, or behind any repository of an installation. */
export function liveGitHubListings(
  db: Db,
  where: { repoId: number } | { installationId: number },
): Promise<ListingRow[]> {
  return db
    .select()
    .from(listings)
    .where(
      and(
        'repoId' in where
          ? eq(listings.githubRepoId, where.repoId)
          : eq(listings.githubInstallationId, where.installationId),
        ne(listings.status, 'retired'),
      ),
    );
}

/** Binds the listings to the installation; returns the ids of those bound to another one before. */
export async function setGitHubInstallation(
  db: Db,
  ids: string[],
  installationId: number,
): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .update(listings)
    .set({ githubInstallationId: installationId })
    .where(and(inArray(listings.id, ids), ne(listings.githubInstallationId, installationId)))
    .returning({ id: listings.id });
  return rows.map((row) => row.id);
}

/**
 * Moves those of the listings that are in another source state to `state`, with `reason`; returns
 * the ids moved. Decided row by row in the update, so two processes marking the same listing at
 * once move it once.
 */
export async function setSourceState(
  db: Db,
  ids: string[],
  state: ListingRow['sourceState'],
  reason: string | null,
  at: Date,
): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .update(listings)
    .set({ sourceState: state, sourceStateReason: reason, sourceStateAt: at })
    .where(and(inArray(listings.id, ids), ne(listings.sourceState, state)))
    .returning({ id: listings.id });
  return rows.map((row) => row.id);
}

/** Replaces the reason of those of the listings in `state` already (the state stays as it is); returns their ids. */
export async function setSourceReason(
  db: Db,
  ids: string[],
  state: ListingRow['sourceState'],
  reason: string | null,
): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .update(listings)
    .set({ sourceStateReason: reason })
    .where(
      and(
        inArray(listings.id, ids),
        eq(listings.sourceState, state),
        sql`${listings.sourceStateReason} is distinct from ${reason}`,
      ),
    )
    .returning({ id: listings.id });
  return rows.map((row) => row.id);
}

/** Each listing's source state and reason as recorded now. */
export async function sourceStatesOf(db: Db, ids: string[]) {
  if (ids.length === 0) return [];
  return db
    .select({ id: listings.id, state: listings.sourceState, reason: listings.sourceStateReason })
    .from(listings)
    .where(inArray(listings.id, ids));
}

export async function countDrafts(db: Db, creatorId: string): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(listings)
    .where(and(eq(listings.creatorId, creatorId), eq(listings.status, 'draft')));
  return row?.n ?? 0;
}

export interface ListingPosition {
  createdAt: Date;
  id: string;
}

/** The creator's listings, newest first, after `before` (exclusive). */
export async function listListings(
  db: Db,
  creatorId: string,
  limit: number,
  before?: ListingPosition,
): Promise<ListingRow[]> {
  const after = before
    ? or(
        lt(listings.createdAt, before.createdAt),
        and(eq(listings.createdAt, before.createdAt), lt(listings.id, before.id)),
      )
    : undefined;
  return db
    .select()
    .from(listings)
    .where(and(eq(listings.creatorId, creatorId), after))
    .orderBy(desc(listings.createdAt), desc(listings.id))
    .limit(limit);
}

/**
 * Applies `changes` unless the listing is retired or in another state than `from` (when given);
 * undefined when the condition did not hold, so callers re-read and answer the current state.
 */
export async function updateListing(
  db: Db,
  id: string,
  changes: Partial<typeof listings.$inferInsert>,
  from: ListingStatus[] = ['draft', 'published'],
): Promise<ListingRow | undefined> {
  const [row] = await db
    .update(listings)
    .set(changes)
    .where(and(eq(listings.id, id), inArray(listings.status, from)))
    .returning();
  return row;
}

export async function insertDeployKey(db: Db, row: typeof deployKeys.$inferInsert): Promise<DeployKeyRow> {
  const [inserted] = await db.insert(deployKeys).values(row).returning();
  return inserted!;
}

export async function revokeDeployKeys(db: Db, listingId: string, at: Date): Promise<void> {
  await db
    .update(deployKeys)
    .set({ revokedAt: at })
    .where(and(eq(deployKeys.listingId, listingId), isNull(deployKeys.revokedAt)));
}

export async function liveDeployKey(db: Db, listingId: string): Promise<DeployKeyRow | undefined> {
  const [row] = await db
    .select()
    .from(deployKeys)
    .where(and(eq(deployKeys.listingId, listingId), isNull(deployKeys.revokedAt)));
  return row;
}

/** The live deploy key with this fingerprint on the listing `owner/slug`, with the listing's state. */
export async function findDeployKeyForRepo(
  db: Db,
  fingerprint: string,
  owner: string,
  slug: string,
): Promise<{ key: DeployKeyRow; listing: ListingRow } | undefined> {
  const [row] = await db
    .select({ key: deployKeys, listing: listings })
    .from(deployKeys)
    .innerJoin(listings, eq(listings.id, deployKeys.listingId))
    .where(
      and(
        eq(deployKeys.fingerprint, fingerprint),
        isNull(deployKeys.revokedAt),
        eq(listings.owner, owner),
        eq(listings.slug, slug),
      ),
    );
  return row;
}

/** Whether any live deploy key has this fingerprint (the SSH server's authentication step). */
export async function isLiveDeployKey(db: Db, fingerprint: string): Promise<boolean> {
  const [row] = await db
    .select({ id: deployKeys.id })
    .from(deployKeys)
    .where(and(eq(deployKeys.fingerprint, fingerprint), isNull(deployKeys.revokedAt)))
    .limit(1);
  return row !== undefined;
}

/** Suspends the listing unless it is suspended already; true when it changed. */
export async function suspendListingRow(
  db: Db,
  listingId: string,
  suspension: { at: Date; reason: string; by: 'listing' | 'creator' },
): Promise<boolean> {
  const rows = await db
    .update(listings)
    .set({ suspendedAt: suspension.at, suspensionReason: suspension.reason, suspendedBy: suspension.by })
    .where(and(eq(listings.id, listingId), isNull(listings.suspendedAt)))
    .returning({ id: listings.id });
  return rows.length > 0;
}

/** Lifts a listing's suspension set by `by`; true when it changed. */
export async function unsuspendListingRow(
  db: Db,
  listingId: string,
  by: 'listing' | 'creator',
): Promise<boolean> {
  const rows = await db
    .update(listings)
    .set({ suspendedAt: null, suspensionReason: null, suspendedBy: null })
    .where(and(eq(listings.id, listingId), eq(listings.suspendedBy, by)))
    .returning({ id: listings.id });
  return rows.length > 0;
}

export function creatorListingNames(db: Db, creatorId: string) {
  return db
    .select({ id: listings.id, owner: listings.owner, slug: listings.slug })
    .from(listings)
    .where(eq(listings.creatorId, creatorId));
}
