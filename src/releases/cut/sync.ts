import type { AppContext } from '../../context.js';
import { assertListingNotSuspended, type Listing, liveOwnedListing } from '../../listings/service.js';
import { AppError } from '../../platform/errors.js';
import { parseVersion, tagOf, versionOfTag } from '../../platform/versions.js';
import { cutVersions, type ReleaseCutRow } from '../store.js';
import { requestCut, uncutTags } from './claims.js';
import { assertClaimAllowed, isRefusal } from './limits.js';
import { type CutSource, cutSource } from './sources.js';

export interface SyncInput {
  ref?: string;
  version?: string;
}

/**
 * `POST /api/listings/{id}/sync`: decides which commit becomes which version, checks the limits,
 * claims the version and queues the cut (the same cut a pushed tag gets). Everything the caller
 * can get wrong is answered here, before the `202`: a tree over the limits is `413 repo_too_large`
 * and claims nothing (no release is recorded, unlike a pushed tag, whose version is taken for good),
 * as is a creator whose stored zips are at their limit; a listing past its releases for the day
 * is `429 rate_limited`.
 *
 * - no body: the newest `vX.Y.Z` tag not cut yet;
 * - `version` alone: the existing tag `v<version>`;
 * - `ref` (a branch, tag or commit): its release tag gives the version; an untagged ref needs
 *   `version`, and the service then creates the tag `v<version>` at that commit, so tags stay
 *   the one record of what each version is.
 */
export async function syncListing(
  ctx: AppContext,
  creatorId: string,
  listingId: string,
  input: SyncInput,
): Promise<{ cut: ReleaseCutRow; owner: string; slug: string }> {
  const listing = await liveOwnedListing(ctx.database.db, creatorId, listingId);
  assertListingNotSuspended(listing);
  const source = await cutSource(ctx, listing);
  const target = await resolveTarget(ctx, listing, source, input);
  if ((await cutVersions(ctx.database.db, listing.id)).has(target.version))
    throw versionExists(target.version);
  // Checked again, under the creator's lock, when the version is claimed: this spares the walk and
  // the tag of a sync that would be refused.
  await assertClaimAllowed(ctx.database.db, ctx.config, listing, ctx.clock.now());
  await source.assertWithinLimits(target.commit).catch((error: unknown) => {
    throw isRefusal(error) ? tooLargeToCut(error, target.version, input) : error;
  });
  if (!target.tagExists && !(await source.createTag(tagOf(target.version), target.commit))) {
    // Someone pushed that tag meanwhile: it is theirs to cut.
    throw versionExists(target.version);
  }
  const cut = await requestCut(ctx, listing, {
    version: target.version,
    tag: tagOf(target.version),
    commitSha: target.commit,
    trigger: 'sync',
  });
  if (!cut) throw versionExists(target.version);
  return { cut, owner: listing.owner, slug: listing.slug };
}

interface Target {
  version: string;
  commit: string;
  tagExists: boolean;
}

async function resolveTarget(
  ctx: AppContext,
  listing: Listing,
  source: CutSource,
  input: SyncInput,
): Promise<Target> {
  if (input.version !== undefined && !parseVersion(input.version)) {
    throw AppError.invalid([{ field: 'version', reason: 'expected X.Y.Z, for example 1.2.0' }]);
  }
  if (input.ref === undefined && input.version === undefined) {
    const tags = await source.tags();
    const pending = await uncutTags(ctx, listing, tags);
    const newest = pending.at(-1);
    if (newest) return { version: newest.version, commit: newest.commit, tagExists: true };
    const anyTag = tags.some((tag) => versionOfTag(tag.name));
    if (anyTag) {
      throw new AppError('version_exists', {
        message: 'Every vX.Y.Z tag is cut already; push a new tag, or give ref and version',
      });
    }
    throw AppError.invalid(
      [{ field: 'ref', reason: 'the repository has no vX.Y.Z tag; push one, or give ref and version' }],
      'Nothing to cut',
    );
  }
  if (input.ref === undefined) {
    const tag = (await source.tags()).find((candidate) => candidate.name === tagOf(input.version!));
    if (!tag) {
      throw AppError.invalid([
        { field: 'version', reason: `no tag ${tagOf(input.version!)}; give the ref to cut as well` },
      ]);
    }
    return { version: input.version!, commit: tag.commit, tagExists: true };
  }
  const commit = await source.resolveCommit(input.ref);
  if (!commit) throw AppError.invalid([{ field: 'ref', reason: 'no branch, tag or commit by that name' }]);
  const releaseTags = (await source.tags())
    .map((tag) => ({ ...tag, version: versionOfTag(tag.name) }))
    .filter((tag) => tag.version !== undefined);
  const named = releaseTags.find((tag) => tag.name === input.ref || `refs/tags/${tag.name}` === input.ref);
  const atCommit = named ? [named] : releaseTags.filter((tag) => tag.commit === commit);
  if (input.version === undefined) {
    if (atCommit.length === 0) {
      throw AppError.invalid([{ field: 'version', reason: 'required: the ref carries no vX.Y.Z tag' }]);
    }
    if (atCommit.length > 1) {
      throw AppError.invalid([{ field: 'version', reason: 'required: the ref carries several vX.Y.Z tags' }]);
    }
    return { version: atCommit[0]!.version!, commit, tagExists: true };
  }
  const existing = releaseTags.find((tag) => tag.version === input.version);
  if (existing && existing.commit !== commit) throw versionExists(input.version);
  if (named && named.version !== input.version) {
    throw AppError.invalid([{ field: 'version', reason: `the ref is the tag ${named.name}` }]);
  }
  return { version: input.version, commit, tagExists: existing !== undefined };
}

/**
 * A tree past a limit, named by its version. Nothing is claimed, so a body-less sync picks the same
 * newest tag again: the answer says which it is and how to cut another.
 */
function tooLargeToCut(error: AppError, version: string, input: SyncInput): AppError {
  const another =
    input.ref === undefined && input.version === undefined
      ? ' It is the newest vX.Y.Z tag not cut, which a sync without a body always picks: give "version" (or "ref") to cut another tag, or tag a trimmed tree'
      : '';
  return new AppError('repo_too_large', {
    message: `${tagOf(version)} cannot be cut: ${error.message.charAt(0).toLowerCase()}${error.message.slice(1)}.${another}`,
    details: { ...(error.details as Record<string, unknown>), version },
  });
}

function versionExists(version: string): AppError {
  return new AppError('version_exists', {
    message: `Version ${version} exists already; tags are immutable, cut a new version`,
  });
}
