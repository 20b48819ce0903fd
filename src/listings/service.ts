import { z } from 'zod';
import type { AppContext } from '../context.js';
import type { Db } from '../db/connect.js';
import { parseDeployKey } from '../git/ssh-keys.js';
import type { RepoRef } from '../github/client.js';
import { assertCreatorNotSuspended, lockCreator, suspensionError } from '../identity/creators.js';
import { decodeCursor, encodeCursor } from '../platform/cursor.js';
import { AppError } from '../platform/errors.js';
import { logEvent } from '../platform/events.js';
import { CLAIM_FILE, claimNames, noAccess, readClaimFile } from './github-claim.js';
import {
  countDrafts,
  creatorListingNames,
  findListingById,
  findListingByOwnerSlug,
  findListingNames,
  findLiveListingOfGitHubRepo,
  insertDeployKey,
  insertListing,
  type ListingRow,
  listListings,
  liveGitHubListings,
  lockListing,
  revokeDeployKeys,
  setGitHubInstallation,
  setSourceReason,
  setSourceState,
  sourceStatesOf,
  suspendListingRow,
  unsuspendListingRow,
  updateListing,
} from './store.js';

/** At most this many `draft` listings per creator (SPEC.md limits). */
export const MAX_UNPUBLISHED = 3;

export type Listing = ListingRow;

export interface ListingOwner {
  id: string;
  handle: string;
}

export interface ListingFields {
  priceMicro?: bigint;
  updatePriceMicro?: bigint;
  description?: string;
  triggerHint?: string;
}

export type CreateListingInput =
  | ({ source: 'hosted'; slug: string; sshPublicKey: string } & ListingFields)
  | ({ source: 'github'; slug: string; installationId: number; repo: RepoRef } & ListingFields);

/**
 * Creates a draft listing. Hosted: the bare repository is provisioned and the key added as its
 * deploy key in the same transaction, so a failure leaves no listing without a repository.
 * GitHub (Rail A): the App installation must reach the repository and the repository must be
 * private; GitHub is asked before the creator's row is locked, and the local mirror the cuts fetch
 * into is provisioned like a hosted repository (no key can push to it).
 */
export async function createListing(
  ctx: AppContext,
  owner: ListingOwner,
  input: CreateListingInput,
): Promise<Listing> {
  const key = input.source === 'hosted' ? parseDeployKey(input.sshPublicKey) : undefined;
  const github =
    input.source === 'github'
      ? await claimedRepo(ctx, owner.handle, input.installationId, input.repo)
      : undefined;
  const at = ctx.clock.now();
  return ctx.database.db.transaction(async (tx) => {
    await lockCreator(tx, owner.id);
    await assertCreatorNotSuspended(tx, owner.id);
    if ((await countDrafts(tx, owner.id)) >= MAX_UNPUBLISHED) {
      throw new AppError('too_many_unpublished', {
        message: `At most ${MAX_UNPUBLISHED} unpublished listings per creator; publish or retire a draft first`,
      });
    }
    const listing = await insertListing(tx, {
      creatorId: owner.id,
      owner: owner.handle,
      slug: input.slug,
      source: input.source,
      priceMicro: input.priceMicro,
      updatePriceMicro: input.updatePriceMicro,
      description: input.description,
      triggerHint: input.triggerHint,
      createdAt: at,
      ...(github && {
        githubInstallationId: github.installationId,
        githubRepoId: github.repo.id,
        githubRepo: github.repo.fullName,
      }),
    });
    if (!listing) {
      if (github && (await findLiveListingOfGitHubRepo(tx, github.repo.id))) {
        throw AppError.invalid([
          {
            field: 'repo',
            reason: `${github.repo.fullName} already backs a live listing; one repository, one listing`,
          },
        ]);
      }
      throw AppError.invalid([{ field: 'slug', reason: 'you already have a listing with this slug' }]);
    }
    if (key) await insertDeployKey(tx, { listingId: listing.id, ...key, createdAt: at });
    await ctx.repositories.run('repos.provision', { owner: listing.owner, slug: listing.slug });
    return listing;
  });
}

/**
 * The repository, when the installation reaches it, it is private, and its default branch holds
 * the claim file naming the caller's handle (github-claim.ts). The answer is the same 404 whether
 * the repository is out of reach or does not name the caller, so an id reveals nothing about
 * repositories that are not yours.
 */
async function claimedRepo(ctx: AppContext, handle: string, installationId: number, ref: RepoRef) {
  if (!ctx.github) {
    throw AppError.invalid(
      [{ field: 'source', reason: 'github (Rail A) is not configured on this server; use source "hosted"' }],
      'GitHub-backed listings need a GitHub App, which this server has not configured; create a hosted listing and push to it over SSH',
    );
  }
  const repo = await ctx.github.repo(installationId, ref).catch(noAccess);
  const claim = repo && (await readClaimFile(ctx.github, installationId, repo).catch(noAccess));
  if (!repo || !claimNames(claim, handle)) {
    throw new AppError('not_found', {
      message: `The GitHub App installation does not reach that repository, or its default branch has no ${CLAIM_FILE} file naming your handle (${handle}) on a line of its own; install the App on the repository and commit that file`,
    });
  }
  if (!repo.private) {
    throw new AppError('public_repo', {
      message: `${repo.fullName} is public; only private repositories can be listed`,
    });
  }
  return { installationId, repo };
}

/** The caller's listing; `404` for unknown ids and other creators' alike, so ids reveal nothing. */
export async function ownedListing(db: Db, creatorId: string, id: string): Promise<Listing> {
  const listing = await findListingById(db, id);
  if (!listing || listing.creatorId !== creatorId)
    throw new AppError('not_found', { message: 'No such listing' });
  return listing;
}

/** Like `ownedListing`, and `410 retired` once retired: every change to a retired listing is refused. */
export async function liveOwnedListing(db: Db, creatorId: string, id: string): Promise<Listing> {
  const listing = await ownedListing(db, creatorId, id);
  if (listing.status === 'retired') throw retiredError();
  return listing;
}

/**
 * `403 suspended` for a listing the operator suspended (itself or its creator): its creator may
 * not publish it or cut releases of it while that lasts.
 */
export function assertListingNotSuspended(
  listing: Pick<Listing, 'suspendedAt' | 'suspensionReason' | 'suspendedBy' | 'owner' | 'slug'>,
): void {
  if (!listing.suspendedAt) return;
  throw suspensionError(
    listing.suspendedBy === 'creator'
      ? `The creator ${listing.owner} is`
      : `${listing.owner}/${listing.slug} is`,
    listing.suspensionReason,
  );
}

/** Sets a draft `published` in the caller's transaction; undefined once it is no longer a draft. */
export function markPublished(db: Db, id: string, at: Date): Promise<Listing | undefined> {
  return updateListing(db, id, { status: 'published', publishedAt: at }, ['draft']);
}

export type SourceState = Listing['sourceState'];

/**
 * Records whether new releases can be cut from the listings' GitHub repository (`ok`, or why not),
 * and tells every process their documents changed. What was cut stays on sale either way.
 *
 * Only a change of state is recorded (with its reason and time) and logged: a listing in `state`
 * already keeps the reason it has, which is the precise one when a webhook set it and a refused call
 * finds the same later. `replaceReason` (the App uninstalled: whatever was wrong before, installing
 * it again is now the way back) replaces the reason within the same state, without a log line.
 * Returns each affected listing's state and reason as recorded now, and whether anything of it
 * changed.
 */
export async function markSourceState(
  ctx: AppContext,
  affected: Listing[],
  state: SourceState,
  reason: string | null,
  options: { replaceReason?: boolean } = {},
): Promise<Array<{ id: string; state: SourceState; reason: string | null; changed: boolean }>> {
  const db = ctx.database.db;
  const ids = affected.map((listing) => listing.id);
  const moved = new Set(await setSourceState(db, ids, state, reason, ctx.clock.now()));
  const reworded = new Set(options.replaceReason ? await setSourceReason(db, ids, state, reason) : []);
  const changed = (id: string) => moved.has(id) || reworded.has(id);
  for (const listing of affected) {
    if (moved.has(listing.id)) {
      ctx.log.info({ listingId: listing.id, state, reason }, 'listing source state changed');
    }
    if (changed(listing.id)) ctx.listingEvents.announce(listing.owner, listing.slug);
  }
  return (await sourceStatesOf(db, ids)).map((row) => ({ ...row, changed: changed(row.id) }));
}

/**
 * Binds the listings to the installation that now reaches their repository, and marks them
 * reachable; true when that changed anything.
 */
export async function rebindInstallation(
  ctx: AppContext,
  affected: Listing[],
  installationId: number,
): Promise<boolean> {
  const rebound = await setGitHubInstallation(
    ctx.database.db,
    affected.map((listing) => listing.id),
    installationId,
  );
  const marked = await markSourceState(ctx, affected, 'ok', null);
  return rebound.length > 0 || marked.some((listing) => listing.changed);
}

export { liveGitHubListings };

export function retiredError(): AppError {
  return new AppError('retired', { message: 'This listing is retired; it can no longer be changed or sold' });
}

const ListCursor = z.strictObject({ t: z.iso.datetime(), id: z.uuid() });

export async function listOwnListings(
  db: Db,
  creatorId: string,
  options: { limit: number; cursor?: string },
): Promise<{ listings: Listing[]; nextCursor: string | null }> {
  const before = options.cursor ? decodeCursor(options.cursor, ListCursor) : undefined;
  const rows = await listListings(
    db,
    creatorId,
    options.limit + 1,
    before && { createdAt: new Date(before.t), id: before.id },
  );
  const page = rows.slice(0, options.limit);
  const last = page.at(-1);
  return {
    listings: page,
    nextCursor:
      rows.length > options.limit && last
        ? encodeCursor({ t: last.createdAt.toISOString(), id: last.id })
        : null,
  };
}

/** Changes prices or self-reported text. A new price applies to purchases quoted after it. */
export async function updateOwnListing(
  ctx: AppContext,
  creatorId: string,
  id: string,
  fields: ListingFields,
): Promise<Listing> {
  await liveOwnedListing(ctx.database.db, creatorId, id);
  const updated = await updateListing(ctx.database.db, id, fields);
  // Retired between the read and the write.
  if (!updated) throw retiredError();
  ctx.listingEvents.announce(updated.owner, updated.slug);
  return updated;
}

/** Retires the listing (terminal). Its repository stays, read-only; its release log stays public. */
export async function retireOwnListing(ctx: AppContext, creatorId: string, id: string): Promise<Listing> {
  const listing = await liveOwnedListing(ctx.database.db, creatorId, id);
  const retired = await updateListing(ctx.database.db, id, { status: 'retired', retiredAt: ctx.clock.now() });
  if (!retired) throw retiredError();
  logEvent(ctx.log, 'listing.retired', { listing_id: id, listing: `${retired.owner}/${retired.slug}` });
  ctx.listingEvents.announce(retired.owner, retired.slug);
  if (listing.source === 'hosted') {
    // Pushes are refused for retired listings by the SSH server (it reads the status); the marker
    // only tells an operator why, so a repository that is missing or unwritable does not undo
    // a retirement already saved.
    await ctx.repositories
      .run('repos.archive', { owner: listing.owner, slug: listing.slug })
      .catch((error: unknown) =>
        ctx.log.warn({ err: error, listing: listing.id }, 'could not mark the retired listing archived'),
      );
  }
  return retired;
}

/** Replaces the hosted listing's deploy key; the old key stops working at once. */
export async function replaceDeployKey(
  ctx: AppContext,
  creatorId: string,
  id: string,
  sshPublicKey: string,
): Promise<Listing> {
  const listing = await liveOwnedListing(ctx.database.db, creatorId, id);
  if (listing.source !== 'hosted') {
    throw AppError.invalid([{ field: 'ssh_public_key', reason: 'only hosted listings have a deploy key' }]);
  }
  const key = parseDeployKey(sshPublicKey);
  const at = ctx.clock.now();
  await ctx.database.db.transaction(async (tx) => {
    // Re-checked inside the transaction so a concurrent retire cannot be undone by a new key.
    const current = await lockListing(tx, id);
    if (current?.status !== 'draft' && current?.status !== 'published') throw retiredError();
    await revokeDeployKeys(tx, id, at);
    await insertDeployKey(tx, { listingId: id, ...key, createdAt: at });
  });
  return listing;
}

/** Any listing by id, for background work that acts on the listing's behalf (release cuts). */
export async function listingById(db: Db, id: string): Promise<Listing | undefined> {
  return findListingById(db, id);
}

/** Any listing by `owner/slug`, drafts included: for the operator's commands and reports. */
export async function listingByName(db: Db, owner: string, slug: string): Promise<Listing | undefined> {
  return findListingByOwnerSlug(db, owner, slug);
}

/** `owner` and `slug` of each listing by id, for other domains' pages (a wallet's entitlements). */
export async function listingNamesById(
  db: Db,
  ids: string[],
): Promise<Map<string, { owner: string; slug: string }>> {
  const rows = await findListingNames(db, [...new Set(ids)]);
  return new Map(rows.map(({ id, owner, slug }) => [id, { owner, slug }]));
}

/**
 * The operator's suspension of one listing (`by: 'listing'`) or of its creator (`'creator'`), in
 * the caller's transaction: true when it changed (a listing already suspended keeps its own).
 */
export function suspendListing(
  db: Db,
  listingId: string,
  suspension: { at: Date; reason: string; by: 'listing' | 'creator' },
): Promise<boolean> {
  return suspendListingRow(db, listingId, suspension);
}

/** Lifts a suspension set `by` the listing's own or its creator's; true when it changed. */
export function unsuspendListing(db: Db, listingId: string, by: 'listing' | 'creator'): Promise<boolean> {
  return unsuspendListingRow(db, listingId, by);
}

/** Every listing of a creator, by name: what a creator's suspension reaches. */
export function listingsOfCreator(db: Db, creatorId: string) {
  return creatorListingNames(db, creatorId);
}
