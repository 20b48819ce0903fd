import type { Config } from '../../config.js';
import type { Db } from '../../db/connect.js';
import { DEFAULT_TREE_LIMITS, type TreeLimits, walkTree } from '../../git/tree.js';
import { AppError, isAppError } from '../../platform/errors.js';
import type { PushAllowance } from '../pre-receive.js';
import { creatorHoldsArtifact, cutsClaimedSince, storedBytesOf } from '../store.js';

/**
 * The limits a release must stay within, each refused with the spec's error before work is done:
 * the tree (files, bytes, depth), the releases one listing may cut per UTC day, and the bytes of
 * zips one creator may store. The last two are decided in the database with the creator's row
 * locked (see `claimCut` and the cut's snapshot), so concurrent pushes and syncs cannot pass them
 * together; the pre-receive hook applies the same numbers earlier, so a push learns at once.
 */

const DAY_MS = 24 * 60 * 60 * 1000;

/** SPEC.md's 200 MB (MiB here) and 20,000 files, and the configured depth. */
export function treeLimits(config: Config): TreeLimits {
  return { ...DEFAULT_TREE_LIMITS, maxDepth: config.releases.treeMaxDepth };
}

/** `413 repo_too_large` when the commit's tree passes a limit (the walk stops there). */
export async function assertWithinLimits(config: Config, repoPath: string, commit: string): Promise<void> {
  await walkTree(repoPath, commit, treeLimits(config));
}

/** A refusal that depends only on what was pushed and on the limits: retrying cannot change it. */
export function isRefusal(error: unknown): error is AppError {
  return isAppError(error) && error.code === 'repo_too_large';
}

/** Releases per day are counted in fixed UTC days, like every other rate limit (SPEC.md: fixed windows). */
function utcDay(at: Date): { start: Date; end: Date } {
  const start = new Date(Math.floor(at.getTime() / DAY_MS) * DAY_MS);
  return { start, end: new Date(start.getTime() + DAY_MS) };
}

interface ClaimingListing {
  id: string;
  creatorId: string;
  owner: string;
  slug: string;
}

/**
 * Refuses a new claim past the listing's releases for today (`429 rate_limited`, retry after the
 * UTC day ends) or once the creator's stored zips reach their limit (`413 repo_too_large`). Run it
 * in the claiming transaction, after `lockCreator`.
 */
export async function assertClaimAllowed(
  db: Db,
  config: Config,
  listing: ClaimingListing,
  at: Date,
): Promise<void> {
  const limits = config.releases;
  const day = utcDay(at);
  const claimed = await cutsClaimedSince(db, listing.id, day.start);
  if (claimed >= limits.perListingPerDay) {
    throw new AppError('rate_limited', {
      message: `${listing.owner}/${listing.slug} has cut ${claimed} releases today; at most ${limits.perListingPerDay} per UTC day. Try again after ${day.end.toISOString()}`,
      retryAfterSeconds: Math.max(1, Math.ceil((day.end.getTime() - at.getTime()) / 1000)),
      details: {
        limit: 'releases_per_day',
        max_per_day: limits.perListingPerDay,
        resets_at: day.end.toISOString(),
      },
    });
  }
  const stored = await storedBytesOf(db, listing.creatorId);
  if (stored >= limits.creatorStorageBytes) throw storageFull(stored, limits.creatorStorageBytes);
}

/**
 * Refuses a zip that would take the creator's stored bytes past the limit. A zip one of their
 * releases holds already costs nothing. Run it after `lockCreator`, in the transaction that
 * records the release.
 */
export async function assertArtifactFits(
  db: Db,
  config: Config,
  creatorId: string,
  artifact: { sha256: string; sizeBytes: number },
): Promise<void> {
  if (await creatorHoldsArtifact(db, creatorId, artifact.sha256)) return;
  const stored = await storedBytesOf(db, creatorId);
  if (stored + artifact.sizeBytes > config.releases.creatorStorageBytes) {
    throw storageFull(stored, config.releases.creatorStorageBytes, artifact.sizeBytes);
  }
}

function storageFull(stored: number, max: number, adding?: number): AppError {
  return new AppError('repo_too_large', {
    message:
      adding === undefined
        ? `Your releases store ${stored} bytes of zips; the limit per creator is ${max} bytes, so no new release can be cut`
        : `This release's zip of ${adding} bytes would take your stored zips from ${stored} past the limit of ${max} bytes per creator`,
    details: { limit: 'creator_storage', stored_bytes: stored, max_bytes: max },
  });
}

/** What a push to the listing may still add, for the pre-receive hook (advisory: claims decide). */
export async function pushAllowance(
  db: Db,
  config: Config,
  listing: ClaimingListing,
  at: Date,
): Promise<PushAllowance> {
  const limits = config.releases;
  const day = utcDay(at);
  const [claimed, stored] = await Promise.all([
    cutsClaimedSince(db, listing.id, day.start),
    storedBytesOf(db, listing.creatorId),
  ]);
  return {
    tagsPerPush: limits.tagsPerPush,
    releasesLeftToday: Math.max(0, limits.perListingPerDay - claimed),
    releasesPerDay: limits.perListingPerDay,
    dayEndsAt: day.end.toISOString(),
    storedBytes: stored,
    maxStoredBytes: limits.creatorStorageBytes,
  };
}
